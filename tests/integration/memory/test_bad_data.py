"""An unreadable stored item never crashes a caller nor yields an invalid window."""

from __future__ import annotations

import logging

import pytest

from tests.integration.backends import Backend
from tests.integration.memory_support import tool_step
from zerocode.adapters.inprocess.cache import LruWindowCache
from zerocode.memory.facade import Memory
from zerocode.memory.messages import ToolResult, UserMessage
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate
from zerocode.memory.window import WindowPolicy

APP = "app-bad"


def conversation(backend: Backend) -> Memory:
    memory = Memory(backend.transcript(), LruWindowCache(), WindowPolicy())
    for n in range(3):
        turn = memory.begin_turn(APP, f"request {n}")
        tool_step(memory, turn, 1, calls=2)
        memory.commit_final(turn, f"done {n}")
    return memory  # seqs per turn: user, call, result, result, final (5 entries)


def fresh(backend: Backend) -> Memory:
    return Memory(backend.transcript(), LruWindowCache(), WindowPolicy())


@pytest.mark.parametrize("seq", [7, 8, 9])  # the call or one result of turn 2's step
def test_a_broken_step_is_left_out_whole_logged_and_kept(
    backend: Backend, seq: int, caplog: pytest.LogCaptureFixture
) -> None:
    conversation(backend)
    backend.corrupt(APP, seq)
    with caplog.at_level(logging.ERROR):
        window = fresh(backend).window(APP, "system")
    validate(window.messages)
    ids = {m.tool_call_id for m in window.messages if isinstance(m, ToolResult)}
    assert not any(i.startswith("t2_") for i in ids) and any(i.startswith("t1_") for i in ids)
    assert len(ids) == 4
    assert APP in caplog.text and "[7, 8, 9]" in caplog.text
    assert backend.raw(APP, seq)


def test_a_broken_pinned_user_message_still_gives_a_valid_window(backend: Backend) -> None:
    memory = conversation(backend)
    backend.corrupt(APP, 11)  # turn 3's user message
    window = fresh(backend).window(APP, "system")
    validate(window.messages)
    assert "request 2" not in [m.content for m in window.messages if isinstance(m, UserMessage)]
    assert memory.window(APP, "system") is not None


def test_a_broken_newest_item_does_not_stop_the_next_turn(backend: Backend) -> None:
    memory = Memory(backend.transcript(), LruWindowCache(), WindowPolicy())
    turn = memory.begin_turn(APP, "first")
    tool_step(memory, turn, 1, calls=1)  # seqs 2, 3; the turn is left open
    backend.corrupt(APP, 3)
    later = fresh(backend)
    later.begin_turn(APP, "second")
    validate(later.window(APP, "system").messages)
    kinds = [u.kind for u in later.units(APP)]
    assert kinds == [EntryKind.USER, EntryKind.INTERRUPTED, EntryKind.USER]
