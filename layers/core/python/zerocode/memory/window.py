"""The model's window: a pure function of the transcript tail and the policy.

Nothing here does I/O, so the window after a cache loss or on a new container
is the same window, and the same function serves the reference model in tests.

:func:`build_window` composes four steps, each with one rule:

1. :func:`pin` (memory/budget.py) — the system prompt and the current turn's
   request are always in.
2. :class:`Elider` (memory/elision.py) — units older than the newest
   ``full_turns`` turns carry stubs instead of large payloads.
3. :func:`budget` (memory/budget.py) — the token budget is spent newest-first,
   one whole unit at a time, in full or else elided: the current turn's units
   first (its newest is always kept), then older turns, each only with its
   request.
4. :func:`latest_summary` / :func:`reserve` / :func:`show_summary` (here) — with
   the summary on, room for a summary as large as its bound is reserved whether
   or not one exists yet, and the newest is shown after the system prompt when
   something before the window is gone.

The bounds are :class:`WindowPolicy` (memory/bounds.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from zerocode.memory.bounds import DEFAULT_MAX_MESSAGES, MAX_STEP_MESSAGES, WindowPolicy
from zerocode.memory.budget import Reserved, budget, pin, split_turns
from zerocode.memory.elision import Elider, elide, elision_stub, newest_images
from zerocode.memory.messages import Message, OpenAIMessage, SystemMessage, to_openai_list
from zerocode.memory.tokens import (
    MESSAGE_OVERHEAD,
    REPLY_PRIMING,
    TokenCounter,
    count_tokens,
    message_tokens,
)
from zerocode.memory.transcript import EntryKind, Unit
from zerocode.memory.validation import validate

# The window's steps and bounds live in memory/bounds.py, elision.py and budget.py; they
# are imported from here too, as the window's parts.
__all__ = [
    "DEFAULT_MAX_MESSAGES",
    "MAX_STEP_MESSAGES",
    "Elider",
    "Reserved",
    "Window",
    "WindowPolicy",
    "budget",
    "build_window",
    "elide",
    "elision_stub",
    "evicted_units",
    "latest_summary",
    "pin",
    "reserve",
    "show_summary",
    "split_turns",
]


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
    render = Elider(
        pinned.newest_turn,
        policy.full_turns,
        policy.elide_min_chars,
        newest_images(pinned.conversation, policy.images),
    )
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
