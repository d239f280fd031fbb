"""Versions over HTTP: every turn that changes files makes one, diffs between them, and a
restore puts the files back, rebuilds the preview and tells the model (M9), so the next
element edit works on the restored files."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import httpx

from tests.e2e.conftest import Server, chat, create, shown_build, signed_in
from zerocode.memory.messages import from_openai_list
from zerocode.memory.validation import validate


def h1_of(page: str) -> str:
    return page.split("<h1>", 1)[1].split("</h1>", 1)[0]


def vue_title(client: httpx.Client, app_id: str) -> str:
    return h1_of(client.get(f"/api/apps/{app_id}/files/src/views/HomeView.vue").text)


def versions_of(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/apps/{app_id}/versions")
    assert response.status_code == 200, response.text
    return list(response.json()["versions"])


def preview_page(server: Server, client: httpx.Client, app_id: str, path: str = "/") -> str:
    """The preview as a visitor's browser gets it (the sites origin, by its Host name)."""
    url = httpx.URL(client.get(f"/api/apps/{app_id}").json()["previewUrl"])
    response = httpx.get(
        f"http://127.0.0.1:{server.sites_port}{path}", headers={"Host": url.netloc.decode()}
    )
    assert response.status_code == 200, response.text
    return response.text


def last_message(client: httpx.Client, app_id: str) -> dict[str, Any]:
    context = client.get(f"/api/apps/{app_id}/context").json()
    validate(from_openai_list(context["messages"]))
    return dict(context["messages"][-1])


def test_html_versions_diff_restore_and_the_next_element_edit(
    client: httpx.Client, server: Server
) -> None:
    app = create(client, "A page for a bakery called Crumbs", "html")
    app_id = app["id"]
    assert versions_of(client, app_id) == []
    chat(client, app_id, app["initPrompt"])
    first = h1_of(client.get(f"/api/apps/{app_id}/files/index.html").text)
    (v1,) = versions_of(client, app_id)
    assert v1["id"] == "v1" and v1["current"] and v1["kind"] == "turn" and v1["turn"] == 1
    assert v1["summary"] == app["initPrompt"] and v1["files"] == 1 and v1["buildId"]

    element = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": first}
    element["buildId"] = shown_build(client, app_id)
    change = chat(client, app_id, 'Rename it to "Crumbs & Co"', element)
    assert change.done is not None and change.done["status"] == "succeeded"
    v2, old = versions_of(client, app_id)
    assert (v2["id"], v2["current"], old["id"], old["current"]) == ("v2", True, "v1", False)

    diff = client.get(f"/api/apps/{app_id}/versions/v2/diff").json()
    assert diff["version"] == "v2" and diff["against"] == "v1"
    (page,) = diff["files"]
    assert page["path"] == "index.html" and page["status"] == "modified"
    assert f"-    <h1>{first}</h1>" in page["diff"] or f"-<h1>{first}</h1>" in page["diff"]
    assert "Crumbs &amp; Co" in page["diff"] or "Crumbs & Co" in page["diff"]
    assert '<div class="hl">' in page["html"] and "<script" not in page["html"]
    whole = client.get(f"/api/apps/{app_id}/versions/v1/diff").json()
    assert whole["against"] is None and whole["files"][0]["status"] == "added"
    back = client.get(f"/api/apps/{app_id}/versions/v1/diff", params={"against": "v2"}).json()
    assert back["against"] == "v2" and back["files"][0]["status"] == "modified"

    # The code view: the file highlighted, now and as a version had it.
    code = client.get(f"/api/apps/{app_id}/code/index.html").json()
    assert code["language"] == "HTML" and 'class="hl"' in code["html"]
    old_code = client.get(f"/api/apps/{app_id}/code/index.html", params={"version": "v1"})
    assert first in old_code.json()["html"] or first.replace("&", "&amp;") in old_code.text

    restored = client.post(f"/api/apps/{app_id}/versions/v1/restore")
    assert restored.status_code == 200, restored.text
    body = restored.json()
    assert body["changed"] == ["index.html"] and body["build"]["state"] == "succeeded"
    v3 = body["version"]
    assert (v3["id"], v3["kind"], v3["restoredFrom"], v3["current"]) == (
        "v3",
        "restore",
        "v1",
        True,
    )
    assert v3["buildId"] == body["build"]["id"]  # the preview build of the restored files
    assert h1_of(client.get(f"/api/apps/{app_id}/files/index.html").text) == first
    assert f"<h1>{first}</h1>" in preview_page(server, client, app_id)

    # M9: /context ends with the restore note, and stays valid; the display says so too.
    note = last_message(client, app_id)
    assert note["role"] == "user"
    assert note["content"].startswith("[zerocode: the user restored version v1")
    assert "it is now version v3" in note["content"] and "index.html (modified)" in note["content"]
    assert f"<h1>{first}</h1>" in note["content"]  # the html app's code, as it now reads
    newest = client.get(f"/api/apps/{app_id}/history").json()["entries"][0]
    assert newest["role"] == "note" and "Restored v1" in newest["content"]

    # Restoring what is already current changes nothing and makes no version.
    again = client.post(f"/api/apps/{app_id}/versions/v3/restore").json()
    assert again["changed"] == [] and again["version"]["id"] == "v3" and again["build"] is None

    # The next element edit works on the restored page.
    element["buildId"] = shown_build(client, app_id)  # picked in the restored preview
    edit = chat(client, app_id, 'Call it "Bread Bros"', element)
    assert edit.done is not None and edit.done["status"] == "succeeded", edit.errors
    assert h1_of(client.get(f"/api/apps/{app_id}/files/index.html").text) == "Bread Bros"
    assert [v["id"] for v in versions_of(client, app_id)] == ["v4", "v3", "v2", "v1"]
    note = last_message(client, app_id)  # after the answer: what its checks block did
    assert note["role"] == "user" and note["content"].startswith("[zerocode checks:")


def test_vue_restore_then_element_edit_through_tools(client: httpx.Client) -> None:
    app = create(client, "A Vue recipe box with a home page", "vue_project")
    app_id = app["id"]
    chat(client, app_id, app["initPrompt"])
    first = vue_title(client, app_id)
    element = {"pagePath": "/", "tag": "h1", "selector": "#app h1", "text": first}
    element["buildId"] = shown_build(client, app_id)
    changed = chat(client, app_id, 'Change this title to "Grandma\'s Recipes"', element)
    assert changed.ended == ("succeeded", 2)
    assert vue_title(client, app_id) == "Grandma's Recipes"

    restored = client.post(f"/api/apps/{app_id}/versions/v1/restore").json()
    assert restored["changed"] == ["src/views/HomeView.vue"]
    assert restored["build"]["state"] == "succeeded"
    assert vue_title(client, app_id) == first
    note = last_message(client, app_id)
    assert "src/views/HomeView.vue (modified)" in note["content"]
    assert "Read a file again" in note["content"]

    element["buildId"] = shown_build(client, app_id)  # picked in the restored preview
    edit = chat(client, app_id, 'Now call it "Family Recipes"', element)
    assert edit.ended == ("succeeded", 4), edit.errors  # turn 3: the note
    names = [t["name"] for t in edit.results]  # the change, then its acceptance checks
    assert names[names.index("modify_file") + 1 :][-1:] == ["add_check"], names
    assert all(t["ok"] for t in edit.results)
    assert vue_title(client, app_id) == "Family Recipes"
    assert [v["id"] for v in versions_of(client, app_id)] == ["v4", "v3", "v2", "v1"]

    # A deploy build names the version it was made from (what the console offers to restore).
    deploy = client.post(f"/api/apps/{app_id}/deploy").json()
    builds = client.get(f"/api/apps/{app_id}/builds", params={"purpose": "deploy"}).json()
    assert builds["builds"][0]["id"] == deploy["buildId"]
    assert builds["builds"][0]["versionId"] == "v4"


def during_a_slow_turn(
    client: httpx.Client, app_id: str, act: Callable[[], list[httpx.Response]]
) -> tuple[list[str], list[httpx.Response]]:
    """``act``'s answers while a slow turn of the app runs, and the rest of that turn's
    stream (read to its end)."""
    started = threading.Event()
    rest: list[str] = []

    def slow_turn() -> None:
        with client.stream(
            "POST", f"/api/apps/{app_id}/chat", json={"message": "Take your time [[slow]]"}
        ) as response:
            lines = response.iter_lines()
            next(lines)
            started.set()
            rest.extend(lines)

    worker = threading.Thread(target=slow_turn)
    worker.start()
    assert started.wait(30)
    answers = act()
    worker.join(60)
    return rest, answers


def test_restore_during_a_running_turn_is_409_and_changes_nothing(
    client: httpx.Client,
) -> None:
    app = create(client, "A page about kites", "html")
    app_id = app["id"]
    chat(client, app_id, app["initPrompt"])
    chat(client, app_id, 'Change the title to "Kites Two"')
    before = client.get(f"/api/apps/{app_id}/files/index.html").text
    with httpx.Client(base_url=client.base_url, headers=dict(client.headers)) as other:
        rest, (answer,) = during_a_slow_turn(
            client, app_id, lambda: [other.post(f"/api/apps/{app_id}/versions/v1/restore")]
        )
    assert answer.status_code == 409, answer.text
    assert answer.json()["error"]["code"] == "conflict"
    assert "a turn is running" in answer.json()["error"]["message"]
    assert any("done" in line for line in rest)  # the turn itself went on
    assert client.get(f"/api/apps/{app_id}/files/index.html").text == before
    assert [v["kind"] for v in versions_of(client, app_id)] == ["turn", "turn"]
    assert "restored" not in last_message(client, app_id)["content"]


def test_bad_version_input_is_a_clear_error(client: httpx.Client, server: Server) -> None:
    app = create(client, "A page for a florist", "html")
    app_id = app["id"]
    chat(client, app_id, app["initPrompt"])
    for method, path, status in [
        ("GET", f"/api/apps/{app_id}/versions/x1/diff", 400),
        ("GET", f"/api/apps/{app_id}/versions/v0/diff", 400),
        ("GET", f"/api/apps/{app_id}/versions/v9/diff", 404),
        ("GET", f"/api/apps/{app_id}/versions/v1/diff?against=nope", 400),
        ("POST", f"/api/apps/{app_id}/versions/v9/restore", 404),
        ("POST", f"/api/apps/{app_id}/versions/%00/restore", 400),
        ("GET", f"/api/apps/{app_id}/versions?cursor=b1", 400),
        ("GET", f"/api/apps/{app_id}/versions?limit=0", 422),
        ("GET", f"/api/apps/{app_id}/code/%2e%2e/x", 400),
        ("GET", f"/api/apps/{app_id}/code/missing.html", 404),
        ("GET", f"/api/apps/{app_id}/code/index.html?version=v7", 404),
    ]:
        response = client.request(method, path)
        assert response.status_code == status, (path, response.text)
        assert set(response.json()) == {"error"} or status == 422, response.text
    stranger = signed_in(server)
    for method, path in [
        ("GET", f"/api/apps/{app_id}/versions"),
        ("GET", f"/api/apps/{app_id}/versions/v1/diff"),
        ("POST", f"/api/apps/{app_id}/versions/v1/restore"),
        ("GET", f"/api/apps/{app_id}/code/index.html"),
    ]:
        assert stranger.request(method, path).status_code == 404
    stranger.close()
    assert [v["id"] for v in versions_of(client, app_id)] == ["v1"]
