"""TurnLog in SQLite: turns' events kept with the rest of a local platform's data.

What the in-process log cannot do: outlive the server. A client that reattaches after a
restart finds the log of the turn it watched, without its ``done`` (the process that would
have written it is gone); the engine then closes it as interrupted, as it closes the turn
itself (engine/closing.py). One row per event; a turn's log is readable for
``keep_seconds`` after it was last written, then swept when a new turn starts a log.
Store calls run in a worker thread; a follower polls (every ``poll_seconds``) while the turn
runs, since another process may be the one appending.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Callable

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.engine.events import TurnEvent
from zerocode.engine.turn_log import KEEP_SECONDS, Logged, logged, polled


class SqliteTurnLog:
    def __init__(
        self,
        db: SqliteDatabase,
        keep_seconds: float = KEEP_SECONDS,
        poll_seconds: float = 0.1,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.db, self.keep_seconds, self.poll_seconds, self.now = (
            db,
            keep_seconds,
            poll_seconds,
            now,
        )
        with db.lock:
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS turn_events (app_id TEXT NOT NULL, "
                "turn INTEGER NOT NULL, seq INTEGER NOT NULL, name TEXT NOT NULL, "
                "data TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (app_id, turn, seq)) "
                "WITHOUT ROWID"
            )
            db.conn.execute("CREATE INDEX IF NOT EXISTS turn_events_at ON turn_events (at)")

    async def append(self, app_id: str, turn: int, event: TurnEvent) -> Logged:
        return await asyncio.to_thread(self._append, app_id, turn, event)

    def _append(self, app_id: str, turn: int, event: TurnEvent) -> Logged:
        with self.db.transaction() as conn:
            last = conn.execute(
                "SELECT seq, name FROM turn_events WHERE app_id = ? AND turn = ? "
                "ORDER BY seq DESC LIMIT 1",
                (app_id, turn),
            ).fetchone()
            if last is None:
                conn.execute(
                    "DELETE FROM turn_events WHERE at < ?", (self.now() - self.keep_seconds,)
                )
            elif last[1] == "done":
                raise ValueError(f"turn {turn} of app {app_id} has ended: its log is closed")
            entry = logged(turn, (last[0] if last else 0) + 1, event)
            conn.execute(
                "INSERT INTO turn_events (app_id, turn, seq, name, data, at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (app_id, turn, entry.seq, entry.name, entry.data, self.now()),
            )
            return entry

    async def read(self, app_id: str, turn: int, after: int = 0) -> list[Logged]:
        return await asyncio.to_thread(self._read, app_id, turn, after)

    def _read(self, app_id: str, turn: int, after: int) -> list[Logged]:
        rows = self.db.query(
            "SELECT seq, name, data FROM turn_events WHERE app_id = ? AND turn = ? AND seq > ? "
            "ORDER BY seq",
            (app_id, turn, max(after, 0)),
        )
        return [Logged(turn=turn, seq=seq, name=name, data=data) for seq, name, data in rows]

    async def follow(self, app_id: str, turn: int, after: int = 0) -> AsyncIterator[Logged]:
        if not await self.known(app_id, turn):
            return
        ended = functools.partial(asyncio.to_thread, self._done_at, app_id, turn)
        reader = functools.partial(self.read, app_id, turn)
        async for entry in polled(reader, ended, after, self.poll_seconds):
            yield entry

    def _done_at(self, app_id: str, turn: int) -> int | None:
        rows = self.db.query(
            "SELECT seq FROM turn_events WHERE app_id = ? AND turn = ? AND name = 'done'",
            (app_id, turn),
        )
        return int(rows[0][0]) if rows else None

    async def known(self, app_id: str, turn: int) -> bool:
        rows = await asyncio.to_thread(
            self.db.query,
            "SELECT 1 FROM turn_events WHERE app_id = ? AND turn = ? LIMIT 1",
            (app_id, turn),
        )
        return bool(rows)
