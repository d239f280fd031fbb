"""Helpers for memory tests: a store proxy that counts calls, and a scripted conversation."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from zerocode.memory.facade import Memory, Turn
from zerocode.memory.messages import AssistantMessage, ToolCall, ToolResult
from zerocode.memory.transcript import Entry, Head, TranscriptStore


class CountingStore:
    """Wraps a TranscriptStore and counts calls and entries read, to show restore cost."""

    def __init__(self, inner: TranscriptStore) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()
        self.entries_read = 0

    def head(self, app_id: str) -> Head:
        self.calls["head"] += 1
        return self.inner.head(app_id)

    def append(self, app_id: str, entries: Sequence[Entry], expected_head: int) -> None:
        self.calls["append"] += 1
        self.inner.append(app_id, entries, expected_head)

    def tail(self, app_id: str, limit: int) -> list[Entry]:
        self.calls["tail"] += 1
        out = self.inner.tail(app_id, limit)
        self.entries_read += len(out)
        return out

    def get(self, app_id: str, seq: int) -> Entry | None:
        self.calls["get"] += 1
        out = self.inner.get(app_id, seq)
        self.entries_read += out is not None
        return out

    def delete_app(self, app_id: str) -> int:
        self.calls["delete_app"] += 1
        return self.inner.delete_app(app_id)

    def reset(self) -> None:
        self.calls.clear()
        self.entries_read = 0


def tool_step(
    memory: Memory,
    turn: Turn,
    n: int,
    calls: int = 2,
    payload: str = "x",
    failed: Sequence[int] = (),
) -> None:
    """Commit one step of ``calls`` write_file calls; indexes in ``failed`` fail."""
    tool_calls = tuple(
        ToolCall(
            f"t{turn.number}_{n}_{i}",
            "write_file",
            json.dumps({"path": f"src/c{i}.vue", "content": payload}),
        )
        for i in range(calls)
    )
    results = [
        ToolResult.failure(c, "disk full")
        if i in failed
        else ToolResult.success(c, f"wrote src/c{i}.vue")
        for i, c in enumerate(tool_calls)
    ]
    memory.commit_step(turn, AssistantMessage(None, tool_calls), results)


def as_openai(window: Any) -> list[dict[str, Any]]:
    return list(window.openai())
