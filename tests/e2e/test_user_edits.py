"""Edits a person makes without a model turn, through the real server: a file saved by hand
(PUT /files/{path}) and a text changed in place (POST /edits/text). Each makes a version of
kind ``edit``, rebuilds the preview and is told to the model (M9) before its next turn; a
stale save, a running turn and an unclear text are refused and change nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, shown_build, signed_in
from tests.e2e.test_crash_points import chat_when_free, context, killing_server
from tests.e2e.test_versions import (
    during_a_slow_turn,
    h1_of,
    last_message,
    preview_page,
    versions_of,
)

EDITED = "[zerocode: the user edited index.html outside any turn (edited by hand)"


def history(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    """The display's entries, newest first."""
    return list(client.get(f"/api/apps/{app_id}/history").json()["entries"])


def html_app(client: httpx.Client, prompt: str) -> tuple[str, str, str]:
    """A generated html app: its id, its page and the page's ETag."""
    app = create(client, prompt, "html")
    chat(client, app["id"], app["initPrompt"])
    got = client.get(f"/api/apps/{app['id']}/files/index.html")
    assert got.status_code == 200
    return app["id"], got.text, got.headers["etag"]


def test_a_hand_edit_is_a_version_a_preview_and_a_note_for_the_model(
    client: httpx.Client, server: Server
) -> None:
    app_id, page, etag = html_app(client, "A page for a bakery called Crumbs")
    first = h1_of(page)
    edited = page.replace(f"<h1>{first}</h1>", "<h1>Crumbs by hand</h1>")
    saved = client.put(
        f"/api/apps/{app_id}/files/index.html", json={"content": edited}, headers={"If-Match": etag}
    )
    assert saved.status_code == 200, saved.text
    body = saved.json()
    assert body["changed"] == ["index.html"] and body["build"]["state"] == "succeeded"
    version = body["version"]
    assert (version["id"], version["kind"], version["summary"]) == ("v2", "edit", "edited by hand")
    assert version["buildId"] == body["build"]["id"] and version["current"]
    assert h1_of(preview_page(server, client, app_id)) == "Crumbs by hand"
    note = history(client, app_id)[0]
    assert note["role"] == "note" and note["status"] == "ok"
    assert "Edited by hand" in note["content"] and "saved as v2" in note["content"]
    told = last_message(client, app_id)["content"]
    assert told.startswith(EDITED) and "now version v2" in told
    assert "<h1>Crumbs by hand</h1>" in told  # an html app's model gets the code as it is

    # The same content again changes nothing and claims nothing.
    new_etag = client.get(f"/api/apps/{app_id}/files/index.html").headers["etag"]
    assert new_etag != etag
    again = client.put(f"/api/apps/{app_id}/files/index.html", json={"content": edited})
    assert again.status_code == 200 and again.json()["changed"] == []
    assert again.json()["build"] is None and again.json()["version"]["id"] == "v2"
    assert len(versions_of(client, app_id)) == 2

    # A save from what was loaded before the edit is refused: nothing is overwritten.
    stale = client.put(
        f"/api/apps/{app_id}/files/index.html",
        json={"content": page},
        headers={"If-Match": etag},
    )
    assert stale.status_code == 412, stale.text
    assert stale.json()["error"]["code"] == "file_changed"
    assert h1_of(client.get(f"/api/apps/{app_id}/files/index.html").text) == "Crumbs by hand"

    # The next turn builds on the edit: the model was told before it.
    element = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": "Crumbs by hand"}
    element["buildId"] = shown_build(client, app_id)
    turn = chat(client, app_id, 'Rename it to "Crumbs & Co"', element)
    assert turn.ended == ("succeeded", 4), turn.errors  # 2: the checks note; 3: the edit
    messages = context(client, app_id)
    notes = [i for i, m in enumerate(messages) if (m.get("content") or "").startswith(EDITED)]
    asked = [i for i, m in enumerate(messages) if "Crumbs & Co" in (m.get("content") or "")]
    assert len(notes) == 1 and notes[0] < asked[0]
    assert h1_of(client.get(f"/api/apps/{app_id}/files/index.html").text) == "Crumbs &amp; Co"
    assert [v["kind"] for v in versions_of(client, app_id)] == ["turn", "edit", "turn"]


def test_bad_hand_edits_are_clear_errors_and_change_nothing(
    client: httpx.Client, server: Server
) -> None:
    app_id, page, _ = html_app(client, "A page for a florist")
    url = f"/api/apps/{app_id}/files"
    for path, body, headers, status, code in [
        ("index.html", {"content": page + "x"}, {"If-Match": '"nope"'}, 412, "file_changed"),
        ("style.css", {"content": "h1{}"}, {}, 400, "file_refused"),  # not an html app's file
        ("..%2Fescape.html", {"content": "x"}, {}, 400, None),
        ("index.html", {"content": "x" * 600_000}, {}, 422, "validation_error"),
        ("index.html", {"content": "é" * 300_000}, {}, 413, "workspace_full"),
        ("index.html", {"text": "x"}, {}, 422, "validation_error"),
    ]:
        got = client.put(f"{url}/{path}", json=body, headers=headers)
        assert got.status_code == status, (path, got.text)
        if code:
            assert got.json()["error"]["code"] == code, got.text
    assert client.get(f"{url}/index.html").text == page
    assert len(versions_of(client, app_id)) == 1
    stranger = signed_in(server)
    assert stranger.put(f"{url}/index.html", json={"content": "x"}).status_code == 404
    anonymous = httpx.put(f"{server.api}{url}/index.html", json={"content": "x"})
    assert anonymous.status_code == 401
    assert client.get(f"{url}/index.html").text == page


def test_a_text_changed_in_place_needs_no_model_turn(client: httpx.Client, server: Server) -> None:
    app_id, page, _ = html_app(client, "A page for a tea shop called Leaf")
    first = h1_of(page)
    turns_before = len(context(client, app_id))
    element = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": first}
    element["buildId"] = shown_build(client, app_id)
    done = client.post(
        f"/api/apps/{app_id}/edits/text",
        json={"element": element, "page": "/", "newText": "Leaf & <Co>"},
    )
    assert done.status_code == 200, done.text
    version = done.json()["version"]
    assert version["kind"] == "edit" and f'"{first}" to "Leaf & <Co>"' in version["summary"]
    source = client.get(f"/api/apps/{app_id}/files/index.html").text
    assert "<h1>Leaf &amp; &lt;Co&gt;</h1>" in source  # text, never markup
    assert source.replace("<h1>Leaf &amp; &lt;Co&gt;</h1>", f"<h1>{first}</h1>") == page
    assert "<h1>Leaf &amp; &lt;Co&gt;</h1>" in preview_page(server, client, app_id)
    messages = context(client, app_id)
    assert len(messages) == turns_before + 1  # one note; no model answer, no tool call
    assert messages[-1]["role"] == "user" and "changed the text" in messages[-1]["content"]
    element["buildId"] = shown_build(client, app_id)  # the edit's preview, picked again

    # Text a script writes, or text that is not on the page, is not guessed at.
    for text in ["Nothing like this is on the page", ""]:
        refused = client.post(
            f"/api/apps/{app_id}/edits/text",
            json={"element": {**element, "text": text}, "newText": "x"},
        )
        assert refused.status_code in (400, 422), refused.text
    refused = client.post(
        f"/api/apps/{app_id}/edits/text",
        json={"element": {**element, "text": "Nothing like this"}, "newText": "x"},
    )
    assert refused.json()["error"]["code"] == "text_not_editable"
    assert "ask the model" in refused.json()["error"]["message"]
    bad = client.post(
        f"/api/apps/{app_id}/edits/text", json={"element": element, "newText": "two\nlines"}
    )
    assert bad.status_code in (400, 422)
    assert len(versions_of(client, app_id)) == 2


def test_edits_during_a_running_turn_are_409_and_change_nothing(client: httpx.Client) -> None:
    app_id, page, etag = html_app(client, "A page about kites")
    element = {"tag": "h1", "text": h1_of(page), "buildId": shown_build(client, app_id)}
    with httpx.Client(base_url=client.base_url, headers=dict(client.headers)) as other:
        rest, (saved, texted) = during_a_slow_turn(
            client,
            app_id,
            lambda: [
                other.put(
                    f"/api/apps/{app_id}/files/index.html",
                    json={"content": page.replace("</h1>", "!</h1>")},
                    headers={"If-Match": etag},
                ),
                other.post(
                    f"/api/apps/{app_id}/edits/text",
                    json={"element": element, "newText": "Kites!"},
                ),
            ],
        )
    for answer in (saved, texted):
        assert answer.status_code == 409, answer.text
        assert "a turn is running" in answer.json()["error"]["message"]
    assert any("done" in line for line in rest)
    assert [v["kind"] for v in versions_of(client, app_id)] == ["turn"]
    assert "edited" not in last_message(client, app_id)["content"]


def test_vue_hand_and_text_edits_tell_the_model_the_diff(client: httpx.Client) -> None:
    app = create(client, "A Vue recipe box with a home page", "vue_project")
    app_id = app["id"]
    chat(client, app_id, app["initPrompt"])
    path = "src/views/HomeView.vue"
    got = client.get(f"/api/apps/{app_id}/files/{path}")
    first = h1_of(got.text)
    element = {"pagePath": "/", "tag": "h1", "text": first}
    element["buildId"] = shown_build(client, app_id)
    texted = client.post(
        f"/api/apps/{app_id}/edits/text", json={"element": element, "newText": "Family Recipes"}
    )
    assert texted.status_code == 200, texted.text
    assert texted.json()["build"]["state"] == "succeeded"
    assert texted.json()["changed"] == [path]
    told = last_message(client, app_id)["content"]
    assert "```diff" in told and "+    <h1>Family Recipes</h1>" in told.replace("\t", "    ")
    assert f"Read {path} again" in told
    element["buildId"] = shown_build(client, app_id)  # the edit's preview, picked again
    mustache = client.post(
        f"/api/apps/{app_id}/edits/text",
        json={"element": {**element, "text": "Family Recipes"}, "newText": "{{ secret }}"},
    )
    assert mustache.status_code == 400, mustache.text

    page = client.get(f"/api/apps/{app_id}/files/{path}")
    broken = page.text.replace("</template>", "", 1)  # a hand edit that breaks the build
    saved = client.put(
        f"/api/apps/{app_id}/files/{path}",
        json={"content": broken},
        headers={"If-Match": page.headers["etag"]},
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["build"]["state"] == "failed"  # saved, and said plainly
    note = history(client, app_id)[0]
    assert note["status"] == "failed" and "preview build failed" in note["content"]
    assert [v["kind"] for v in versions_of(client, app_id)] == ["edit", "edit", "turn"]


# -- a server killed in the middle of an edit ------------------------------------------------


@pytest.mark.parametrize("point", ["before_edit_write", "mid_edit", "after_edit_note"])
def test_an_edit_cut_by_a_kill_is_told_once_or_not_at_all(tmp_path: Path, point: str) -> None:
    server = killing_server(tmp_path, point)
    try:
        client = signed_in(server)
        app_id, page, etag = html_app(client, "A page for a bakery called Crumbs")
        edited = page.replace("</h1>", " by hand</h1>", 1)
        with pytest.raises(httpx.HTTPError):
            client.put(
                f"/api/apps/{app_id}/files/index.html",
                json={"content": edited},
                headers={"If-Match": etag},
            )
        assert server.proc is not None and server.proc.wait(timeout=60) == -9
        server.env.pop("ZEROCODE_FAULT_KILL")
        server.start()

        waited, turn = chat_when_free(client, app_id, 'Call it "Bread Bros"')
        assert waited < 60 and turn.done is not None, turn.errors
        assert turn.done["status"] == "succeeded", turn.errors
        messages = context(client, app_id)
        told = [
            i
            for i, m in enumerate(messages)
            if (m.get("content") or "").startswith("[zerocode: the user edited")
        ]
        kinds = [v["kind"] for v in versions_of(client, app_id)]
        notes = [e for e in history(client, app_id) if e["role"] == "note"]
        if point == "before_edit_write":  # the file was never written: nothing is claimed
            assert told == [] and kinds == ["turn", "turn"] and notes == []
            return
        asked = [i for i, m in enumerate(messages) if "Bread Bros" in (m.get("content") or "")]
        assert len(told) == 1 and told[0] < asked[0], "told once, before the next turn"
        assert " by hand</h1>" in messages[told[0]]["content"]
        assert kinds == ["turn", "edit", "turn"]
        assert len(notes) == 1 and "server stopped before the preview" in notes[0]["content"]
    finally:
        server.stop()
