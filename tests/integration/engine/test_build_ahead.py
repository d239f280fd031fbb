"""A Vue turn's preview build starts as soon as a tool step changed files (issue 28, point 4;
engine/build_ahead.py), with the real local builder (bubblewrap, Vite): adopted when the
model then answers without changing files, superseded (recorded, never shown) when it changes
them again, built afresh when the files moved under it, and never left ``running``."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.engine.test_engine import platform, run
from zerocode.apps.records import App, CodeGenType
from zerocode.bootstrap.platform import Platform
from zerocode.engine import build_ahead
from zerocode.engine.build_ahead import QUIET_SECONDS
from zerocode.engine.events import BuildEvent, DoneEvent, ErrorEvent, TurnEvent
from zerocode.engine.model import ModelReply, TextDelta
from zerocode.memory.messages import AssistantMessage, ToolCall
from zerocode.memory.validation import validate
from zerocode.publishing.builds import Build, BuildPurpose, BuildState, snapshot
from zerocode.publishing.pointers import SiteTarget, preview_pointer

CLOSING_SECONDS = 2.0  # the scripted model's closing reply takes this long
STEP_SECONDS = 1.5  # and each of its tool steps (a model's call; a box is prepared meanwhile)


def page(title: str) -> str:
    return f"<template>\n  <main><h1>{title}</h1></main>\n</template>\n"


class Scripted:
    """A model that writes ``src/App.vue`` once per title, reads it, then closes with text,
    each step after ``step_seconds``, the closing one after ``closing_seconds`` (a model's
    calls take a while). ``meddle`` runs in the
    closing call before its text: a change of the files no tool step announced."""

    description = "scripted Vue model"

    def __init__(
        self,
        titles: list[str],
        meddle: Any = None,
        *,
        step_seconds: float = STEP_SECONDS,
        closing_seconds: float = CLOSING_SECONDS,
    ) -> None:
        self.step_seconds, self.closing_seconds = step_seconds, closing_seconds
        self.steps: list[ToolCall | None] = [
            ToolCall(f"w{i}", "write_file", json.dumps({"path": "src/App.vue", "content": page(t)}))
            for i, t in enumerate(titles)
        ]
        self.steps.append(ToolCall("r", "read_file", json.dumps({"path": "src/App.vue"})))
        self.steps.append(None)
        self.meddle = meddle
        self.closing: tuple[float, float] | None = None  # when the closing call ran

    async def stream(
        self, role: Any, messages: Any, tools: Any = (), *, tool_choice: Any = "auto"
    ) -> Any:
        call = self.steps.pop(0)
        if call is not None:
            await asyncio.sleep(self.step_seconds)
            message = AssistantMessage("", tool_calls=(call,))
            yield ModelReply(message=message, usage=None, finish_reason="tool_calls")
            return
        began = time.time()
        if self.meddle is not None:
            self.meddle()
        await asyncio.sleep(self.closing_seconds)
        yield TextDelta("Done: the title changed.")
        self.closing = (began, time.time())
        text = AssistantMessage("Done: the title changed.")
        yield ModelReply(message=text, usage=None, finish_reason="stop")


def vue_app(p: Platform) -> Any:
    """A Vue app whose first turn (the offline model) made its project."""
    app = asyncio.run(p.create_app("local", "A Vue notes app", CodeGenType.VUE_PROJECT))
    first = run(p, app, "A Vue notes app")
    assert isinstance(first[-1], DoneEvent) and first[-1].status == "succeeded"
    return stored(p, app)


def builds(p: Platform, app_id: str) -> list[Build]:
    page_ = p.publishing.builds.list(app_id, limit=50, purpose=BuildPurpose.PREVIEW)
    return list(reversed(page_.builds))  # oldest first


def stored(p: Platform, app: Any) -> App:
    found = p.apps.get(app.id)
    assert found is not None
    return found


def shown(p: Platform, app: Any) -> SiteTarget | None:
    return p.publishing.publisher.target(preview_pointer(stored(p, app).preview_key))


def turn(p: Platform, app: Any, model: Scripted) -> tuple[list[TurnEvent], list[Build]]:
    before = {b.id for b in builds(p, app.id)}
    p.engine.model = model
    events = run(p, app, "Change the title")
    return events, [b for b in builds(p, app.id) if b.id not in before]


def test_the_build_runs_beside_the_closing_reply_and_is_the_one_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = platform(tmp_path)
    app = vue_app(p)
    asked: list[str] = []
    prepare = p.publishing.prepare_preview

    def spy(app_: App) -> None:
        asked.append(app_.id)
        prepare(app_)

    monkeypatch.setattr(p.publishing, "prepare_preview", spy)
    model = Scripted(["First", "Second"])
    events, made = turn(p, app, model)
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "succeeded"
    # One build per change: the first's superseded by the second change, never shown.
    assert [b.state for b in made] == [BuildState.SUPERSEDED, BuildState.SUCCEEDED]
    superseded, adopted = made
    assert superseded.error and "superseded" in superseded.error
    # The turn announced one build, the adopted one, with its real outcome.
    announced = [(e.status, e.buildId) for e in events if isinstance(e, BuildEvent)]
    assert announced == [("running", adopted.id), ("succeeded", adopted.id)]
    assert shown(p, app) == SiteTarget(app.id, adopted.id)
    assert adopted.source_digest == snapshot(p.workspace, app.id).digest
    assert b"Second" in p.workspace.read(app.id, "src/App.vue")
    # Started before the model's closing reply, so built beside it, not after it. (Whether
    # it also ends before the reply does is a speed, bench/preview.py's: under load a Vite
    # build outlasts the scripted 2 s reply, and the turn then waits for it.)
    assert model.closing is not None and adopted.started_at is not None
    assert adopted.started_at < model.closing[0]
    assert adopted.finished_at is not None
    assert p.publishing.preview_state(stored(p, app)).up_to_date
    # A box was asked for ahead: when the turn started and after each build started ahead
    # (for one that may supersede it); whether it was ready in time is bench/preview.py's.
    assert asked == [app.id] * 3
    assert "box prepared ahead" in adopted.log_tail, adopted.log_tail
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def test_files_changed_under_the_build_ahead_are_built_afresh(tmp_path: Path) -> None:
    p = platform(tmp_path)
    app = vue_app(p)

    def meddle() -> None:  # as a tool that wrote and then failed would leave them
        p.workspace.write(app.id, "src/App.vue", page("Meddled").encode())

    events, made = turn(p, app, Scripted(["First"], meddle=meddle))
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "succeeded"
    assert [b.state for b in made] == [BuildState.SUPERSEDED, BuildState.SUCCEEDED]
    fresh = made[-1]
    assert fresh.source_digest == snapshot(p.workspace, app.id).digest
    assert shown(p, app) == SiteTarget(app.id, fresh.id)
    announced = [e.buildId for e in events if isinstance(e, BuildEvent)]
    assert set(announced) == {fresh.id}


def test_a_stop_during_the_closing_reply_shows_the_build_ahead(tmp_path: Path) -> None:
    p = platform(tmp_path)
    app = vue_app(p)
    p.engine.model = Scripted(["Stopped"])

    async def stopped() -> list[TurnEvent]:
        running = p.engine.start(app, "Change the title", None)
        events: list[TurnEvent] = []
        async for event in running.events():
            events.append(event)
            if len(events) == 4:  # the write's call and result, the read's call and result
                await asyncio.sleep(0.3)
                assert running.stop("stopped by the user")
        return events

    before = {b.id for b in builds(p, app.id)}
    events = asyncio.run(stopped())
    made = [b for b in builds(p, app.id) if b.id not in before]
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "interrupted"
    assert any(isinstance(e, ErrorEvent) and e.code == "stopped" for e in events)
    # The build ahead had the files as they are: the stopped turn shows it.
    assert [b.state for b in made] == [BuildState.SUCCEEDED]
    assert shown(p, app) == SiteTarget(app.id, made[0].id)
    assert p.publishing.preview_state(stored(p, app)).up_to_date


def test_without_build_ahead_the_build_waits_for_the_reply(tmp_path: Path) -> None:
    p = platform(tmp_path, build_ahead=False)
    app = vue_app(p)
    model = Scripted(["First", "Second"])
    events, made = turn(p, app, model)
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "succeeded"
    assert [b.state for b in made] == [BuildState.SUCCEEDED]
    assert model.closing is not None and made[0].started_at is not None
    assert made[0].started_at >= model.closing[1]


def test_the_quiet_wait_starts_one_build_for_quick_steps_and_none_for_a_quick_round(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """QUIET_SECONDS (engine/build_ahead.py), in two turns of one app (its first build
    prepares the platform's toolchain: seconds). Steps that follow each other within the
    wait (a scripted model, a quick run of small edits) start no build per step: one build,
    of the last change, once the files were quiet, still beside the closing reply; nothing
    superseded. A round whose closing reply ends within the wait has no build ahead (none
    started, none recorded): its files are built after the reply, as without a build ahead.
    The wait is set per turn with seconds of room on each side (1 s against 0.02 s steps and
    a 3 s reply, then 30 s against a 0.01 s round): at the default 0.15 s a loaded machine
    once ran the quick round's reply past the wait and rightly started a build ahead."""
    assert STEP_SECONDS > QUIET_SECONDS > 0.02  # the other tests' steps do start a build each
    monkeypatch.setattr(build_ahead, "QUIET_SECONDS", 1.0)
    p = platform(tmp_path)
    app = vue_app(p)
    model = Scripted(["First", "Second"], step_seconds=0.02, closing_seconds=3.0)
    events, made = turn(p, app, model)
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "succeeded"
    assert [b.state for b in made] == [BuildState.SUCCEEDED]  # no superseded build
    adopted = made[0]
    assert adopted.source_digest == snapshot(p.workspace, app.id).digest
    assert b"Second" in p.workspace.read(app.id, "src/App.vue")
    assert model.closing is not None and adopted.started_at is not None
    assert adopted.started_at < model.closing[1]  # beside the reply, not after it
    announced = [(e.status, e.buildId) for e in events if isinstance(e, BuildEvent)]
    assert announced == [("running", adopted.id), ("succeeded", adopted.id)]
    assert shown(p, app) == SiteTarget(app.id, adopted.id)

    monkeypatch.setattr(build_ahead, "QUIET_SECONDS", 30.0)
    model = Scripted(["Third"], step_seconds=0.01, closing_seconds=0.01)
    events, made = turn(p, stored(p, app), model)
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "succeeded"
    assert [b.state for b in made] == [BuildState.SUCCEEDED]  # no record of a build ahead
    fresh = made[0]
    assert model.closing is not None and fresh.started_at is not None
    assert fresh.started_at >= model.closing[1] - 0.01  # after the reply (clock's grain)
    assert fresh.started_at - model.closing[1] < 30  # built after the reply, not the wait
    assert fresh.source_digest == snapshot(p.workspace, app.id).digest
    assert b"Third" in p.workspace.read(app.id, "src/App.vue")
    assert shown(p, app) == SiteTarget(app.id, fresh.id)
    assert p.publishing.preview_state(stored(p, app)).up_to_date
