"""Changes on a picked element go through tools, survive a restart, and are reported truly."""

from __future__ import annotations

import httpx

from tests.e2e.conftest import Server, chat, create, shown_build
from zerocode.memory.messages import from_openai_list
from zerocode.memory.validation import validate


def title_of(client: httpx.Client, app_id: str) -> str:
    source = client.get(f"/api/apps/{app_id}/files/src/views/HomeView.vue").text
    return source.split("<h1>", 1)[1].split("</h1>", 1)[0]


def test_element_change_then_restart_keeps_the_same_context(
    client: httpx.Client, server: Server
) -> None:
    app = create(client, "A Vue recipe box with a home page", "vue_project")
    first = chat(client, app["id"], app["initPrompt"])
    assert first.done is not None and first.done["status"] == "succeeded"
    title = title_of(client, app["id"])
    element = {"pagePath": "/", "tag": "h1", "selector": "#app h1", "text": title}
    element["buildId"] = shown_build(client, app["id"])
    change = chat(client, app["id"], 'Change this title to "Grandma\'s Recipes"', element)
    assert change.ended == ("succeeded", 2), change.errors
    names = [t["name"] for t in change.results]
    assert names[0] == "read_dir" and "read_file" in names
    assert names[names.index("modify_file") :] == ["modify_file", "retire_check", "add_check"]
    assert all(t["ok"] for t in change.results)
    assert title_of(client, app["id"]) == "Grandma's Recipes"
    history = client.get(f"/api/apps/{app['id']}/history").json()["entries"]
    assert history[0]["role"] == "ai" and "modify_file" in history[0]["content"]
    assert history[1]["element"] == element

    before = client.get(f"/api/apps/{app['id']}/context").json()
    server.restart()
    with httpx.Client(base_url=server.api, timeout=300, headers=dict(client.headers)) as fresh:
        after = fresh.get(f"/api/apps/{app['id']}/context").json()
        assert after == before
        messages = from_openai_list(after["messages"])
        validate(messages)
        calls = [
            c["function"]["name"] for m in after["messages"] for c in m.get("tool_calls") or []
        ]
        assert "write_file" in calls and "modify_file" in calls
        again = chat(
            fresh,
            app["id"],
            'Now call it "Family Recipes"',
            element | {"text": "Grandma's Recipes", "buildId": shown_build(fresh, app["id"])},
        )
        assert again.ended == ("succeeded", 3)
        assert "modify_file" in [t["name"] for t in again.results]
        assert title_of(fresh, app["id"]) == "Family Recipes"


def test_html_element_change_re_emits_the_page(client: httpx.Client) -> None:
    app = create(client, "A page for a bakery called Crumbs", "html")
    chat(client, app["id"], app["initPrompt"])
    page = client.get(f"/api/apps/{app['id']}/files/index.html").text
    title = page.split("<h1>", 1)[1].split("</h1>", 1)[0]
    turn = chat(
        client,
        app["id"],
        'Rename it to "Crumbs & Co"',
        {
            "pagePath": "/",
            "tag": "h1",
            "selector": "h1",
            "text": title,
            "buildId": shown_build(client, app["id"]),
        },
    )
    assert turn.done is not None and turn.done["status"] == "succeeded"
    assert (
        "<h1>Crumbs &amp; Co</h1>" in client.get(f"/api/apps/{app['id']}/files/index.html").text
        or "<h1>Crumbs & Co</h1>" in client.get(f"/api/apps/{app['id']}/files/index.html").text
    )
