"""The running summary of turns that left the window: what is due, how it is stored, its bound.

The facade decides *when* a summary is due and stores it; a summarizer decides *what* it
says. A summarizer is either a plain function (deterministic, used in tests) or an async
one that asks a model (:class:`AsyncSummarizer`); the second is asked before the turn's
first write, so the model call never runs inside a store transaction and never holds a
worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from zerocode.memory.tokens import TokenCounter, count_tokens
from zerocode.memory.transcript import Unit

# How a stored summary starts; the window shows it as a system message after the prompt.
SUMMARY_PREFIX = "Summary of the earlier conversation: "
CUT_MARK = "[…] "


class Summarizer(Protocol):
    """Condenses evicted units (and the previous summary) into a running summary."""

    def __call__(self, previous: str | None, evicted: Sequence[Unit]) -> str: ...


@runtime_checkable
class AsyncSummarizer(Protocol):
    """A summarizer that asks a model; awaited before the turn's first write. ``app_id``
    and ``turn``: the app, and the turn the summary is stored with, under which its
    request's usage is kept (issue 43; empty and 0 where no app asks)."""

    async def summarize(
        self, previous: str | None, evicted: Sequence[Unit], *, app_id: str = "", turn: int = 0
    ) -> str: ...


@dataclass(frozen=True, kw_only=True)
class SummaryDue:
    """Units that left the window since the last summary, read at store head ``head``."""

    head: int  # the newest stored seq when this was computed; stale once the head moves
    turn: int  # the turn it is stored with (the head's turn + 1)
    previous: str | None  # the stored previous summary, as stored (prefix included)
    evicted: tuple[Unit, ...]
    covers: int  # the last seq the new summary will cover


@dataclass(frozen=True)
class NewSummary:
    """A summary ready to store with the next user message (see ``Memory.begin_turn``)."""

    head: int  # must still be the store's head when it is written, or it is dropped
    text: str  # as stored: prefixed and bounded
    covers: int


def stored_text(text: str, max_tokens: int, count: TokenCounter = count_tokens) -> str:
    """The summary as stored: prefixed, and cut to at most ``max_tokens`` tokens.

    A running summary grows at its end, so the cut keeps the newest part: whole lines are
    dropped from the start while more than one remains, then the rest is cut by
    characters. Either cut is marked with ``[…]``.
    """
    full = SUMMARY_PREFIX + text
    if count(full) <= max_tokens:
        return full
    lines = text.strip().splitlines()
    while len(lines) > 1 and count(SUMMARY_PREFIX + CUT_MARK + "\n".join(lines)) > max_tokens:
        lines.pop(0)
    rest = "\n".join(lines)
    if count(SUMMARY_PREFIX + CUT_MARK + rest) <= max_tokens:
        return SUMMARY_PREFIX + CUT_MARK + rest
    low, high = 0, len(rest)  # the longest end of ``rest`` that fits
    while low < high:
        mid = (low + high + 1) // 2
        if count(SUMMARY_PREFIX + CUT_MARK + rest[len(rest) - mid :]) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return SUMMARY_PREFIX + CUT_MARK + rest[len(rest) - low :]


def previous_text(stored: str | None) -> str | None:
    """A stored summary's text without its prefix (what a model is asked to extend)."""
    if stored is None:
        return None
    return stored.removeprefix(SUMMARY_PREFIX).removeprefix(CUT_MARK)
