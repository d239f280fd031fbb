"""Ask mode (issue 43), over the local platform and the offline model through the real openai
client: a question is answered from the files the model reads with read-only tools; no file
changes, no build, no version, whatever the model tries; the question and the answer stay in
the transcript as a normal turn, and the next Build turn sees them and still works."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.integration.engine.test_engine import platform, run
from zerocode.apps.records import CodeGenType
from zerocode.bootstrap.platform import Platform
from zerocode.engine.events import BuildEvent, DoneEvent, TextEvent, ToolEvent, TurnEvent
from zerocode.engine.prompts import ASKED
from zerocode.memory.display import DisplayRole
from zerocode.memory.messages import AssistantMessage, ToolResult, UserMessage
from zerocode.memory.validation import validate


def ask(p: Platform, app: Any, question: str) -> list[TurnEvent]:
    async def collect() -> list[TurnEvent]:
        return [e async for e in p.engine.start(app, question, None, mode="ask").events()]

    return asyncio.run(collect())


def files_of(p: Platform, app_id: str) -> dict[str, bytes]:
    return {f.path: p.workspace.read(app_id, f.path) for f in p.workspace.list(app_id)}


def versions_of(p: Platform, app_id: str) -> list[Any]:
    assert p.engine.versions is not None
    return p.engine.versions.store.list(app_id)


def answer_of(events: list[TurnEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextEvent))


@pytest.mark.parametrize(
    ("kind", "prompt"),
    [
        (CodeGenType.HTML, "A page about otters"),
        (CodeGenType.MULTI_FILE, "A multi-file site about owls"),
        (CodeGenType.VUE_PROJECT, "A Vue app about foxes"),
    ],
)
def test_a_question_is_answered_from_the_files_and_changes_nothing(
    tmp_path: Path, kind: CodeGenType, prompt: str
) -> None:
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("ann", prompt, kind))
    made = run(p, app, prompt)
    assert isinstance(made[-1], DoneEvent) and made[-1].status == "succeeded"
    before = files_of(p, app.id)
    versions = versions_of(p, app.id)
    builds = p.builds.list(app.id)

    events = ask(p, app, 'What are the buttons of the page, and where is "Try it"?')
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded" and done.mode == "ask"
    assert not [e for e in events if isinstance(e, BuildEvent)]  # no build
    tools = [e for e in events if isinstance(e, ToolEvent) and e.phase == "result"]
    assert tools and {e.name for e in tools} <= {"read_dir", "read_file", "list_checks"}
    assert all(e.ok for e in tools)
    text = answer_of(events)
    assert "“Try it”" in text and "appears in" in text  # read from the files, with where
    assert "Nothing was changed" in text
    assert files_of(p, app.id) == before  # no file changed
    assert versions_of(p, app.id) == versions  # no version
    assert p.builds.list(app.id) == builds  # no build

    # The display shows the question and its answer as such; usage is counted as for any turn.
    entries = p.display.page(app.id).entries[:2]
    shown = [(x.role, x.mode) for x in entries]
    assert shown == [(DisplayRole.AI, "ask"), (DisplayRole.USER, "ask")]
    assert entries[1].content.startswith("What are the buttons")  # as the user typed it
    assert done.usage is not None and done.usage["requests"] == 3

    # The transcript keeps it as a normal turn, said to be a question; the window is valid.
    window = p.memory.window(app.id, p.system_prompt(app)).messages
    validate(window)
    users = [m for m in window if isinstance(m, UserMessage)]
    assert users[-1].content.startswith(ASKED)
    last = window[-1]
    assert isinstance(last, AssistantMessage) and "Nothing was changed" in (last.content or "")
    assert any(isinstance(m, ToolResult) for m in window)

    # The next Build turn sees the question and still changes the app.
    change = run(p, app, 'Change the title to "Hello there"')
    assert isinstance(change[-1], DoneEvent) and change[-1].status == "succeeded"
    assert change[-1].mode is None
    assert files_of(p, app.id) != before


def test_a_model_that_tries_to_write_in_ask_mode_is_refused_and_says_so(tmp_path: Path) -> None:
    """A hostile or confused model calls write_file on a question: the call fails, nothing is
    written, and the answer tells what the tool said."""
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("ann", "A page about otters", CodeGenType.HTML))
    run(p, app, "A page about otters")
    before = files_of(p, app.id)
    events = ask(p, app, "What does the page show? [[ask-write]]")
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded"
    (refused,) = [
        e for e in events if isinstance(e, ToolEvent) and e.phase == "result" and not e.ok
    ]
    assert refused.name == "write_file" and "Ask mode" in refused.summary
    assert files_of(p, app.id) == before
    assert "`write_file` was refused" in answer_of(events)


def test_a_question_before_anything_was_built_says_there_is_nothing_yet(tmp_path: Path) -> None:
    """An empty app: the answer says so, and the first Build turn after it still creates the
    app (the question's answer is not taken for an earlier build)."""
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("ann", "A page about otters", CodeGenType.HTML))
    events = ask(p, app, "What is in this app?")
    assert "no files yet" in answer_of(events)
    assert files_of(p, app.id) == {}
    made = run(p, app, "A page about otters")
    assert isinstance(made[-1], DoneEvent) and made[-1].status == "succeeded"
    assert "index.html" in files_of(p, app.id)


def test_a_question_about_the_checks_lists_them_with_their_verdicts(tmp_path: Path) -> None:
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("ann", "A Vue app about foxes", CodeGenType.VUE_PROJECT))
    run(p, app, "A Vue app about foxes")
    events = ask(p, app, "Which acceptance checks does the app have?")
    names = [e.name for e in events if isinstance(e, ToolEvent) and e.phase == "result"]
    assert "list_checks" in names
    text = answer_of(events)
    assert "The app's acceptance checks:" in text and "c1 (" in text
