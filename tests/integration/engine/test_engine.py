"""The engine in-process (no HTTP): limits and timeouts still end in a valid, closed turn."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from zerocode.apps.records import App, CodeGenType, new_app_id
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine.events import DoneEvent, ErrorEvent, ToolEvent, TurnEvent
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate


def platform(tmp_path: Path, **overrides: Any) -> Platform:
    """The local platform; without the runtime check (no sites server runs here for it to
    load previews from, and its browser start would eat into short turn timeouts)."""
    return wiring.platform(Settings(data_dir=tmp_path, **{"runtime_check": False, **overrides}))


def run(p: Platform, app: Any, message: str) -> list[TurnEvent]:
    async def collect() -> list[TurnEvent]:
        return [e async for e in p.engine.start(app, message, None).events()]

    return asyncio.run(collect())


def test_a_turn_past_its_time_limit_fails_and_is_closed(tmp_path: Path) -> None:
    p = platform(tmp_path, turn_timeout_seconds=1.0)
    app = asyncio.run(p.create_app("local", "A page about snails", CodeGenType.HTML))
    events = run(p, app, "Take it slowly [[slow]]")
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "failed"
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert errors and errors[0].code == "timeout"
    units = p.memory.units(app.id)
    assert units[-1].kind is EntryKind.INTERRUPTED
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)
    again = run(p, app, "A page about snails")  # the lease was released
    assert isinstance(again[-1], DoneEvent) and again[-1].status == "succeeded"


def test_the_tool_call_limit_ends_the_turn_as_failed(tmp_path: Path) -> None:
    p = platform(tmp_path, max_tool_calls=1)
    app = asyncio.run(p.create_app("local", "A Vue quiz app", CodeGenType.VUE_PROJECT))
    p.workspace.write(app.id, "src/views/HomeView.vue", b"<template><h1>Quiz</h1></template>")
    events = run(p, app, 'Change the title to "Big Quiz"')
    results = [e for e in events if isinstance(e, ToolEvent) and e.phase == "result"]
    assert results[0].ok and any("limit" in e.summary for e in results[1:] if not e.ok)
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "failed"
    assert p.workspace.read(app.id, "src/views/HomeView.vue").count(b"Quiz") == 1
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)
    assert not p.memory.head(app.id).turn_open


class CutOffModel:
    """A model whose every answer stops inside its code block, as a truncated reply does."""

    description = "test model that truncates its code"

    def __init__(self, finish: str = "length") -> None:
        self.finish, self.calls = finish, 0

    async def stream(
        self, role: Any, messages: Any, tools: Any = (), *, tool_choice: Any = "auto"
    ) -> Any:
        from zerocode.engine.model import ModelReply, TextDelta
        from zerocode.memory.messages import AssistantMessage

        self.calls += 1
        text = "Here it is:\n```html\n<html><body><h1>Half a page" if self.calls == 1 else " more"
        yield TextDelta(text)
        yield ModelReply(message=AssistantMessage(text), usage=None, finish_reason=self.finish)


def stored_page_app(p: Platform) -> App:
    """A page app put straight into the store: create_app would ask the model for a name."""
    app = App(
        id=new_app_id(),
        owner="local",
        name="Half",
        code_gen_type=CodeGenType.HTML,
        init_prompt="A page",
    )
    p.apps.put(app)
    return app


def test_an_answer_still_cut_off_after_continuing_fails_and_saves_nothing(tmp_path: Path) -> None:
    model = CutOffModel()
    p = wiring.platform(Settings(data_dir=tmp_path), model=model)
    app = stored_page_app(p)
    events = run(p, app, "A page")
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert errors and errors[0].code == "cut_off"
    assert errors[0].message == "the answer was cut off by the output limit; nothing was saved"
    assert model.calls == 3  # the answer, then two requests to continue it
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "failed"
    assert p.workspace.list(app.id) == []
    entry = p.display.page(app.id, limit=1).entries[0]
    assert entry.status.value == "failed" and "cut off by the output limit" in entry.content
    note = p.memory.units(app.id)[-1]
    assert note.kind is EntryKind.INTERRUPTED and "cut off" in str(note.messages[0].content)
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def test_code_that_cannot_be_parsed_fails_the_turn_and_saves_nothing(tmp_path: Path) -> None:
    p = wiring.platform(Settings(data_dir=tmp_path), model=CutOffModel(finish="stop"))
    app = stored_page_app(p)
    events = run(p, app, "A page")
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert errors and errors[0].code == "code_parse_error"
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "failed"
    assert p.workspace.list(app.id) == []
    entry = p.display.page(app.id, limit=1).entries[0]
    assert entry.status.value == "failed" and "could not be saved" in entry.content
    units = p.memory.units(app.id)  # the model is told its code was not saved
    assert units[-2].kind is EntryKind.FEEDBACK and "could not be saved" in str(
        units[-2].messages[-1].content
    )
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def test_a_full_history_is_refused_with_413_before_anything_runs(tmp_path: Path) -> None:
    import pytest

    from zerocode.errors import PayloadTooLarge

    p = platform(tmp_path, max_turns_per_app=1)
    app = asyncio.run(p.create_app("local", "A page about ferns", CodeGenType.HTML))
    assert isinstance(run(p, app, "A page about ferns")[-1], DoneEvent)
    with pytest.raises(PayloadTooLarge) as full:
        p.engine.start(app, "one more", None)
    assert full.value.status == 413
    head = p.memory.head(app.id)  # the turn, then the note saying what its checks block did
    assert head.turn == 2 and head.kind is EntryKind.NOTE
