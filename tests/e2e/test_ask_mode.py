"""Ask mode (issue 43) against the local server over HTTP with the offline model: a question
is answered from the app's files; it changes no file and makes no version or build; the
history shows it as a question and an answer; its usage counts like any turn's; a bad mode is
refused before anything happens; and the next Build turn still works."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.conftest import Server, Turn, chat, create, parse_sse, signed_in


def ask(client: httpx.Client, app_id: str, question: str) -> Turn:
    body = {"message": question, "mode": "ask"}
    with client.stream("POST", f"/api/apps/{app_id}/chat", json=body) as response:
        assert response.status_code == 200, response.read()
        return parse_sse(response.iter_lines())


def state_of(client: httpx.Client, app_id: str) -> dict[str, Any]:
    """What a turn could change: the files (with their content), versions, builds, preview."""
    files = client.get(f"/api/apps/{app_id}/files").json()["files"]
    contents = {f["path"]: client.get(f"/api/apps/{app_id}/files/{f['path']}").text for f in files}
    return {
        "files": contents,
        "versions": client.get(f"/api/apps/{app_id}/versions").json(),
        "builds": client.get(f"/api/apps/{app_id}/builds").json(),
        "preview": client.get(f"/api/apps/{app_id}/preview").json(),
    }


def test_a_question_changes_nothing_and_is_shown_as_one(server: Server) -> None:
    owner = signed_in(server)
    app = create(owner, "A Vue todo app with an about page", "vue_project")
    made = chat(owner, app["id"], "A Vue todo app with an about page")
    assert made.ended == ("succeeded", 1), made.done
    before = state_of(owner, app["id"])
    spent = owner.get(f"/api/apps/{app['id']}/usage").json()["total"]

    turn = ask(owner, app["id"], 'Which buttons does the home page have? Where is "Try it"?')
    assert turn.ended == ("succeeded", 2) and turn.done is not None
    assert turn.done["mode"] == "ask"
    assert not turn.builds and not turn.errors
    assert {t["name"] for t in turn.results} <= {"read_dir", "read_file", "list_checks"}
    assert "“Try it”" in turn.text and "src/views/HomeView.vue (line" in turn.text
    assert state_of(owner, app["id"]) == before  # no file, version, build or preview changed

    # The history: the question and the answer, each marked; the question as typed.
    entries = owner.get(f"/api/apps/{app['id']}/history?limit=2").json()["entries"]
    assert [(e["role"], e["mode"], e["turn"]) for e in entries] == [
        ("ai", "ask", 2),
        ("user", "ask", 2),
    ]
    assert entries[1]["content"].startswith("Which buttons")
    assert entries[0]["usage"] == turn.done["usage"]
    # Its usage counts like any turn's.
    now = owner.get(f"/api/apps/{app['id']}/usage").json()["total"]
    assert now["requests"] == spent["requests"] + turn.done["usage"]["requests"]

    # The next Build turn sees the question in its context and still changes the app.
    context = owner.get(f"/api/apps/{app['id']}/context").json()
    said = [m for m in context["messages"] if m["role"] == "user"]
    assert any("[Ask mode" in str(m["content"]) for m in said)
    change = chat(owner, app["id"], 'Change the title to "Fox Tasks"')
    assert change.ended == ("succeeded", 3) and "mode" not in (change.done or {})
    assert state_of(owner, app["id"])["files"] != before["files"]


def test_a_bad_mode_is_refused_before_anything_happens(server: Server) -> None:
    owner = signed_in(server)
    app = create(owner, "A page about otters", "html")
    for mode in ("delete", "", None, 1):
        r = owner.post(f"/api/apps/{app['id']}/chat", json={"message": "hi", "mode": mode})
        assert r.status_code == 422, (mode, r.text)
        assert "mode" in r.text
    history = owner.get(f"/api/apps/{app['id']}/history").json()["entries"]
    assert history == []  # nothing was started


def test_a_hostile_model_cannot_write_on_a_question(server: Server) -> None:
    owner = signed_in(server)
    app = create(owner, "A page about otters", "html")
    chat(owner, app["id"], "A page about otters")
    before = state_of(owner, app["id"])
    turn = ask(owner, app["id"], "What does the page show? [[ask-write]]")
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
    (refused,) = [t for t in turn.results if not t["ok"]]
    assert refused["name"] == "write_file" and "Ask mode" in refused["summary"]
    assert state_of(owner, app["id"]) == before
