from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from tests.factories import final, step, turn_entries, user
from zerocode.memory.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
)
from zerocode.memory.tokens import message_tokens
from zerocode.memory.transcript import Entry, EntryKind, group_units
from zerocode.memory.validation import validate
from zerocode.memory.window import Window, WindowPolicy, build_window, elide, elision_stub

BIG = "<template><h1>Hello</h1></template>\n" * 200  # ~7 KB


def history(turns: int, payload: str = BIG) -> list[Entry]:
    out: list[Entry] = []
    for turn in range(1, turns + 1):
        out += turn_entries(len(out) + 1, turn, steps=2, calls=2, payload=payload)
    return out


def window(entries: list[Entry], **policy: Any) -> Window:
    return build_window("You build apps.", group_units("a", entries), WindowPolicy(**policy))


def test_small_history_is_kept_whole_and_valid() -> None:
    entries = history(2, payload="tiny")
    w = window(entries)
    assert w.messages[0] == SystemMessage("You build apps.")
    assert list(w.messages[1:]) == [e.message for e in entries]
    assert w.evicted_units == 0 and w.elided_payloads == 0
    assert w.total_tokens == sum(w.tokens) + 3
    assert w.tokens == tuple(message_tokens(m) for m in w.messages)


def requests_of_shown_turns_are_shown(w: Window, entries: list[Entry]) -> bool:
    """Every turn with a unit in the window has its request (its user message) there too."""
    by_seq = {e.seq: e for e in entries}
    turns = {by_seq[seq].turn for seq in w.kept_units}
    requests = {e.turn for e in entries if e.kind is EntryKind.USER and e.seq in w.kept_units}
    return turns <= requests


def test_message_bound_evicts_oldest_units_and_keeps_each_shown_turns_request() -> None:
    entries = history(6, payload="tiny")  # 8 entries per turn: user, 2 steps of 3, final
    w = window(entries, max_messages=20)
    assert len(w.messages) <= 20
    validate(w.messages)
    # The two newest turns whole (system + 16), then turn 4's request and final (the
    # step before its final would cross the bound), nothing older.
    assert w.messages[-16:] == tuple(e.message for e in entries[-16:])
    turn4 = [e for e in entries if e.turn == 4]
    assert w.messages[1:3] == (turn4[0].message, turn4[-1].message)
    assert len(w.messages) == 19 and requests_of_shown_turns_are_shown(w, entries)


def test_a_unit_that_does_not_fit_is_left_out_whole_not_cut() -> None:
    entries = [user(1, 1), *step(2, 1, 1, calls=3, payload="p" * 100), final(6, 1, 1)]
    entries += [user(7, 2, "now this")]
    # Room for system, user 7, and turn 1's request and final, but the step needs four.
    w = window(entries, max_messages=5)
    assert w.messages == (
        SystemMessage("You build apps."),
        entries[0].message,
        entries[5].message,
        entries[6].message,
    )
    assert w.evicted_units == 1


def test_system_prompt_and_newest_user_survive_any_budget() -> None:
    entries = [*history(3), user(len(history(3)) + 1, 4, "x" * 5000)]
    w = window(entries, max_messages=3, max_tokens=1)
    assert [m.role for m in w.messages] == ["system", "user"]
    assert w.messages[1] == entries[-1].message


def test_pinned_user_message_kept_when_current_turn_fills_window() -> None:
    entries = [user(1, 1)]
    seq = 2
    for _ in range(10):
        s = step(seq, 1, 1, calls=2, payload="tiny")
        entries += s
        seq += len(s)
    w = window(entries, max_messages=8)
    validate(w.messages)
    assert w.messages[1] == entries[0].message
    assert w.messages[-1] == entries[-1].message
    assert len(w.messages) <= 8


def test_older_payloads_are_elided_to_stub_with_path_size_and_hash() -> None:
    entries = history(3)
    w = window(entries, max_tokens=100_000, max_messages=200)
    digest = hashlib.sha256(BIG.encode()).hexdigest()[:16]
    calls = [m for m in w.messages if isinstance(m, AssistantMessage) and m.tool_calls]
    old, current = calls[:-2], calls[-2:]
    for message in old:
        for call in message.tool_calls:
            args = json.loads(call.arguments)
            assert args["path"].startswith("src/")
            assert args["content"] == elision_stub(BIG)
            assert digest in args["content"] and "7.0 KB" in args["content"]
    for message in current:
        assert all(json.loads(c.arguments)["content"] == BIG for c in message.tool_calls)
    assert w.elided_payloads == len(old)
    # Elision keeps the call structure, so the window is as valid as before.
    validate(w.messages)


def test_full_turns_keeps_more_turns_unelided() -> None:
    entries = history(3)
    one = window(entries, max_tokens=100_000, max_messages=200)
    two = window(entries, max_tokens=100_000, max_messages=200, full_turns=2)
    assert two.elided_payloads < one.elided_payloads
    assert two.total_tokens > one.total_tokens


def test_elision_of_results_keeps_failure_and_small_payloads() -> None:
    call = ToolCall("c", "read_file", json.dumps({"path": "a.vue"}))
    failed = ToolResult.failure(call, "x" * 2000)
    slim = elide(failed, 512)
    assert isinstance(slim, ToolResult) and not slim.ok and slim.content.startswith("ERROR: [")
    small = ToolResult.success(call, "short")
    assert elide(small, 512) is small
    broken = ToolCall("d", "write_file", '{"path": "a", "content": "' + "y" * 2000)
    elided = elide(AssistantMessage(None, (broken,)), 512)
    assert isinstance(elided, AssistantMessage)
    assert json.loads(elided.tool_calls[0].arguments)["elided"].startswith("[content elided")


def test_summary_is_included_only_when_something_was_evicted() -> None:
    entries = history(4, payload="tiny")
    seq = len(entries) + 1
    summary = Entry(
        seq=seq,
        turn=5,
        unit=seq,
        turn_start=seq,
        kind=EntryKind.SUMMARY,
        message=SystemMessage("Summary of the earlier conversation: made a todo app"),
        covers=seq - 1,
    )
    entries += [summary, user(seq + 1, 5, "next")]
    roomy = window(entries, summary=True, max_messages=200)
    assert not roomy.summary_included
    assert summary.message not in roomy.messages
    tight = window(entries, summary=True, max_messages=10)
    assert tight.summary_included and tight.messages[1] == summary.message
    off = window(entries, summary=False, max_messages=10)
    assert summary.message not in off.messages


@pytest.mark.parametrize(
    "bad", [{"max_messages": 2}, {"elide_min_chars": 10}, {"full_turns": 0}, {"max_tokens": 0}]
)
def test_policy_rejects_nonsense(bad: dict[str, int]) -> None:
    with pytest.raises(ValueError):
        WindowPolicy(**bad)  # type: ignore[arg-type]


def test_elided_count_is_the_elided_messages_actually_in_the_window() -> None:
    entries = history(6)
    for budget in (8, 14, 30, 200):
        w = window(entries, max_messages=budget, max_tokens=100_000)
        stubbed = sum(
            1 for m in w.messages if "[content elided" in json.dumps(m.__dict__, default=str)
        )
        assert w.elided_payloads == stubbed
