"""The model's window: a pure function of the transcript tail and the policy.

Nothing here does I/O, so the window after a cache loss or on a new container
is the same window, and the same function serves the reference model in tests.

:func:`build_window` composes four steps, each with one rule:

1. :func:`pin` — the system prompt and the current turn's request are always in.
2. :class:`Elider` — units older than the newest ``full_turns`` turns carry
   stubs instead of large payloads.
3. :func:`budget` — the token budget is spent newest-first, one whole unit at a
   time, in full or else elided: the current turn's units first (its newest is
   always kept), then older turns, each only with its request.
4. :func:`latest_summary` / :func:`reserve` / :func:`show_summary` — with the
   summary on, room for a summary as large as its bound is reserved whether
   or not one exists yet, and the newest is shown after the system prompt
   when something before the window is gone.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
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

# The message bound's default: a safety bound, not the budget. The default token budget
# holds ~770 messages of the sample Vue session (~31 tokens a message once older payloads
# are elided; bench/memory.py), so tokens decide; it also bounds the entries a rebuild
# reads (WindowPolicy.tail_items).
DEFAULT_MAX_MESSAGES = 1000
# The largest step: 64 tool calls (ZEROCODE_MAX_TOOL_CALLS_PER_STEP's upper limit, since a
# step is one DynamoDB transaction of at most 100 items) and the message that made them.
MAX_STEP_MESSAGES = 65

# Argument keys that name things rather than carry payloads; never elided.
_KEEP_KEYS = frozenset({"path", "name", "dir", "directory", "from", "to"})


@dataclass(frozen=True)
class WindowPolicy:
    """Bounds of the window. ``max_tokens`` is the budget; ``max_messages`` is a safety
    bound, large enough not to bind before the budget in ordinary sessions, and it sets
    how many entries a rebuild reads (:attr:`tail_items`). ``full_turns``: how many newest
    turns keep full payloads. ``summary_max_tokens``: the most a stored running summary
    may cost (it is cut to fit)."""

    max_messages: int = DEFAULT_MAX_MESSAGES
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
        """Entries to read from the store: enough for the largest window the bounds allow,
        which is ``max_messages`` plus the largest step (the current turn's newest unit is
        kept even past the bound, so a read must always hold it whole).

        With a running summary, twice that, so units that just left the window are
        still in the read and can be summarised before they are out of reach.
        """
        return (self.max_messages + MAX_STEP_MESSAGES) * (2 if self.summary else 1)


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

    What is kept is the current turn (its request, its newest unit always, its older
    units while they fit) and then whole older turns, newest first, the oldest of them
    perhaps only its request and newest units; every unit whole, in full or elided. The
    result always passes :func:`validation.validate`.
    """
    pinned = pin(system, units)
    render = Elider(pinned.newest_turn, policy.full_turns, policy.elide_min_chars)
    summary = latest_summary(units) if policy.summary else None
    kept = budget(reserve(pinned.system, summary, policy, count), pinned, render, policy, count)

    conversation = pinned.conversation
    evicted = len(conversation) - len(kept)
    shown = _shown(conversation, kept)
    elided = sum(
        slim is not original
        for unit in shown
        for slim, original in zip(kept[unit.seq], unit.messages, strict=True)
    )
    include_summary = summary is not None and show_summary(conversation, evicted)
    head = [pinned.system, summary] if include_summary and summary else [pinned.system]
    body = [m for unit in shown for m in kept[unit.seq]]
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


def _shown(conversation: Sequence[Unit], kept: Mapping[int, object]) -> list[Unit]:
    """The kept units in conversation order, found from the end (they are the newest)."""
    if not kept:
        return []
    oldest = min(kept)
    start = len(conversation)
    while start > 0 and conversation[start - 1].seq >= oldest:
        start -= 1
    return [u for u in conversation[start:] if u.seq in kept]


# -- step 1: pin -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pinned:
    """What is in every window, whatever the bounds: the system prompt and the current
    turn's request, with the conversation they pin in."""

    system: SystemMessage
    user: Unit | None  # the current turn's request; None if empty or unreadable
    conversation: tuple[Unit, ...]  # every unit but the summaries, oldest first
    newest_turn: int  # 0 for an empty conversation


def pin(system: str, units: Sequence[Unit]) -> Pinned:
    """Rule: the system prompt and the current turn's request (the newest turn's user
    message) are never evicted.

    Invariant kept: the model always sees its instructions and the request it is
    answering, even when the current turn alone is longer than the bounds (then the
    window is the pinned request followed by the current turn's newest units, elided if
    need be). A request that could not be read is not replaced by an older turn's: then
    nothing is pinned but the system prompt. Summaries are not conversation;
    :func:`latest_summary` handles them.
    """
    conversation = tuple(u for u in units if u.kind is not EntryKind.SUMMARY)
    newest_turn = conversation[-1].turn if conversation else 0
    user = next(
        (u for u in reversed(conversation) if u.kind is EntryKind.USER and u.turn == newest_turn),
        None,
    )
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


@dataclass(frozen=True)
class TurnUnits:
    """One turn's units in the window's input: its request (None when the tail read began
    after it, or it could not be read) and the rest (steps, final, interrupted note),
    oldest first."""

    number: int
    request: Unit | None
    rest: tuple[Unit, ...]


def split_turns(conversation: Sequence[Unit]) -> list[TurnUnits]:
    """The conversation (summaries already left out) as turns, oldest first."""
    return list(reversed(list(turns_newest_first(conversation))))


def turns_newest_first(conversation: Sequence[Unit]) -> Iterator[TurnUnits]:
    """The conversation's turns, newest first, read lazily from its end: a walk that stops
    early never looks at older units."""
    group: list[Unit] = []  # newest first
    for unit in reversed(conversation):
        if group and unit.turn != group[0].turn:
            yield _turn_of(group[::-1])
            group = []
        group.append(unit)
    if group:
        yield _turn_of(group[::-1])


def is_note_turn(turn: TurnUnits) -> bool:
    """A turn that is one platform note (M9), told to the model between requests."""
    return turn.request is None and len(turn.rest) == 1 and turn.rest[0].kind is EntryKind.NOTE


def _turn_of(group: Sequence[Unit]) -> TurnUnits:
    request = next((u for u in group if u.kind is EntryKind.USER), None)
    return TurnUnits(group[0].turn, request, tuple(u for u in group if u is not request))


class _Room:
    """What is left of the bounds; ``fits`` offers a unit in full, else elided."""

    def __init__(
        self,
        policy: WindowPolicy,
        reserved: Reserved,
        render: Callable[[Unit], tuple[Message, ...]],
        count: TokenCounter,
    ) -> None:
        self.messages = policy.max_messages - reserved.messages
        self.tokens = policy.max_tokens - REPLY_PRIMING - reserved.tokens
        self.render, self.count, self.min_chars = render, count, policy.elide_min_chars

    def cost(self, msgs: Sequence[Message]) -> int:
        return sum(message_tokens(m, self.count) for m in msgs)

    def slim(self, unit: Unit) -> tuple[Message, ...]:
        return tuple(elide(m, self.min_chars) for m in unit.messages)

    def fits(
        self, unit: Unit, messages: int = 0, tokens: int = 0
    ) -> tuple[tuple[Message, ...], int] | None:
        """The unit as it is rendered if that fits beside ``messages``/``tokens`` already
        taken, else elided if that fits, else None."""
        if messages + len(unit.entries) > self.messages:
            return None  # elision never removes a message
        full = self.render(unit)
        cost = self.cost(full)
        if tokens + cost <= self.tokens:
            return full, cost
        slim = self.slim(unit)
        if all(a is b for a, b in zip(slim, full, strict=True)):
            return None
        cost = self.cost(slim)
        return (slim, cost) if tokens + cost <= self.tokens else None

    def spend(self, msgs: Sequence[Message], cost: int) -> None:
        self.messages -= len(msgs)
        self.tokens -= cost


def _second(pair: tuple[object, int]) -> int:
    return pair[1]


def budget(
    reserved: Reserved,
    pinned: Pinned,
    render: Callable[[Unit], tuple[Message, ...]],
    policy: WindowPolicy,
    count: TokenCounter = count_tokens,
) -> dict[int, tuple[Message, ...]]:
    """Rule: after the ``reserved`` room (see :func:`reserve`) and the pinned request,
    spend ``max_tokens`` (reply priming counted) and ``max_messages`` newest-first, one
    whole unit at a time, each as ``render`` gives it if it fits, else elided
    (:func:`elide`) if that fits:

    1. the current turn's units, newest first; the newest is always kept (elided if it
       does not fit in full, even when it does not fit elided), and the walk stops at
       the first other unit that does not fit even elided;
    2. then older turns, newest first: a turn is shown only with its request and at
       least its newest unit; its units go newest first while they fit; the walk stops
       at the first turn that is not shown whole (or has no request in the tail). A
       platform note (a turn of one NOTE unit, M9) is shown whole or stops the walk.

    Invariants kept: units are whole, so a tool call never loses its results nor a
    result its call; the current turn's latest step is always in, and no unit of the
    current turn is left out while an older turn's unit is in; a turn's steps are never
    shown without the request that asked for them (the current turn's request is
    pinned); what is left out is every unit older than the oldest kept turn, and at
    most one run of units inside one turn, between its request and its newest units.
    Only the pinned request and the current turn's newest unit may take the window past
    its bounds, because they are never dropped. Returns ``{unit seq: rendered
    messages}``.
    """
    room = _Room(policy, reserved, render, count)
    kept: dict[int, tuple[Message, ...]] = {}
    if pinned.user is not None:
        msgs = render(pinned.user)
        kept[pinned.user.seq] = msgs
        room.spend(msgs, room.cost(msgs))
    turns = turns_newest_first(pinned.conversation)
    current = next(turns, None)
    if current is None:
        return kept
    for index, unit in enumerate(reversed(current.rest)):
        got = room.fits(unit)
        if got is None and index == 0:  # never dropped: the cheaper of full and elided
            got = min(((m, room.cost(m)) for m in (render(unit), room.slim(unit))), key=_second)
        if got is None:
            return kept
        kept[unit.seq] = got[0]
        room.spend(*got)
    for turn in turns:
        if is_note_turn(turn):  # a note stands alone: no request, nothing answers it
            got = room.fits(turn.rest[0])
            if got is None:
                return kept
            kept[turn.rest[0].seq] = got[0]
            room.spend(*got)
            continue
        if turn.request is None:
            return kept
        request = room.fits(turn.request)
        if request is None:
            return kept
        shown: list[tuple[Unit, tuple[Message, ...], int]] = []
        used_messages, used_tokens = len(request[0]), request[1]
        for unit in reversed(turn.rest):
            got = room.fits(unit, used_messages, used_tokens)
            if got is None:
                break
            shown.append((unit, *got))
            used_messages += len(got[0])
            used_tokens += got[1]
        if not shown:  # a request alone would read as a request never answered
            return kept
        for unit, msgs, cost in [(turn.request, *request), *shown]:
            kept[unit.seq] = msgs
            room.spend(msgs, cost)
        if len(shown) < len(turn.rest):
            return kept
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
    """What the next running summary has to fold in, oldest first: every conversation
    unit after ``covered`` (the seq the last summary accounts for) up to the newest unit
    left out of the window (``kept``: its unit seqs); empty when nothing new is out.

    Units left out are every unit before the oldest kept turn, and perhaps a run inside a
    turn shown only in part; the kept units before that run (the turn's request) are
    included too, so everything up to the summary's ``covers`` seq has been summarised
    and none is skipped when it leaves the window later.
    """
    inside = set(kept)
    conversation = [u for u in units if u.kind is not EntryKind.SUMMARY and u.seq > covered]
    out = [u.seq for u in conversation if u.seq not in inside]
    if not out:
        return []
    return [u for u in conversation if u.seq <= out[-1]]


# -- elision helpers ---------------------------------------------------------------------


def elide(message: Message, min_chars: int) -> Message:
    """The message with payloads over ``min_chars`` replaced by a stub; the same object if none."""
    slim = _elided(message, min_chars)
    return message if slim is None else slim


# Cached (messages are immutable): older units are elided again at each model call of a
# turn, and parsing and hashing their payloads would be most of a window's build.
@functools.lru_cache(maxsize=4096)
def _elided(message: Message, min_chars: int) -> Message | None:
    """:func:`elide`'s stubbed message, or None when nothing is over ``min_chars``."""
    if isinstance(message, ToolResult):
        body = message.content.removeprefix(FAILED_PREFIX) if not message.ok else message.content
        if len(body) <= min_chars:
            return None
        stub = elision_stub(body)
        return replace(message, content=stub if message.ok else FAILED_PREFIX + stub)
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = tuple(_elide_call(c, min_chars) for c in message.tool_calls)
        if all(a is b for a, b in zip(calls, message.tool_calls, strict=True)):
            return None
        return replace(message, tool_calls=calls)
    return None


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
