"""The transcript: every message the model saw, in append order, grouped into units.

An entry is one stored message. Entries that must be seen together form a
*unit*: a user message; an assistant text; a summary; or an assistant message
with tool calls plus all of its results (a *step*, committed in one write).
The ``unit`` attribute of an entry is the sequence number of the unit's first
entry, so a tail read can tell a whole unit from a cut-off one.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from zerocode.memory.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResult,
    UserMessage,
    from_dict,
    to_dict,
)

log = logging.getLogger(__name__)


class EntryKind(StrEnum):
    USER = "user"
    CALL = "call"  # assistant message with tool calls
    RESULT = "result"  # one tool result of a call
    FINAL = "final"  # assistant text that ends a turn
    INTERRUPTED = "interrupted"  # note that closes a cut-off turn (M7)
    SUMMARY = "summary"  # running summary of evicted units
    # The platform's word to the model inside a turn (a failed build to repair, an answer
    # cut off to continue): a user-role message, after the assistant text it answers.
    FEEDBACK = "feedback"
    # The platform telling the model what changed outside any turn (M9: a version restored):
    # a user-role message that is a turn of its own, opened and closed by itself.
    NOTE = "note"


CLOSING_KINDS = frozenset({EntryKind.FINAL, EntryKind.INTERRUPTED, EntryKind.NOTE})


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One stored transcript message. ``message`` is None when the stored item is unreadable."""

    seq: int
    turn: int
    unit: int
    turn_start: int
    kind: EntryKind
    message: Message | None
    covers: int = 0  # SUMMARY: last seq the summary accounts for
    error: str | None = None
    # Random per write: tells a cache whether the newest entry is still the one it saw,
    # even after a transcript is cleared and its sequence numbers are reused.
    uid: str = field(default_factory=lambda: secrets.token_hex(6))


@dataclass(frozen=True, kw_only=True)
class Head:
    """The newest entry's position; seq 0 means an empty transcript."""

    seq: int
    turn: int
    turn_start: int
    kind: EntryKind | None
    uid: str = ""

    @property
    def turn_open(self) -> bool:
        return (
            self.kind is not None
            and self.kind not in CLOSING_KINDS
            and self.kind is not EntryKind.SUMMARY
        )


EMPTY_HEAD = Head(seq=0, turn=0, turn_start=0, kind=None)


def head_of(entry: Entry) -> Head:
    return Head(
        seq=entry.seq, turn=entry.turn, turn_start=entry.turn_start, kind=entry.kind, uid=entry.uid
    )


class TranscriptStore(Protocol):
    """Append-only per-app transcript storage.

    ``append`` writes all entries atomically and only if the newest stored seq
    equals ``expected_head``; otherwise it raises :class:`zerocode.errors.Conflict`
    and writes nothing. Reads never count or scan: ``tail`` touches at most
    ``limit`` items however long the history is.
    """

    def head(self, app_id: str) -> Head: ...

    def append(self, app_id: str, entries: Sequence[Entry], expected_head: int) -> None: ...

    def tail(self, app_id: str, limit: int) -> list[Entry]:
        """The newest ``limit`` entries, oldest first."""
        ...

    def get(self, app_id: str, seq: int) -> Entry | None: ...

    def delete_app(self, app_id: str) -> int:
        """Delete every entry of the app; returns how many were deleted."""
        ...


def check_continues(entries: Sequence[Entry], expected_head: int) -> None:
    """An append must continue the transcript: seqs ``expected_head + 1`` onwards, no gaps."""
    seqs = [e.seq for e in entries]
    if not seqs or seqs != list(range(expected_head + 1, expected_head + 1 + len(seqs))):
        raise ValueError(f"entries must continue the transcript from {expected_head + 1}: {seqs}")


def expires_at(retention_days: int, now: float) -> int | None:
    """The TTL attribute for an item written at ``now`` (epoch seconds); None keeps it."""
    return int(now) + retention_days * 86_400 if retention_days else None


# -- storage form shared by the adapters -------------------------------------------------


def entry_attributes(entry: Entry) -> dict[str, Any]:
    """Plain attributes an adapter stores; ``body`` is the message as JSON text."""
    if entry.message is None:
        raise ValueError("cannot store an unreadable entry")
    return {
        "seq": entry.seq,
        "turn": entry.turn,
        "unit": entry.unit,
        "turn_start": entry.turn_start,
        "kind": entry.kind.value,
        "covers": entry.covers,
        "uid": entry.uid,
        "body": json.dumps(to_dict(entry.message), ensure_ascii=False, separators=(",", ":")),
    }


def entry_from_attributes(app_id: str, attrs: dict[str, Any]) -> Entry:
    """Inverse of :func:`entry_attributes`. Never raises: bad data becomes an unreadable entry."""
    seq = _int(attrs.get("seq"), -1)
    turn, unit = _int(attrs.get("turn"), -1), _int(attrs.get("unit"), -1)
    turn_start = _int(attrs.get("turn_start"), -1)
    try:
        kind = EntryKind(str(attrs.get("kind")))
        body = attrs.get("body")
        if not isinstance(body, str):
            raise ValueError(f"body is {type(body).__name__}, not text")
        raw = json.loads(body)
        if not isinstance(raw, dict):
            raise ValueError("body is not a JSON object")
        message = from_dict(raw)
        if min(seq, turn, unit, turn_start) < 0:
            raise ValueError("missing or non-integer position attributes")
        return Entry(
            seq=seq,
            turn=turn,
            unit=unit,
            turn_start=turn_start,
            kind=kind,
            message=message,
            covers=_int(attrs.get("covers"), 0),
            uid=str(attrs.get("uid", "")),
        )
    except (ValueError, TypeError) as exc:
        log.error(
            "unreadable transcript item app=%s seq=%s: %s",
            app_id,
            seq,
            exc,
            extra={"app_id": app_id, "seq": seq},
        )
        return Entry(
            seq=seq,
            turn=turn,
            unit=unit,
            turn_start=turn_start,
            kind=EntryKind.RESULT,
            message=None,
            error=str(exc),
            uid=str(attrs.get("uid", "")),
        )


def head_from_attributes(app_id: str, attrs: dict[str, Any]) -> Head:
    """The head from stored position attributes; bad values never raise.

    An unknown kind counts as an open turn, so the next turn closes it with a note
    rather than trusting an item nobody can read.
    """
    try:
        kind = EntryKind(str(attrs.get("kind")))
    except ValueError:
        log.error("transcript head of app=%s has unknown kind %r", app_id, attrs.get("kind"))
        kind = EntryKind.RESULT
    return Head(
        seq=_int(attrs.get("seq"), 0),
        turn=max(_int(attrs.get("turn"), 0), 0),
        turn_start=max(_int(attrs.get("turn_start"), 0), 0),
        kind=kind,
        uid=str(attrs.get("uid", "")),
    )


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool):
        return default
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


# -- units -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Unit:
    """Entries the window keeps or evicts together."""

    entries: tuple[Entry, ...]

    @property
    def seq(self) -> int:
        return self.entries[0].seq

    @property
    def turn(self) -> int:
        return self.entries[0].turn

    @property
    def kind(self) -> EntryKind:
        return self.entries[0].kind

    @property
    def messages(self) -> tuple[Message, ...]:
        return tuple(e.message for e in self.entries if e.message is not None)


def group_units(app_id: str, entries: Iterable[Entry]) -> list[Unit]:
    """Whole, well-formed units in order.

    A unit cut off by the start of a tail read is left out silently; a unit
    with an unreadable or inconsistent entry is left out and logged with its
    keys, and stays in storage untouched.
    """
    groups: list[list[Entry]] = []
    for entry in entries:
        if groups and entry.unit == groups[-1][0].unit and entry.seq != entry.unit:
            groups[-1].append(entry)
        elif entry.seq == entry.unit:
            groups.append([entry])
        elif entry.message is None:
            _report(app_id, [entry], entry.error or "unreadable item")
        # else: continuation of a unit that began before this read: not ours to judge
    units = []
    for group in groups:
        problem = _unit_problem(group)
        if problem is None:
            units.append(Unit(tuple(group)))
        else:
            _report(app_id, group, problem)
    return units


def _report(app_id: str, group: Sequence[Entry], problem: str) -> None:
    keys = [e.seq for e in group]
    log.error(
        "left a transcript unit out of the window app=%s seqs=%s: %s",
        app_id,
        keys,
        problem,
        extra={"app_id": app_id, "seqs": keys},
    )


def _unit_problem(group: Sequence[Entry]) -> str | None:
    first = group[0]
    for entry in group:
        if entry.message is None:
            return f"unreadable item seq={entry.seq}: {entry.error}"
    message = first.message
    if first.kind in (EntryKind.USER, EntryKind.NOTE):
        ok = isinstance(message, UserMessage)
    elif first.kind in CLOSING_KINDS:
        ok = isinstance(message, AssistantMessage) and not message.tool_calls
    elif first.kind is EntryKind.SUMMARY:
        ok = isinstance(message, SystemMessage)
    elif first.kind is EntryKind.FEEDBACK:
        messages = [e.message for e in group]
        if not isinstance(messages[-1], UserMessage) or len(group) > 2:
            return f"malformed feedback unit of {len(group)} item(s)"
        if len(group) == 2 and not (
            isinstance(messages[0], AssistantMessage) and not messages[0].tool_calls
        ):
            return "malformed feedback unit: the text it answers is not assistant text"
        return None
    elif first.kind is EntryKind.CALL and isinstance(message, AssistantMessage):
        wanted = [c.id for c in message.tool_calls]
        got = [e.message.tool_call_id for e in group[1:] if isinstance(e.message, ToolResult)]
        if len(got) != len(group) - 1 or sorted(got) != sorted(wanted) or not wanted:
            return f"step answers {got}, expected {wanted}"
        return None
    else:
        ok = False
    if not ok or len(group) != 1:
        return f"malformed {first.kind.value} unit of {len(group)} item(s)"
    return None
