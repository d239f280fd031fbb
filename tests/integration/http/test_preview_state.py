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
    element = {
        "pagePath": "/",
        "tag": "h1",
        "selector": "h1",
        "text": "Owls",
        "buildId": built["buildId"],
    }
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
    older = api.client.post(
        f"{base}/chat", headers=me, json={"message": "Rename it", "element": element}
    )
    assert older.status_code == 409 and error_code(older) == "preview_out_of_date"
    element["buildId"] = rebuilt["buildId"]
    with api.client.stream(
        "POST", f"{base}/chat", headers=me, json={"message": "Rename it", "element": element}
    ) as accepted:
        assert accepted.status_code == 200
        assert "event: done" in "".join(accepted.iter_text())


def test_an_element_of_an_older_preview_build_is_refused_and_nothing_is_written(api: Api) -> None:
    """An element names the preview build it was picked in: one of any build but the preview
    shown now is refused, even when that preview is up to date (a pick made while a turn
    ran, sent after the turn's new preview), by the chat and the text edit alike."""
    me = api.user("picked")
    app = api.app(me, "A page about herons")
    base = f"/api/apps/{app['id']}"
    assert "event: done" in api.chat(me, app["id"], "Make the page")
    first = api.client.get(f"{base}/preview", headers=me).json()["buildId"]
    assert "event: done" in api.chat(me, app["id"], 'Change the title to "Slow Herons"')
    now = api.client.get(f"{base}/preview", headers=me).json()
    assert now["upToDate"] and now["buildId"] != first
    page = api.platform.workspace.read(app["id"], "index.html")
    head = api.platform.memory.head(app["id"])
    old = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": "Herons", "buildId": first}

    refused = api.client.post(
        f"{base}/chat", headers=me, json={"message": "Make it green", "element": old}
    )
    assert refused.status_code == 409 and error_code(refused) == "preview_out_of_date"
    assert "picked in an older preview; pick it again" in refused.json()["error"]["message"]
    edit = api.client.post(
        f"{base}/edits/text", headers=me, json={"element": old, "newText": "Green Herons"}
    )
    assert edit.status_code == 409 and error_code(edit) == "preview_out_of_date"
    assert api.platform.workspace.read(app["id"], "index.html") == page  # nothing written
    assert api.platform.memory.head(app["id"]) == head  # no turn, no note
    assert api.client.get(f"{base}/preview", headers=me).json()["buildId"] == now["buildId"]

    unpicked = {k: v for k, v in old.items() if k != "buildId"}  # a client of before
    missing = api.client.post(
        f"{base}/chat", headers=me, json={"message": "Make it green", "element": unpicked}
    )
    assert missing.status_code == 422
    forged = api.client.post(
        f"{base}/chat",
        headers=me,
        json={"message": "Make it green", "element": {**old, "buildId": "latest"}},
    )
    assert forged.status_code == 400 and error_code(forged) == "invalid_input"

    current = {**old, "text": "Slow Herons", "buildId": now["buildId"]}
    with api.client.stream(
        "POST", f"{base}/chat", headers=me, json={"message": "Make it green", "element": current}
    ) as accepted:
        assert accepted.status_code == 200
        assert "event: done" in "".join(accepted.iter_text())
    asked = api.client.get(f"{base}/history?limit=5", headers=me).json()["entries"]
    assert next(e["element"] for e in asked if e["role"] == "user") == current
