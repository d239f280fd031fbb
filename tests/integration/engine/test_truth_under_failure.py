"""The engine when things go wrong (issue 13): throwing tools, oversized steps, a failing
store, a crashed turn, a dead lease holder. Every outcome is told, to the model and to
the user, and the transcript stays valid."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.engine.test_engine import platform, run
from zerocode.apps.records import CodeGenType
from zerocode.bootstrap.platform import Platform
from zerocode.engine.events import BuildEvent, DoneEvent, ErrorEvent, ToolEvent
from zerocode.engine.journal import PendingCall, PendingStep
from zerocode.errors import Conflict
from zerocode.memory.display import DisplayRole, DisplayStatus
from zerocode.memory.messages import AssistantMessage, ToolCall, ToolResult
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate


def vue(p: Platform) -> Any:
    return asyncio.run(p.create_app("local", "A Vue notes app", CodeGenType.VUE_PROJECT))


def valid(p: Platform, app: Any) -> None:
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def display(p: Platform, app: Any) -> list[Any]:
    return list(reversed(p.display.page(app.id, limit=50).entries))


def test_a_tool_that_raises_is_a_failed_result_and_its_step_is_committed(
    tmp_path: Path,
) -> None:
    p = platform(tmp_path, repair_rounds=0)
    app = vue(p)
    events = run(p, app, "Write two notes [[surrogate]]")
    results = [e for e in events if isinstance(e, ToolEvent) and e.phase == "result"]
    assert [r.ok for r in results] == [True, False]
    assert "failed inside the platform (UnicodeEncodeError)" in results[1].summary
    assert p.workspace.read(app.id, "notes/ok.txt") == b"fine\n"
    step = next(u for u in reversed(p.memory.units(app.id)) if u.kind is EntryKind.CALL)
    outcomes = [m for m in step.messages if isinstance(m, ToolResult)]
    assert [r.ok for r in outcomes] == [True, False]
    assert "its effect is unknown" in outcomes[1].content
    # The turn went on and ended (here its preview of a lone note fails to build, so it is
    # closed failed, saying so); nobody "disconnected".
    final = p.memory.units(app.id)[-1]
    assert final.kind in (EntryKind.FINAL, EntryKind.INTERRUPTED)
    assert not any("disconnected" in str(m) for u in p.memory.units(app.id) for m in u.messages)
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "failed"
    valid(p, app)


def test_a_step_over_the_per_step_limit_runs_nothing_and_is_kept_whole(tmp_path: Path) -> None:
    p = platform(tmp_path, max_tool_calls_per_step=8)
    app = vue(p)
    events = run(p, app, "Write many notes [[many-calls=40]]")
    results = [e for e in events if isinstance(e, ToolEvent) and e.phase == "result"]
    assert len(results) == 8 and not any(r.ok for r in results)
    assert not any(f.path.startswith("notes/") for f in p.workspace.list(app.id))
    step = next(u for u in reversed(p.memory.units(app.id)) if u.kind is EntryKind.CALL)
    call = step.messages[0]
    assert isinstance(call, AssistantMessage) and len(call.tool_calls) == 8
    assert "asked for 40 tool calls" in (call.content or "")
    assert all(
        isinstance(m, ToolResult) and not m.ok and "none of them ran" in m.content
        for m in step.messages[1:]
    )
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "failed"
    valid(p, app)


def test_a_crashed_turn_is_closed_by_the_next_with_what_it_did(tmp_path: Path) -> None:
    p = platform(tmp_path)
    app = vue(p)
    # A turn that a dead server left open: one committed write, then a step whose tools
    # were running (journal written, results never committed).
    turn = p.memory.begin_turn(app.id, "Add two pages")
    p.display.append(app.id, DisplayRole.USER, "Add two pages", turn=turn.number)
    call = ToolCall("c1", "write_file", json.dumps({"path": "src/A.vue", "content": "a"}))
    p.memory.commit_step(turn, AssistantMessage(None, (call,)), [ToolResult.success(call, "ok")])
    p.engine.journal.write(
        app.id,
        PendingStep(
            turn=turn.number, head=turn.head, calls=(PendingCall("write_file", "src/B.vue"),)
        ),
    )
    events = run(p, app, "A Vue notes app")
    assert isinstance(events[-1], DoneEvent)
    note = next(u for u in p.memory.units(app.id) if u.kind is EntryKind.INTERRUPTED)
    text = str(note.messages[0].content)
    assert "the server stopped before it finished" in text
    assert "src/A.vue (write_file)" in text and "src/B.vue (write_file)" in text
    assert "may have run" in text
    shown = display(p, app)
    closing = next(e for e in shown if e.turn == turn.number and e.role is not DisplayRole.USER)
    assert closing.status is DisplayStatus.INTERRUPTED
    assert "server stopped" in closing.content and "src/A.vue" in closing.content
    assert "src/B.vue" in closing.content
    assert p.engine.journal.read(app.id) is None
    valid(p, app)


def test_a_turn_killed_during_its_build_is_closed_in_the_display(tmp_path: Path) -> None:
    p = platform(tmp_path)
    app = vue(p)
    turn = p.memory.begin_turn(app.id, "Make it")
    p.display.append(app.id, DisplayRole.USER, "Make it", turn=turn.number)
    p.memory.commit_final(turn, "Done.")  # the answer was saved; the build never reported
    run(p, app, 'Change the title to "Notes"')
    closing = [e for e in display(p, app) if e.turn == turn.number]
    assert [e.role for e in closing] == [DisplayRole.USER, DisplayRole.ERROR]
    assert "while building the preview" in closing[1].content
    kinds = [u.kind for u in p.memory.units(app.id) if u.turn == turn.number]
    assert EntryKind.INTERRUPTED not in kinds  # the transcript had closed it already


def test_the_lease_is_renewed_while_a_turn_runs_and_a_dead_holder_frees_the_app(
    tmp_path: Path,
) -> None:
    p = platform(tmp_path, turn_lease_seconds=3)
    app = asyncio.run(p.create_app("local", "A page about snails", CodeGenType.HTML))

    async def long_turn_then_try() -> tuple[str, Any]:
        events = p.engine.start(app, "Take it slowly [[slow]]", None).events()
        first = await anext(events)
        await asyncio.sleep(4.5)  # past the lease's first expiry: renewed, still held
        try:
            p.engine.start(app, "Another", None)
            second = "taken"
        except Conflict:
            second = "refused"
        rest = [e async for e in events]
        return second, (first, rest[-1])

    second, (_, done) = asyncio.run(long_turn_then_try())
    assert second == "refused" and isinstance(done, DoneEvent) and done.status == "succeeded"
    # A holder that died: it never renews and never releases.
    assert p.engine.lease.acquire(f"turn:{app.id}", "dead-server", 3)
    with pytest.raises(Conflict):
        p.engine.start(app, "A page about snails", None)
    time.sleep(3.1)
    assert isinstance(run(p, app, "A page about snails")[-1], DoneEvent)


def test_a_server_failure_mid_turn_ends_with_error_then_done_and_is_recorded(
    tmp_path: Path,
) -> None:
    p = platform(tmp_path)
    app = vue(p)

    async def broken_flip(app: Any, build: Any) -> Any:
        raise RuntimeError("KeyValueStore said: token=sk-secret-123")

    # The preview's flip fails, whether the build was started ahead (engine/build_ahead.py)
    # or by the build step.
    p.publishing.show_preview = broken_flip  # type: ignore[method-assign]
    events = run(p, app, "A Vue notes app")
    assert isinstance(events[-2], ErrorEvent) and isinstance(events[-1], DoneEvent)
    assert events[-2].code == "server_error"
    assert events[-2].message == "the server failed while building the preview (RuntimeError)"
    assert "sk-secret" not in events[-2].message
    assert events[-1].status == "failed"
    assert any(isinstance(e, BuildEvent) and e.status == "running" for e in events)
    last = display(p, app)[-1]
    assert last.role is DisplayRole.ERROR and "building the preview (RuntimeError)" in last.content
    valid(p, app)


def test_a_store_that_fails_once_mid_turn_closes_the_turn_with_the_real_cause(
    tmp_path: Path,
) -> None:
    p = platform(tmp_path)
    app = vue(p)
    store = p.memory.store
    real_append = store.append
    calls = {"n": 0}

    def flaky_append(app_id: str, entries: Any, expected_head: int) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the first step's commit (the user message was the first)
            raise OSError("disk I/O error")
        real_append(app_id, entries, expected_head)

    store.append = flaky_append  # type: ignore[method-assign]
    events = run(p, app, "A Vue notes app")
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and errors[0].code == "server_error"
    assert "while saving the step (OSError)" in errors[0].message
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "failed"
    # The files its tools wrote stand: the preview is rebuilt from them after the error.
    after = events[events.index(errors[0]) + 1 : -1]
    assert [e.status for e in after if isinstance(e, BuildEvent)] == ["running", "succeeded"]
    note = p.memory.units(app.id)[-1]
    assert note.kind is EntryKind.INTERRUPTED
    assert "saving the step (OSError)" in str(note.messages[0].content)
    # The tools did run (their step never reached the transcript): the note says so.
    assert "may have run" in str(note.messages[0].content)
    assert display(p, app)[-1].role is DisplayRole.ERROR
    valid(p, app)
    assert isinstance(run(p, app, 'Change the title to "Notes"')[-1], DoneEvent)
