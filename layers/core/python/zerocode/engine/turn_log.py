"""A turn's event log: what a reattaching client replays, in order, with nothing missing.

A turn outlives the connection that started it (docs/engine.md, "Turns outlive the
connection"), so its events cannot live only in that connection's stream. Each event is
appended here as it happens and gets the next sequence number of its turn (1, 2, ...); on
the wire its id is ``{turn}:{seq}`` (SSE ``id:``), and a client that lost the stream asks
for what came after the last id it saw. The log ends with the turn's ``done`` event; a log
whose turn can no longer end (its process died) is closed by whoever finds it so, with a
``done: interrupted`` of its own, so a reader never waits for what will not come.

Events are kept as their wire form (the SSE event name and its JSON data), so a replay is
byte for byte what the live stream sent.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from zerocode.engine.events import DoneEvent, TurnEvent, event_data, event_name

_ID = re.compile(r"^(\d+):(\d+)$")
# How long a finished turn's log stays readable (the display calls a turn "recent" for a day).
KEEP_SECONDS = 24 * 3600


@dataclass(frozen=True, kw_only=True)
class Logged:
    """One event of a turn's log, in its wire form."""

    turn: int
    seq: int
    name: str  # the SSE event name; "" for text (sent as an unnamed event)
    data: str  # the event's JSON

    @property
    def id(self) -> str:
        return f"{self.turn}:{self.seq}"

    @property
    def done(self) -> bool:
        return self.name == "done"

    def frame(self) -> bytes:
        """The SSE frame, with its id."""
        head = f"id: {self.id}\n" + (f"event: {self.name}\n" if self.name else "")
        return (head + f"data: {self.data}\n\n").encode()


class OutOfStep(RuntimeError):
    """A batch numbered from other than the log's next number: appending it would leave a
    gap or repeat an id, so nothing of it is written."""


def check_batch(entries: Sequence[Logged]) -> None:
    """ValueError unless ``entries`` are of one turn, numbered one after another, with a
    ``done`` only last: what :meth:`TurnLog.append_many` may write in one go."""
    for i, entry in enumerate(entries):
        if entry.turn != entries[0].turn or entry.seq != entries[0].seq + i:
            raise ValueError("a batch of the turn log must be one turn's consecutive entries")
        if entry.done and i != len(entries) - 1:
            raise ValueError("a batch of the turn log may have a done only last")


def logged(turn: int, seq: int, event: TurnEvent) -> Logged:
    """``event`` as the ``seq``-th entry of ``turn``'s log."""
    return Logged(turn=turn, seq=seq, name=event_name(event), data=event_data(event))


async def polled(
    read: Callable[[int], Awaitable[list[Logged]]],
    ended_at: Callable[[], Awaitable[int | None]],
    after: int,
    pause: float,
) -> AsyncIterator[Logged]:
    """:meth:`TurnLog.follow` for a store that can only be polled: ``read(after)`` gives the
    entries after a point, ``ended_at()`` the number of the log's ``done`` (0 when the log
    is gone), or None while the turn runs. A ``done`` written between a read and the check
    is read before the follower ends."""
    seen = max(after, 0)
    while True:
        for entry in await read(seen):
            seen = entry.seq
            yield entry
            if entry.done:
                return
        end = await ended_at()
        if end is not None:
            if end > seen:
                continue  # it ended since the read above: read what came
            return
        await asyncio.sleep(pause)


class Entries:
    """A log's entries in this process's memory, with followers woken by each new one."""

    def __init__(self) -> None:
        self.items: list[Logged] = []
        # Set (and replaced) on every add: a follower waits on the one it saw before reading.
        self._changed = asyncio.Event()

    @property
    def closed(self) -> bool:
        return bool(self.items) and self.items[-1].done

    def add(self, entry: Logged) -> None:
        self.extend((entry,))

    def extend(self, entries: Sequence[Logged]) -> None:
        """Several entries at once: followers are woken once for all of them."""
        self.items.extend(entries)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def follow(self, after: int = 0) -> Following:
        """The entries after ``after``, then each new one, until and including ``done``."""
        return Following(self, after)


class Following:
    """A follower of :class:`Entries`: an async iterator of entries, which can also be asked
    for everything that has come at once (:meth:`batch`). The SSE writer waits on that
    itself, its wait timed for keep-alives, instead of a task of its own handing entries
    over one by one: one wake per event-loop tick for all that came, not two per entry."""

    def __init__(self, entries: Entries, after: int = 0) -> None:
        self.entries, self.seen, self.over = entries, max(after, 0), False
        self._ready: list[Logged] = []  # read by the iterator, not yet given
        self._at = 0  # the next of them to give

    def __aiter__(self) -> Following:
        return self

    async def __anext__(self) -> Logged:
        if self._at == len(self._ready):
            self._ready, self._at = await self.batch(), 0
            if not self._ready:
                raise StopAsyncIteration
        self._at += 1
        return self._ready[self._at - 1]

    async def batch(self, wait: float | None = None) -> list[Logged]:
        """What came since the last call (up to and including ``done``), waiting for it
        when nothing has; empty once the ``done`` was given, or when ``wait`` seconds
        passed without anything (then :attr:`over` says which)."""
        if self._at < len(self._ready):
            ready, self._ready, self._at = self._ready[self._at :], [], 0
            return ready
        while not self.over:
            changed = self.entries._changed  # before reading: an add after the read sets it
            items = self.entries.items
            if len(items) > self.seen:
                new = items[self.seen :]
                end = next((i for i, entry in enumerate(new) if entry.done), None)
                if end is not None:
                    new, self.over = new[: end + 1], True
                self.seen = new[-1].seq
                return new
            if self.entries.closed:  # asked for what comes after its done: nothing
                self.over = True
                break
            try:
                async with asyncio.timeout(wait):
                    await changed.wait()
            except TimeoutError:
                return []
        return []


def parse_event_id(value: str, turn: int) -> int | None:
    """The sequence number in a ``Last-Event-ID`` of ``turn`` (None: not one of its ids)."""
    found = _ID.match(value.strip())
    if found is None or int(found.group(1)) != turn:
        return None
    return int(found.group(2))


def interrupted(turn: int, seq: int) -> Logged:
    """The ``done`` that closes a log whose turn can no longer end."""
    return logged(turn, seq, DoneEvent(status="interrupted", turn=turn))


class TurnLog(Protocol):
    """Where turns' events are kept for readers other than the one that started them."""

    async def append(self, app_id: str, turn: int, event: TurnEvent) -> Logged:
        """Add ``event`` to the turn's log as its next entry; the entry. Refuses (ValueError)
        to add anything after the log's ``done``."""
        ...

    async def append_many(self, app_id: str, turn: int, entries: Sequence[Logged]) -> None:
        """Add ``entries`` (numbered by their one writer, :func:`check_batch`) as the turn's
        next entries, all in one go where the store allows it (one round trip): what a
        writer that fell behind has queued. Refuses (ValueError) after the log's ``done``;
        :class:`OutOfStep` when the log's next number is not ``entries[0].seq``, unless
        its newest entry is already ``entries[-1]`` (a retry of a batch that was written)."""
        ...

    async def read(self, app_id: str, turn: int, after: int = 0) -> list[Logged]:
        """The turn's entries after sequence number ``after``, in order (empty when none)."""
        ...

    def follow(self, app_id: str, turn: int, after: int = 0) -> AsyncIterator[Logged]:
        """The entries after ``after``, then each new one as it is appended, until and
        including ``done``: no gap, no duplicate. Ends at once for an unknown turn; the caller
        makes sure the log gets its ``done`` (engine/turns.py closes a dead turn's log)."""
        ...

    async def last(self, app_id: str, turn: int) -> Logged | None:
        """The turn's newest entry; None when the turn has no log here (never had one, or
        it expired)."""
        ...

    async def begin(self, app_id: str, turn: int) -> None:
        """Start the turn's log afresh: a log under this number left by a turn that ended
        before its number was taken in the transcript is dropped (the caller holds the
        app's lease, so no turn of that number can be running)."""
        ...

    async def request_stop(self, app_id: str, turn: int) -> None:
        """Ask the process running the turn, wherever it is, to stop it."""
        ...

    async def stop_requested(self, app_id: str, turn: int) -> bool:
        """Whether someone asked to stop the turn (polled by the process running it)."""
        ...
