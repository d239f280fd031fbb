"""The preview is never older than the files unseen: GET /preview says so, a chat naming an
element of an older preview is refused, and POST /preview rebuilds it (issue 24)."""

from __future__ import annotations

from tests.integration.http.conftest import Api, error_code


def test_an_out_of_date_preview_is_said_refuses_elements_and_is_rebuilt(api: Api) -> None:
    me = api.user("preview")
    app = api.app(me, "A page about owls")
    base = f"/api/apps/{app['id']}"
    fresh = api.client.get(f"{base}/preview", headers=me).json()
    assert fresh == {"buildId": None, "upToDate": True, "build": None}  # nothing to show yet

    assert "event: done" in api.chat(me, app["id"], "Make the page")
    built = api.client.get(f"{base}/preview", headers=me).json()
    assert built["upToDate"] and built["buildId"]

    api.platform.workspace.write(app["id"], "index.html", b"<h1>Changed elsewhere</h1>")
    stale = api.client.get(f"{base}/preview", headers=me).json()
    assert stale == {"buildId": built["buildId"], "upToDate": False, "build": None}
    element = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": "Owls"}
    refused = api.client.post(
        f"{base}/chat", headers=me, json={"message": "Rename it", "element": element}
    )
    assert refused.status_code == 409 and error_code(refused) == "preview_out_of_date"
    before = api.platform.memory.head(app["id"])
    assert before.turn == 2  # the turn, and the note on its checks; nothing started since

    held = api.platform.engine.lease.acquire(f"turn:{app['id']}", "a-turn", 30)
    assert held
    busy = api.client.post(f"{base}/preview", headers=me)
    assert busy.status_code == 409 and error_code(busy) == "conflict"
    api.platform.engine.lease.release(f"turn:{app['id']}", "a-turn")

    rebuilt = api.client.post(f"{base}/preview", headers=me).json()
    assert rebuilt["upToDate"] and rebuilt["buildId"] == rebuilt["build"]["id"]
    assert rebuilt["build"]["state"] == "succeeded" and rebuilt["buildId"] != built["buildId"]
    again = api.client.post(f"{base}/preview", headers=me).json()
    assert again == {"buildId": rebuilt["buildId"], "upToDate": True, "build": None}
    with api.client.stream(
        "POST", f"{base}/chat", headers=me, json={"message": "Rename it", "element": element}
    ) as accepted:
        assert accepted.status_code == 200
        assert "event: done" in "".join(accepted.iter_text())
