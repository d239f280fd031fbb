"""/api/apps/{id}/chat, history and context in process (offline model, a single page)."""

from __future__ import annotations

from tests.integration.http.conftest import Api, error_code


def test_a_turn_streams_and_lands_in_history_and_context(api: Api) -> None:
    c, owner = api.client, api.user()
    app = api.app(owner)
    stream = api.chat(owner, app["id"], "A page about newts")
    assert "event: done" in stream and '"status":"succeeded"' in stream
    history = c.get(f"/api/apps/{app['id']}/history", headers=owner).json()
    assert [e["role"] for e in history["entries"]] == ["ai", "user"]  # newest first
    assert history["entries"][1]["content"] == "A page about newts"
    first = c.get(f"/api/apps/{app['id']}/history?limit=1", headers=owner).json()
    assert len(first["entries"]) == 1 and first["nextCursor"]
    context = c.get(f"/api/apps/{app['id']}/context", headers=owner).json()
    assert context["messages"][0]["role"] == "system"
    assert any(m["role"] == "user" for m in context["messages"])
    assert len(context["tokens"]) == len(context["messages"])
    assert context["totalTokens"] >= sum(context["tokens"]) > 0


def test_a_picked_element_is_kept_with_the_message(api: Api) -> None:
    c, owner = api.client, api.user()
    app = api.app(owner)
    assert "event: done" in api.chat(owner, app["id"], "A page about newts")
    shown = c.get(f"/api/apps/{app['id']}/preview", headers=owner).json()["buildId"]
    element = {
        "pagePath": "/index.html",
        "tag": "h1",
        "selector": "h1",
        "text": "Newts",
        "buildId": shown,
    }
    with c.stream(
        "POST",
        f"/api/apps/{app['id']}/chat",
        headers=owner,
        json={"message": "Make it bigger", "element": element},
    ) as stream:
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        "".join(stream.iter_text())
    entries = c.get(f"/api/apps/{app['id']}/history", headers=owner).json()["entries"]
    assert [e["element"] for e in entries if e["role"] == "user"] == [element, None]


def test_refusals(api: Api) -> None:
    c, owner, other = api.client, api.user(), api.user()
    app = api.app(owner)
    chat = f"/api/apps/{app['id']}/chat"
    assert c.post(chat, json={"message": "hi"}).status_code == 401
    assert c.post(chat, headers=other, json={"message": "hi"}).status_code == 404
    assert c.get(chat, headers=owner).status_code == 405  # no GET starts a turn
    blank = c.post(chat, headers=owner, json={"message": "  "})
    assert blank.status_code == 400 and error_code(blank) == "invalid_input"
    long = c.post(
        chat, headers=owner, json={"message": "x" * (api.platform.settings.max_message_chars + 1)}
    )
    assert long.status_code in (400, 413)
    picked = c.post(chat, headers=owner, json={"message": "hi", "element": {"tag": "x" * 41}})
    assert picked.status_code == 422
    for path in ("history", "context"):
        assert c.get(f"/api/apps/{app['id']}/{path}").status_code == 401
        assert c.get(f"/api/apps/{app['id']}/{path}", headers=other).status_code == 404
    assert c.get(f"/api/apps/{app['id']}/history?limit=51", headers=owner).status_code == 422
