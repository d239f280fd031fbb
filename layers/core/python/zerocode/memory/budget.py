"""What a window keeps of the conversation: the pinned request (:func:`pin`), then whole
units bought newest-first with what is left of the bounds (:func:`budget`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from zerocode.memory.bounds import WindowPolicy
from zerocode.memory.elision import elide
from zerocode.memory.messages import Message, SystemMessage
from zerocode.memory.tokens import REPLY_PRIMING, TokenCounter, count_tokens, message_tokens
from zerocode.memory.transcript import EntryKind, Unit

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
    :func:`window.latest_summary` handles them.
    """
    conversation = tuple(u for u in units if u.kind is not EntryKind.SUMMARY)
    newest_turn = conversation[-1].turn if conversation else 0
    user = next(
        (u for u in reversed(conversation) if u.kind is EntryKind.USER and u.turn == newest_turn),
        None,
    )
    return Pinned(SystemMessage(system), user, conversation, newest_turn)


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


Fit = tuple[tuple[Message, ...], int]  # a unit's messages as kept, and their cost


class _Room:
    """What is left of the bounds, and what was kept with the rest; ``fits`` offers a unit
    in full, else elided."""

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
        self.kept: dict[int, tuple[Message, ...]] = {}

    def cost(self, msgs: Sequence[Message]) -> int:
        return sum(message_tokens(m, self.count) for m in msgs)

    def slim(self, unit: Unit) -> tuple[Message, ...]:
        return tuple(elide(m, self.min_chars) for m in unit.messages)

    def fits(self, unit: Unit, messages: int = 0, tokens: int = 0) -> Fit | None:
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

    def cheapest(self, unit: Unit) -> Fit:
        """The cheaper of the unit in full and elided, whether it fits or not."""
        return min(((m, self.cost(m)) for m in (self.render(unit), self.slim(unit))), key=_second)

    def keep(self, unit: Unit, msgs: tuple[Message, ...], cost: int) -> None:
        self.kept[unit.seq] = msgs
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
    """Rule: after the ``reserved`` room (see :func:`window.reserve`) and the pinned
    request, spend ``max_tokens`` (reply priming counted) and ``max_messages``
    newest-first, one whole unit at a time, each as ``render`` gives it if it fits, else
    elided (:func:`elide`) if that fits:

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
    if pinned.user is not None:
        msgs = render(pinned.user)
        room.keep(pinned.user, msgs, room.cost(msgs))
    turns = turns_newest_first(pinned.conversation)
    current = next(turns, None)
    if current is not None and _keep_current(current, room):
        for turn in turns:
            if not _keep_older(turn, room):
                break
    return room.kept


def _keep_current(turn: TurnUnits, room: _Room) -> bool:
    """Rule 1 of :func:`budget`: True when every unit of the current turn is kept, so the
    walk goes on to older turns."""
    for index, unit in enumerate(reversed(turn.rest)):
        got = room.fits(unit)
        if got is None and index == 0:  # never dropped: the cheaper of full and elided
            got = room.cheapest(unit)
        if got is None:
            return False
        room.keep(unit, *got)
    return True


def _keep_older(turn: TurnUnits, room: _Room) -> bool:
    """Rule 2 of :func:`budget` for one older turn: True when it is kept whole, so the walk
    goes on to the turn before it."""
    if is_note_turn(turn):  # a note stands alone: no request, nothing answers it
        got = room.fits(turn.rest[0])
        if got is None:
            return False
        room.keep(turn.rest[0], *got)
        return True
    if turn.request is None:
        return False
    request = room.fits(turn.request)
    if request is None:
        return False
    shown = _newest_beside(turn, request, room)
    if not shown:  # a request alone would read as a request never answered
        return False
    for unit, msgs, cost in [(turn.request, *request), *shown]:
        room.keep(unit, msgs, cost)
    return len(shown) == len(turn.rest)


def _newest_beside(
    turn: TurnUnits, request: Fit, room: _Room
) -> list[tuple[Unit, tuple[Message, ...], int]]:
    """The turn's newest units that fit beside its request, newest first."""
    shown: list[tuple[Unit, tuple[Message, ...], int]] = []
    used_messages, used_tokens = len(request[0]), request[1]
    for unit in reversed(turn.rest):
        got = room.fits(unit, used_messages, used_tokens)
        if got is None:
            break
        shown.append((unit, *got))
        used_messages += len(got[0])
        used_tokens += got[1]
    return shown
