"""The model's window: a pure function of the transcript tail and the policy.

Nothing here does I/O, so the window after a cache loss or on a new container
is the same window, and the same function serves the reference model in tests.

:func:`build_window` composes four steps, each with one rule:

1. :func:`pin` — the system prompt and the newest user message are always in.
2. :class:`Elider` — units older than the newest ``full_turns`` turns carry
   stubs instead of large payloads.
3. :func:`budget` — whole units are kept newest-first until the message or the
   token bound would be crossed; everything older is evicted.
4. :func:`latest_summary` / :func:`reserve` / :func:`show_summary` — with the
   summary on, room for a summary as large as its bound is reserved whether
   or not one exists yet, and the newest is shown after the system prompt
   when something before the window is gone.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from zerocode.memory.messages import (
    FAILED_PREFIX,
    AssistantMessage,
    Message,
    OpenAIMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
    to_openai_list,
)
from zerocode.memory.tokens import (
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TokenCounter,
    count_tokens,
    message_tokens,
)
from zerocode.memory.transcript import EntryKind, Unit
from zerocode.memory.validation import validate

# Argument keys that name things rather than carry payloads; never elided.
_KEEP_KEYS = frozenset({"path", "name", "dir", "directory", "from", "to"})


@dataclass(frozen=True)
class WindowPolicy:
    """Bounds of the window. ``full_turns``: how many newest turns keep full payloads.
    ``summary_max_tokens``: the most a stored running summary may cost (it is cut to fit)."""

    max_messages: int = 60
    max_tokens: int = 24_000
    elide_min_chars: int = 512
    full_turns: int = 1
    summary: bool = False
    summary_max_tokens: int = 400

    def __post_init__(self) -> None:
        if (
            self.max_messages < 3
            or self.max_tokens < 1
            or self.elide_min_chars < 64
            or self.full_turns < 1
            or self.summary_max_tokens < 16
        ):
            raise ValueError(f"window policy out of range: {self}")

    @property
    def tail_items(self) -> int:
        """Entries to read from the store: enough for the largest window the bounds allow.

        With a running summary, twice that, so units that just left the window are
        still in the read and can be summarised before they are out of reach.
        """
        return self.max_messages * (2 if self.summary else 1)


@dataclass(frozen=True)
class Window:
    messages: tuple[Message, ...]
    tokens: tuple[int, ...]  # per message, framing included
    total_tokens: int  # all messages plus reply priming
    evicted_units: int  # units of the tail left out
    elided_payloads: int  # messages in the window whose payloads were elided
    summary_included: bool
    kept_units: tuple[int, ...] = ()  # seqs of the transcript units in the window

    def openai(self) -> list[OpenAIMessage]:
        return to_openai_list(self.messages)


def build_window(
    system: str, units: Sequence[Unit], policy: WindowPolicy, count: TokenCounter = count_tokens
) -> Window:
    """pin → elide → reserve (system prompt, summary) → budget → summary (show) → validate.

    What is kept is one contiguous run of the newest units (plus the pinned
    user message when the current turn alone fills the window), each unit
    whole; the result always passes :func:`validation.validate`.
    """
    pinned = pin(system, units)
    render = Elider(pinned.newest_turn, policy.full_turns, policy.elide_min_chars)
    summary = latest_summary(units) if policy.summary else None
    kept = budget(reserve(pinned.system, summary, policy, count), pinned, render, policy, count)

    conversation = pinned.conversation
    evicted = len(conversation) - len(kept)
    elided = sum(
        slim is not original
        for unit in conversation
        if unit.seq in kept
        for slim, original in zip(kept[unit.seq], unit.messages, strict=True)
    )
    include_summary = summary is not None and show_summary(conversation, evicted)
    head = [pinned.system, summary] if include_summary and summary else [pinned.system]
    body = [m for unit in conversation if unit.seq in kept for m in kept[unit.seq]]
    messages = tuple(head + body)
    validate(messages)
    per_message = tuple(message_tokens(m, count) for m in messages)
    return Window(
        messages,
        per_message,
        sum(per_message) + REPLY_PRIMING,
        evicted,
        elided,
        include_summary,
        tuple(sorted(kept)),
    )


# -- step 1: pin -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pinned:
    """What is in every window, whatever the bounds: the system prompt and the newest
    user message (the current turn's request), with the conversation they pin in."""

    system: SystemMessage
    user: Unit | None  # the newest user message; None only for an empty conversation
    conversation: tuple[Unit, ...]  # every unit but the summaries, oldest first
    newest_turn: int  # 0 for an empty conversation


def pin(system: str, units: Sequence[Unit]) -> Pinned:
    """Rule: the system prompt and the newest user message are never evicted.

    Invariant kept: the model always sees its instructions and the request it is
    answering, even when the current turn alone is longer than the bounds (then the
    window is the pinned request followed by the newest steps that fit).
    Summaries are not conversation; :func:`latest_summary` handles them.
    """
    conversation = tuple(u for u in units if u.kind is not EntryKind.SUMMARY)
    user = next((u for u in reversed(conversation) if u.kind is EntryKind.USER), None)
    newest_turn = conversation[-1].turn if conversation else 0
    return Pinned(SystemMessage(system), user, conversation, newest_turn)


# -- step 2: elide -----------------------------------------------------------------------


@dataclass(frozen=True)
class Elider:
    """Rule: in units older than the newest ``full_turns`` turns, every tool result and
    tool-call argument string (other than path-like keys) over ``min_chars`` becomes a
    stub naming its size and hash.

    Invariant kept: a unit's shape never changes (the same messages, call ids, names,
    paths and JSON structure; a failed result keeps its ``ERROR: `` prefix), so the
    elided window is as valid as the full one, and the model still sees what it did and
    whether it worked. Units of recent turns are returned as they are (same objects).
    """

    newest_turn: int
    full_turns: int
    min_chars: int

    def __call__(self, unit: Unit) -> tuple[Message, ...]:
        if unit.turn > self.newest_turn - self.full_turns:
            return unit.messages
        return tuple(elide(m, self.min_chars) for m in unit.messages)


# -- step 3: budget ----------------------------------------------------------------------


@dataclass(frozen=True)
class Reserved:
    """Room taken before any unit is kept: messages and tokens (framing included)."""

    messages: int
    tokens: int


def budget(
    reserved: Reserved,
    pinned: Pinned,
    render: Callable[[Unit], tuple[Message, ...]],
    policy: WindowPolicy,
    count: TokenCounter = count_tokens,
) -> dict[int, tuple[Message, ...]]:
    """Rule: after the ``reserved`` room (see :func:`reserve`) and the pinned user
    message, keep whole units newest-first; stop at the first unit that would cross
    ``max_messages`` or ``max_tokens`` (reply priming counted) and evict it and every
    older unit.

    Invariant kept: the kept units (returned as ``{unit seq: rendered messages}``) are
    the largest contiguous newest run that fits, each whole — a tool call never loses
    its results and a result never its call. Only the pinned message may exceed the
    bounds, because it is never evicted.
    """

    def cost(msgs: Sequence[Message]) -> int:
        return sum(message_tokens(m, count) for m in msgs)

    kept: dict[int, tuple[Message, ...]] = {}
    if pinned.user is not None:
        kept[pinned.user.seq] = render(pinned.user)
    used_messages = reserved.messages + sum(len(m) for m in kept.values())
    used_tokens = REPLY_PRIMING + reserved.tokens + sum(cost(m) for m in kept.values())
    for unit in reversed(pinned.conversation):
        if unit is pinned.user:
            continue
        msgs = render(unit)
        unit_cost = cost(msgs)
        if (
            used_messages + len(msgs) > policy.max_messages
            or used_tokens + unit_cost > policy.max_tokens
        ):
            break
        kept[unit.seq] = msgs
        used_messages += len(msgs)
        used_tokens += unit_cost
    return kept


# -- step 4: summary ---------------------------------------------------------------------


def latest_summary(units: Sequence[Unit]) -> Message | None:
    """Rule: of the running summaries in the tail, only the newest counts (each one
    already folds in the previous).

    Invariant kept: the window shows at most one summary, the newest.
    """
    summaries = [u for u in units if u.kind is EntryKind.SUMMARY]
    return summaries[-1].messages[0] if summaries else None


def reserve(
    system: SystemMessage,
    summary: Message | None,
    policy: WindowPolicy,
    count: TokenCounter = count_tokens,
) -> Reserved:
    """Rule: the system prompt's room is always reserved; with the summary on, so is one
    message of ``summary_max_tokens`` (or the newest summary's cost, if larger), whether
    or not a summary exists yet.

    Invariant kept: a new summary (bounded to ``summary_max_tokens``) never evicts
    anything more, so the summary a turn begins with covers every unit out of its window;
    with the summary off the reservation is the system prompt alone.
    """
    tokens = message_tokens(system, count)
    if not policy.summary:
        return Reserved(1, tokens)
    room = MESSAGE_OVERHEAD + policy.summary_max_tokens
    if summary is not None:
        room = max(room, message_tokens(summary, count))
    return Reserved(2, tokens + room)


def show_summary(conversation: Sequence[Unit], evicted: int) -> bool:
    """Rule: the summary is shown (right after the system prompt) only when something
    before the window is gone: a unit was evicted, or the tail read starts after seq 1.

    Invariant kept: a window that holds the whole conversation is exactly the window
    with the summary off.
    """
    return evicted > 0 or (bool(conversation) and conversation[0].seq > 1)


def evicted_units(
    units: Sequence[Unit], kept: Mapping[int, object] | Sequence[int], covered: int
) -> list[Unit]:
    """The conversation units left out of a window (``kept``: its unit seqs) that no
    summary covers yet (seq after ``covered``), oldest first: what the next running
    summary has to fold in."""
    inside = set(kept)
    return [
        u
        for u in units
        if u.kind is not EntryKind.SUMMARY and u.seq > covered and u.seq not in inside
    ]


# -- elision helpers ---------------------------------------------------------------------


def elide(message: Message, min_chars: int) -> Message:
    """The message with payloads over ``min_chars`` replaced by a stub; the same object if none."""
    if isinstance(message, ToolResult):
        body = message.content.removeprefix(FAILED_PREFIX) if not message.ok else message.content
        if len(body) <= min_chars:
            return message
        stub = elision_stub(body)
        return replace(message, content=stub if message.ok else FAILED_PREFIX + stub)
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = tuple(_elide_call(c, min_chars) for c in message.tool_calls)
        if all(a is b for a, b in zip(calls, message.tool_calls, strict=True)):
            return message
        return replace(message, tool_calls=calls)
    return message


def _elide_call(call: ToolCall, min_chars: int) -> ToolCall:
    if len(call.arguments) <= min_chars:
        return call
    args = call.parsed_arguments()
    if args is None:
        return replace(call, arguments=json.dumps({"elided": elision_stub(call.arguments)}))
    slim: dict[str, Any] = {}
    changed = False
    for key, value in args.items():
        if isinstance(value, str) and key not in _KEEP_KEYS and len(value) > min_chars:
            slim[key] = elision_stub(value)
            changed = True
        else:
            slim[key] = value
    if not changed:
        return call
    return replace(call, arguments=json.dumps(slim, ensure_ascii=False))


def elision_stub(payload: str) -> str:
    data = payload.encode("utf-8")
    size = f"{len(data)} B" if len(data) < 1024 else f"{len(data) / 1024:.1f} KB"
    digest = hashlib.sha256(data).hexdigest()[:16]
    return f"[content elided: {size}, sha256 {digest}; read the file for the current version]"
