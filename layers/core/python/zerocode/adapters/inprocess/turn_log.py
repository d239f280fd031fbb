"""TurnLog in this process's memory: one server's turns, for readers on its event loop.

Enough for one machine (a turn runs in the process that keeps its log); a server that
restarts loses its logs, and the store's record of the turn says what became of it. Bounded:
a finished turn's log is dropped ``keep_seconds`` after its ``done``, and past ``max_turns``
logs the oldest finished ones go first (a running turn's log is never dropped).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from zerocode.engine.events import TurnEvent
from zerocode.engine.turn_log import KEEP_SECONDS, Entries, Logged, OutOfStep, check_batch, logged


@dataclass
class _Log:
    entries: Entries = field(default_factory=Entries)
    finished_at: float | None = None


class InProcessTurnLog:
    def __init__(
        self,
        keep_seconds: float = KEEP_SECONDS,
        max_turns: int = 2000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if keep_seconds <= 0 or max_turns < 1:
            raise ValueError("keep_seconds and max_turns must be positive")
        self.keep_seconds, self.max_turns, self.clock = keep_seconds, max_turns, clock
        self._logs: dict[tuple[str, int], _Log] = {}
        self._stops: set[tuple[str, int]] = set()

    async def append(self, app_id: str, turn: int, event: TurnEvent) -> Logged:
        log = self._open(app_id, turn)
        entry = logged(turn, len(log.entries.items) + 1, event)
        self._add(log, (entry,))
        return entry

    async def append_many(self, app_id: str, turn: int, entries: Sequence[Logged]) -> None:
        check_batch(entries)
        if not entries:
            return
        log = self._logs.get((app_id, turn))
        items = log.entries.items if log is not None else []
        if items and items[-1] == entries[-1]:
            return  # written already: a retry
        log = self._open(app_id, turn)
        if entries[0].seq != len(items) + 1:
            raise OutOfStep(f"turn {turn} of app {app_id}: {entries[0].id} after {len(items)}")
        self._add(log, entries)

    def _open(self, app_id: str, turn: int) -> _Log:
        """The turn's log, begun if it has none; ValueError once it has its done."""
        log = self._logs.get((app_id, turn))
        if log is None:
            self._prune()
            log = self._logs[(app_id, turn)] = _Log()
        if log.finished_at is not None:
            raise ValueError(f"turn {turn} of app {app_id} has ended: its log is closed")
        return log

    def _add(self, log: _Log, entries: Sequence[Logged]) -> None:
        if entries[-1].done:
            log.finished_at = self.clock()
        log.entries.extend(entries)

    async def read(self, app_id: str, turn: int, after: int = 0) -> list[Logged]:
        log = self._logs.get((app_id, turn))
        return [] if log is None else log.entries.items[max(after, 0) :]

    async def follow(self, app_id: str, turn: int, after: int = 0) -> AsyncIterator[Logged]:
        log = self._logs.get((app_id, turn))
        if log is None:
            return
        async for entry in log.entries.follow(after):
            yield entry

    async def last(self, app_id: str, turn: int) -> Logged | None:
        log = self._logs.get((app_id, turn))
        return log.entries.items[-1] if log is not None and log.entries.items else None

    async def begin(self, app_id: str, turn: int) -> None:
        self._logs.pop((app_id, turn), None)
        self._stops.discard((app_id, turn))

    async def request_stop(self, app_id: str, turn: int) -> None:
        self._stops.add((app_id, turn))

    async def stop_requested(self, app_id: str, turn: int) -> bool:
        return (app_id, turn) in self._stops

    def _prune(self) -> None:
        now = self.clock()
        for key, log in list(self._logs.items()):
            if log.finished_at is not None and now - log.finished_at > self.keep_seconds:
                del self._logs[key]
                self._stops.discard(key)
        finished = sorted(
            (log.finished_at, key) for key, log in self._logs.items() if log.finished_at is not None
        )
        while len(self._logs) >= self.max_turns and finished:
            key = finished.pop(0)[1]
            del self._logs[key]
            self._stops.discard(key)
