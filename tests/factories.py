"""Builders for transcript entries and conversations used across the test tiers."""

from __future__ import annotations

import json

from zerocode.memory.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from zerocode.memory.transcript import Entry, EntryKind


def user(seq: int, turn: int, text: str = "make it blue") -> Entry:
    return Entry(
        seq=seq, turn=turn, unit=seq, turn_start=seq, kind=EntryKind.USER, message=UserMessage(text)
    )


def step(
    seq: int,
    turn: int,
    turn_start: int,
    calls: int = 1,
    payload: str = "x",
    failed: tuple[int, ...] = (),
) -> list[Entry]:
    """An assistant tool-call entry at ``seq`` and its results right after it."""
    tool_calls = tuple(
        ToolCall(
            f"call_{seq}_{i}",
            "write_file",
            json.dumps({"path": f"src/f{i}.vue", "content": payload}),
        )
        for i in range(calls)
    )
    out = [
        Entry(
            seq=seq,
            turn=turn,
            unit=seq,
            turn_start=turn_start,
            kind=EntryKind.CALL,
            message=AssistantMessage(None, tool_calls),
        )
    ]
    for i, call in enumerate(tool_calls, start=1):
        result = (
            ToolResult.failure(call, "disk full")
            if i - 1 in failed
            else ToolResult.success(call, f"wrote {len(payload)} chars")
        )
        out.append(
            Entry(
                seq=seq + i,
                turn=turn,
                unit=seq,
                turn_start=turn_start,
                kind=EntryKind.RESULT,
                message=result,
            )
        )
    return out


def final(seq: int, turn: int, turn_start: int, text: str = "Done.") -> Entry:
    return Entry(
        seq=seq,
        turn=turn,
        unit=seq,
        turn_start=turn_start,
        kind=EntryKind.FINAL,
        message=AssistantMessage(text),
    )


def turn_entries(
    first_seq: int, turn: int, steps: int = 1, calls: int = 2, payload: str = "x"
) -> list[Entry]:
    """A whole turn: user message, ``steps`` steps, final text."""
    out = [user(first_seq, turn, f"request {turn}")]
    seq = first_seq + 1
    for _ in range(steps):
        entries = step(seq, turn, first_seq, calls, payload)
        out += entries
        seq += len(entries)
    out.append(final(seq, turn, first_seq))
    return out
