"""The memory facade the turn engine uses: write the transcript, derive the window.

Every write goes through the store first (the source of truth) and then
updates the cache only if the cache was exactly one write behind; every read
checks the cache's head against the store and otherwise rebuilds from a
bounded tail read (M3, M6). Every window passes the validator (M4).

With the running summary on, the turn's first write also stores a summary of the units
that left the window since the last one (:mod:`zerocode.memory.summary`). A summarizer
that fails is logged and the turn goes on without a new summary.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from zerocode.errors import Conflict
from zerocode.memory.cache import CachedTail, WindowCache
from zerocode.memory.messages import (
    AssistantMessage,
    ImageRef,
    Message,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from zerocode.memory.summary import (
    AsyncSummarizer,
    NewSummary,
    Summarizer,
    SummaryDue,
    stored_text,
)
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
from zerocode.memory.window import Window, WindowPolicy, build_window, evicted_units

__all__ = ["AsyncSummarizer", "Memory", "Summarizer", "Turn", "interrupted_note", "user_content"]

log = logging.getLogger(__name__)


@dataclass(kw_only=True)
class Turn:
    """A turn in progress: its number and the head this writer last wrote."""

    app_id: str
    number: int
    start: int  # seq of the turn's user message
    head: int
    head_uid: str
    closed: bool = False

    def entry(self, *, seq: int, unit: int, kind: EntryKind, message: Message) -> Entry:
        """An entry of this turn at ``seq``, in the unit that starts at ``unit``."""
        return Entry(
            seq=seq, turn=self.number, unit=unit, turn_start=self.start, kind=kind, message=message
        )


def user_content(text: str, element: dict[str, Any] | None) -> str:
    """The user message as the model sees it, with the element picked in the preview."""
    if not element:
        return text
    fields = ", ".join(
        f"{k}: {element[k]!r}"
        for k in ("pagePath", "tag", "selector", "text", "src")
        if element.get(k) not in (None, "")
    )
    return f"{text}\n\n[Selected element] {fields}"


def interrupted_note(turn: int, reason: str, detail: str | None = None) -> str:
    """The note that closes a cut-off turn. ``detail`` says what it did, when the closer
    knows more than its committed steps (see zerocode.engine.recovery)."""
    did = detail or "The tool steps above were applied and nothing else was done."
    return (
        f"[Turn {turn} was interrupted ({reason}) before it finished. {did} That request "
        "is not pending: do not resume it unless the user asks again.]"
    )


CRASHED = "the server stopped before it finished"


class Memory:
    def __init__(
        self,
        store: TranscriptStore,
        cache: WindowCache,
        policy: WindowPolicy,
        *,
        summarizer: Summarizer | AsyncSummarizer | None = None,
        count: TokenCounter = count_tokens,
    ) -> None:
        self.store, self.cache, self.policy = store, cache, policy
        self.summarizer, self.count = summarizer, count

    # -- writes -----------------------------------------------------------------------

    def begin_turn(
        self,
        app_id: str,
        text: str,
        element: dict[str, Any] | None = None,
        system: str = "",
        *,
        summary: NewSummary | None = None,
        crashed: str | None = None,
        images: tuple[ImageRef, ...] = (),
    ) -> Turn:
        """Append the user message; first close a turn left open by a crash (M7), with
        ``crashed`` saying what it did when the caller knows (else its steps are the record).

        With the running summary on, a summary of what left the window goes in the same
        write: ``summary`` when given (from :meth:`open_turn`; dropped if the head moved
        since), else the synchronous summarizer's, if any.
        """
        head = self.store.head(app_id)
        number = head.turn + 1
        entries = _crash_note(head, crashed)
        seq = head.seq + len(entries)
        asked = UserMessage(user_content(text, element), images)
        new = (
            self._new_summary(app_id, system, head, _pending(head, asked), summary)
            if self.policy.summary
            else None
        )
        if new is not None:
            seq += 1
            entries.append(
                _opening(
                    seq=seq,
                    turn=number,
                    kind=EntryKind.SUMMARY,
                    message=SystemMessage(new.text),
                    covers=new.covers,
                )
            )
        seq += 1
        entries.append(_opening(seq=seq, turn=number, kind=EntryKind.USER, message=asked))
        self._append(app_id, entries, head.seq, head.uid)
        return Turn(app_id=app_id, number=number, start=seq, head=seq, head_uid=entries[-1].uid)

    async def open_turn(
        self,
        app_id: str,
        text: str,
        element: dict[str, Any] | None = None,
        system: str = "",
        crashed: str | None = None,
        images: tuple[ImageRef, ...] = (),
    ) -> Turn:
        """:meth:`begin_turn` for async callers (store calls run in a worker thread).

        With an :class:`AsyncSummarizer` (a model), the summary is asked for first, outside
        any store write. If it fails or times out, that is logged and the turn begins
        without a new summary: the summary never fails a turn.
        """
        summary = None
        if self.policy.summary and isinstance(self.summarizer, AsyncSummarizer):
            due = await asyncio.to_thread(
                self.summary_due, app_id, system, UserMessage(user_content(text, element), images)
            )
            if due is not None:
                summary = await self._ask(app_id, self.summarizer, due)
        return await asyncio.to_thread(
            functools.partial(self.begin_turn, summary=summary, crashed=crashed, images=images),
            app_id,
            text,
            element,
            system,
        )

    async def _ask(
        self, app_id: str, summarizer: AsyncSummarizer, due: SummaryDue
    ) -> NewSummary | None:
        try:
            text = await summarizer.summarize(
                due.previous, due.evicted, app_id=app_id, turn=due.turn
            )
        except Exception as exc:  # any failure: no new summary, but never no turn
            _summary_skipped(app_id, due, exc)
            return None
        return NewSummary(due.head, self._bounded(text), due.covers)

    def record_note(self, app_id: str, text: str, crashed: str | None = None) -> int:
        """Tell the model something that changed outside any turn (M9: a version restored),
        as a user-role note that is a turn of its own; a turn left open by a crash is
        closed first (M7). Returns the note's turn number. The caller holds the app's turn
        lease, so no turn is running."""
        head = self.store.head(app_id)
        entries = _crash_note(head, crashed)
        seq = head.seq + len(entries) + 1
        number = head.turn + 1
        entries.append(
            _opening(seq=seq, turn=number, kind=EntryKind.NOTE, message=UserMessage(text))
        )
        self._append(app_id, entries, head.seq, head.uid)
        return number

    def commit_step(
        self, turn: Turn, call: AssistantMessage, results: Sequence[ToolResult]
    ) -> None:
        """One assistant tool-call message and all its results, in one atomic write (M2)."""
        wanted = [c.id for c in call.tool_calls]
        got = [r.tool_call_id for r in results]
        if not wanted or sorted(wanted) != sorted(got):
            raise ValueError(
                f"a step must answer every tool call exactly once: calls {wanted}, results {got}"
            )
        seq = turn.head + 1
        entries = [turn.entry(seq=seq, unit=seq, kind=EntryKind.CALL, message=call)]
        entries += [
            turn.entry(seq=seq + i, unit=seq, kind=EntryKind.RESULT, message=r)
            for i, r in enumerate(results, start=1)
        ]
        self._write(turn, entries)

    def commit_feedback(self, turn: Turn, answer: str | None, feedback: str) -> None:
        """The platform's word to the model inside the turn (e.g. a failed build to repair),
        after the assistant text it answers (if any), in one write. The turn stays open."""
        seq = turn.head + 1
        messages: list[AssistantMessage | UserMessage] = [UserMessage(feedback)]
        if answer is not None:
            messages.insert(0, AssistantMessage(answer or "(no text)"))
        entries = [
            turn.entry(seq=seq + i, unit=seq, kind=EntryKind.FEEDBACK, message=m)
            for i, m in enumerate(messages)
        ]
        self._write(turn, entries)

    def commit_final(self, turn: Turn, text: str) -> None:
        """The assistant's closing text; the turn is complete."""
        self._close(turn, EntryKind.FINAL, text)

    def mark_interrupted(self, turn: Turn, reason: str, detail: str | None = None) -> None:
        """Close a turn that was cut off, so the next turn does not re-run it (M7)."""
        self._close(turn, EntryKind.INTERRUPTED, interrupted_note(turn.number, reason, detail))

    def _close(self, turn: Turn, kind: EntryKind, text: str) -> None:
        seq = turn.head + 1
        closing = AssistantMessage(text or "(no text)")
        self._write(turn, [turn.entry(seq=seq, unit=seq, kind=kind, message=closing)])

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

    def window(self, app_id: str, system: str, max_tokens: int | None = None) -> Window:
        """The messages the model receives next, within the policy's bounds, validated.
        ``max_tokens`` lowers the budget for one read (a model that refused the window as
        too long for its context)."""
        policy = self.policy
        if max_tokens is not None and max_tokens < policy.max_tokens:
            policy = replace(policy, max_tokens=max(1, max_tokens))
        return build_window(system, self.units(app_id), policy, self.count)

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
            return CachedTail(head=0, head_uid="", entries=())
        newest = entries[-1]
        pinned = None
        if 0 < newest.turn_start < entries[0].seq:
            pinned = self.store.get(app_id, newest.turn_start)
        return CachedTail(
            head=newest.seq, head_uid=newest.uid, entries=tuple(entries), pinned=pinned
        )

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

    def summary_due(self, app_id: str, system: str, asked: UserMessage) -> SummaryDue | None:
        """What the summary stored with the user message ``asked`` must cover: the units
        that leave the window once ``asked`` is in it, since the last summary (None when
        there are none)."""
        head = self.store.head(app_id)
        return self._due(app_id, system, head, _pending(head, asked))

    def _due(self, app_id: str, system: str, head: Head, pending: list[Entry]) -> SummaryDue | None:
        units = self.units(app_id) + group_units(app_id, pending)
        kept = build_window(system, units, self.policy, self.count).kept_units
        summaries = [u for u in units if u.kind is EntryKind.SUMMARY]
        previous = summaries[-1] if summaries else None
        covered = previous.entries[0].covers if previous else 0
        evicted = evicted_units(units, kept, covered)
        if not evicted:
            return None
        prior = previous.messages[0].content if previous else None
        return SummaryDue(
            head=head.seq,
            turn=head.turn + 1,
            previous=prior if isinstance(prior, str) else None,
            evicted=tuple(evicted),
            covers=evicted[-1].entries[-1].seq,
        )

    def _new_summary(
        self, app_id: str, system: str, head: Head, pending: list[Entry], given: NewSummary | None
    ) -> NewSummary | None:
        if given is not None:
            if given.head == head.seq:
                return given
            log.info(
                "running summary dropped for app %s: the transcript moved from %d to %d",
                app_id,
                given.head,
                head.seq,
                extra={"app_id": app_id},
            )
            return None
        if self.summarizer is None or isinstance(self.summarizer, AsyncSummarizer):
            return None
        due = self._due(app_id, system, head, pending)
        if due is None:
            return None
        try:
            text = self.summarizer(due.previous, due.evicted)
        except Exception as exc:  # any failure: no new summary, but never no turn
            _summary_skipped(app_id, due, exc)
            return None
        return NewSummary(head.seq, self._bounded(text), due.covers)

    def _bounded(self, text: str) -> str:
        return stored_text(text, self.policy.summary_max_tokens, self.count)


def _summary_skipped(app_id: str, due: SummaryDue, exc: Exception) -> None:
    log.warning(
        "running summary skipped for app %s (%d units left the window): %s",
        app_id,
        len(due.evicted),
        exc,
        extra={"app_id": app_id},
    )


def _pending(head: Head, asked: UserMessage) -> list[Entry]:
    """The entries :meth:`Memory.begin_turn` writes after ``head`` (the summary aside)."""
    entries = _crash_note(head)
    seq = head.seq + len(entries) + 1
    return [
        *entries,
        _opening(seq=seq, turn=head.turn + 1, kind=EntryKind.USER, message=asked),
    ]


def _opening(*, seq: int, turn: int, kind: EntryKind, message: Message, covers: int = 0) -> Entry:
    """The entry that opens ``turn`` at ``seq``: a unit of its own, and the turn's start."""
    return Entry(
        seq=seq, turn=turn, unit=seq, turn_start=seq, kind=kind, message=message, covers=covers
    )


def _crash_note(head: Head, detail: str | None = None) -> list[Entry]:
    """The note that closes a turn left open by a crash (M7), or nothing."""
    if not head.turn_open:
        return []
    seq = head.seq + 1
    return [
        Entry(
            seq=seq,
            turn=head.turn,
            unit=seq,
            turn_start=head.turn_start,
            kind=EntryKind.INTERRUPTED,
            message=AssistantMessage(interrupted_note(head.turn, CRASHED, detail)),
        )
    ]


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
    return CachedTail(head=newest.seq, head_uid=newest.uid, entries=entries, pinned=pinned)
