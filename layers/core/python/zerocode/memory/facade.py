"""The memory facade the turn engine uses: write the transcript, derive the window.

Every write goes through the store first (the source of truth) and then
updates the cache only if the cache was exactly one write behind; every read
checks the cache's head against the store and otherwise rebuilds from a
bounded tail read (M3, M6). Every window passes the validator (M4).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from zerocode.errors import Conflict
from zerocode.memory.cache import CachedTail, WindowCache
from zerocode.memory.messages import AssistantMessage, SystemMessage, ToolResult, UserMessage
from zerocode.memory.tokens import TokenCounter, count_tokens
from zerocode.memory.transcript import (
    CLOSING_KINDS,
    Entry,
    EntryKind,
    Head,
    TranscriptStore,
    Unit,
    group_units,
)
from zerocode.memory.window import Window, WindowPolicy, build_window

log = logging.getLogger(__name__)


class Summarizer(Protocol):
    """Condenses evicted units (and the previous summary) into a running summary."""

    def __call__(self, previous: str | None, evicted: Sequence[Unit]) -> str: ...


@dataclass
class Turn:
    """A turn in progress: its number and the head this writer last wrote."""

    app_id: str
    number: int
    start: int  # seq of the turn's user message
    head: int
    head_uid: str
    closed: bool = False


def user_content(text: str, element: dict[str, Any] | None) -> str:
    """The user message as the model sees it, with the element picked in the preview."""
    if not element:
        return text
    fields = ", ".join(f"{k}: {element[k]!r}" for k in ("pagePath", "tag", "selector", "text")
                       if element.get(k) not in (None, ""))
    return f"{text}\n\n[Selected element] {fields}"


def interrupted_note(turn: int, reason: str) -> str:
    return (f"[Turn {turn} was interrupted ({reason}) before it finished. The tool steps "
            "above were applied and nothing else was done. That request is not pending: do "
            "not resume it unless the user asks again.]")


class Memory:
    def __init__(self, store: TranscriptStore, cache: WindowCache, policy: WindowPolicy, *,
                 summarizer: Summarizer | None = None, count: TokenCounter = count_tokens) -> None:
        self.store, self.cache, self.policy = store, cache, policy
        self.summarizer, self.count = summarizer, count

    # -- writes -----------------------------------------------------------------------

    def begin_turn(self, app_id: str, text: str, element: dict[str, Any] | None = None,
                   system: str = "") -> Turn:
        """Append the user message; first close a turn left open by a crash (M7)."""
        head = self.store.head(app_id)
        number = head.turn + 1
        entries: list[Entry] = []
        seq = head.seq
        if head.turn_open:
            seq += 1
            entries.append(Entry(seq, head.turn, seq, head.turn_start, EntryKind.INTERRUPTED,
                                 AssistantMessage(interrupted_note(head.turn, "crash or timeout"))))
        summary = self._summary_due(app_id, system, pending=entries) if self.policy.summary \
            else None
        if summary is not None:
            seq += 1
            entries.append(Entry(seq, number, seq, seq, EntryKind.SUMMARY,
                                 SystemMessage(summary[0]), covers=summary[1]))
        seq += 1
        entries.append(Entry(seq, number, seq, seq, EntryKind.USER,
                             UserMessage(user_content(text, element))))
        self._append(app_id, entries, head.seq, head.uid)
        return Turn(app_id, number, seq, seq, entries[-1].uid)

    def commit_step(self, turn: Turn, call: AssistantMessage,
                    results: Sequence[ToolResult]) -> None:
        """One assistant tool-call message and all its results, in one atomic write (M2)."""
        wanted = [c.id for c in call.tool_calls]
        got = [r.tool_call_id for r in results]
        if not wanted or sorted(wanted) != sorted(got):
            raise ValueError(f"a step must answer every tool call exactly once: "
                             f"calls {wanted}, results {got}")
        seq = turn.head + 1
        entries = [Entry(seq, turn.number, seq, turn.start, EntryKind.CALL, call)]
        entries += [Entry(seq + i, turn.number, seq, turn.start, EntryKind.RESULT, r)
                    for i, r in enumerate(results, start=1)]
        self._write(turn, entries)

    def commit_final(self, turn: Turn, text: str) -> None:
        """The assistant's closing text; the turn is complete."""
        self._close(turn, EntryKind.FINAL, text)

    def mark_interrupted(self, turn: Turn, reason: str) -> None:
        """Close a turn that was cut off, so the next turn does not re-run it (M7)."""
        self._close(turn, EntryKind.INTERRUPTED, interrupted_note(turn.number, reason))

    def _close(self, turn: Turn, kind: EntryKind, text: str) -> None:
        seq = turn.head + 1
        self._write(turn, [Entry(seq, turn.number, seq, turn.start, kind,
                                 AssistantMessage(text or "(no text)"))])

    def _write(self, turn: Turn, entries: list[Entry]) -> None:
        if turn.closed:
            raise ValueError(f"turn {turn.number} of app {turn.app_id} is already closed")
        self._append(turn.app_id, entries, turn.head, turn.head_uid)
        turn.head, turn.head_uid = entries[-1].seq, entries[-1].uid
        turn.closed = entries[-1].kind in CLOSING_KINDS

    def _append(self, app_id: str, entries: list[Entry], head: int, head_uid: str) -> None:
        cached = self.cache.get(app_id)
        try:
            self.store.append(app_id, entries, expected_head=head)
        except Conflict:
            self.cache.delete(app_id)
            raise
        if cached is None or (cached.head, cached.head_uid) != (head, head_uid):
            self.cache.delete(app_id)
            return
        fresh = _advance(cached, entries, self.policy.tail_items)
        if fresh is None:
            self.cache.delete(app_id)
        else:
            self.cache.put(app_id, fresh)

    # -- reads ------------------------------------------------------------------------

    def window(self, app_id: str, system: str) -> Window:
        """The messages the model receives next, within the policy's bounds, validated."""
        return build_window(system, self.units(app_id), self.policy, self.count)

    def units(self, app_id: str) -> list[Unit]:
        tail = self._tail(app_id)
        entries = (tail.pinned, *tail.entries) if tail.pinned else tail.entries
        return group_units(app_id, entries)

    def _tail(self, app_id: str) -> CachedTail:
        cached = self.cache.get(app_id)
        if cached is not None:
            head = self.store.head(app_id)
            if (head.seq, head.uid) == (cached.head, cached.head_uid):
                return cached
        tail = self._read_tail(app_id)
        self.cache.put(app_id, tail)
        return tail

    def _read_tail(self, app_id: str) -> CachedTail:
        entries = self.store.tail(app_id, self.policy.tail_items)
        if not entries:
            return CachedTail(0, "", ())
        newest = entries[-1]
        pinned = None
        if 0 < newest.turn_start < entries[0].seq:
            pinned = self.store.get(app_id, newest.turn_start)
        return CachedTail(newest.seq, newest.uid, tuple(entries), pinned)

    def head(self, app_id: str) -> Head:
        return self.store.head(app_id)

    # -- lifecycle --------------------------------------------------------------------

    def delete(self, app_id: str) -> int:
        """Forget the app's transcript (M8); returns entries deleted."""
        self.cache.delete(app_id)
        deleted = self.store.delete_app(app_id)
        self.cache.delete(app_id)
        return deleted

    # -- running summary (optional) ---------------------------------------------------

    def _summary_due(self, app_id: str, system: str,
                     pending: list[Entry]) -> tuple[str, int] | None:
        """(summary text, last seq covered) when units were evicted past the last summary."""
        if self.summarizer is None:
            return None
        units = self.units(app_id) + group_units(app_id, pending)
        kept = set(build_window(system, units, self.policy, self.count).kept_units)
        summaries = [u for u in units if u.kind is EntryKind.SUMMARY]
        previous = summaries[-1] if summaries else None
        covered = previous.entries[0].covers if previous else 0
        evicted = [u for u in units if u.kind is not EntryKind.SUMMARY
                   and u.seq > covered and u.seq not in kept]
        if not evicted:
            return None
        prior = previous.messages[0].content if previous else None
        text = self.summarizer(prior if isinstance(prior, str) else None, evicted)
        return f"Summary of the earlier conversation: {text}", evicted[-1].entries[-1].seq


def _advance(cached: CachedTail, new: list[Entry], limit: int) -> CachedTail | None:
    """The tail a rebuild would read after ``new`` was appended, or None to force a rebuild."""
    known = (*((cached.pinned,) if cached.pinned else ()), *cached.entries, *new)
    entries = (cached.entries + tuple(new))[-limit:]
    newest = entries[-1]
    pinned = None
    if 0 < newest.turn_start < entries[0].seq:
        pinned = next((e for e in known if e.seq == newest.turn_start), None)
        if pinned is None:
            return None
    return CachedTail(newest.seq, newest.uid, entries, pinned)
