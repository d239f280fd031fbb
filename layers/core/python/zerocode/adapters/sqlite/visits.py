"""The SQLite VisitStore (``publishing/visits.py``): per app and UTC day its views, visitors
and bot views (``visit_days``); per day its salt while the day may still be counted
(``visit_salts``); per app and day the hashes of the visitors counted (``visit_seen``),
forgotten with the day's salt. No address or User-Agent is stored, only the hashes."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Callable, Sequence

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.publishing.visits import (
    DAY_SECONDS,
    LATE_SECONDS,
    SALT_BYTES,
    DayVisits,
    Tally,
    day_of,
    salt_until,
)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS visit_days (app_id TEXT NOT NULL, day TEXT NOT NULL, "
    "views INTEGER NOT NULL, visitors INTEGER NOT NULL, bot_views INTEGER NOT NULL, "
    "PRIMARY KEY (app_id, day)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS visit_salts (day TEXT PRIMARY KEY, salt BLOB NOT NULL, "
    "until REAL NOT NULL) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS visit_seen (day TEXT NOT NULL, app_id TEXT NOT NULL, "
    "visitor TEXT NOT NULL, PRIMARY KEY (day, app_id, visitor)) WITHOUT ROWID",
)


class SqliteVisitStore:
    def __init__(
        self, db: SqliteDatabase, random: Callable[[int], bytes] = secrets.token_bytes
    ) -> None:
        self.db, self.random = db, random
        with db.lock:
            for statement in _SCHEMA:
                db.conn.execute(statement)

    def salt(self, day: str, now: float) -> bytes | None:
        with self.db.transaction() as conn:
            self._forget(conn, now)
            if salt_until(day) <= now:
                return None
            conn.execute(
                "INSERT INTO visit_salts (day, salt, until) VALUES (?, ?, ?) "
                "ON CONFLICT (day) DO NOTHING",
                (day, self.random(SALT_BYTES), salt_until(day)),
            )
            (salt,) = conn.execute("SELECT salt FROM visit_salts WHERE day = ?", (day,)).fetchone()
        return bytes(salt)

    def add(self, tallies: Sequence[Tally], now: float) -> None:
        with self.db.transaction() as conn:
            for tally in tallies:
                new = 0
                if salt_until(tally.day) > now:  # the day's visitors are still told apart
                    for visitor in tally.visitors:
                        new += conn.execute(
                            "INSERT INTO visit_seen (day, app_id, visitor) VALUES (?, ?, ?) "
                            "ON CONFLICT DO NOTHING",
                            (tally.day, tally.app_id, visitor),
                        ).rowcount
                else:
                    new = len(tally.visitors)
                conn.execute(
                    "INSERT INTO visit_days (app_id, day, views, visitors, bot_views) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (app_id, day) DO UPDATE SET "
                    "views = views + excluded.views, visitors = visitors + excluded.visitors, "
                    "bot_views = bot_views + excluded.bot_views",
                    (tally.app_id, tally.day, tally.views, new, tally.bot_views),
                )

    def days(self, app_id: str, first: str, last: str) -> list[DayVisits]:
        rows = self.db.query(
            "SELECT day, views, visitors, bot_views FROM visit_days "
            "WHERE app_id = ? AND day >= ? AND day <= ? ORDER BY day",
            (app_id, first, last),
        )
        return [DayVisits(day=r[0], views=r[1], visitors=r[2], bot_views=r[3]) for r in rows]

    def delete_app(self, app_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM visit_days WHERE app_id = ?", (app_id,))
            conn.execute("DELETE FROM visit_seen WHERE app_id = ?", (app_id,))

    @staticmethod
    def _forget(conn: sqlite3.Connection, now: float) -> None:
        """Salts past their time, and the visitors seen on their days, are gone."""
        old = [d for (d,) in conn.execute("SELECT day FROM visit_salts WHERE until <= ?", (now,))]
        for day in old:
            conn.execute("DELETE FROM visit_seen WHERE day = ?", (day,))
        conn.execute("DELETE FROM visit_salts WHERE until <= ?", (now,))
        # Visitors of any day past its time (one that never had a salt here too).
        past = day_of(now - DAY_SECONDS - LATE_SECONDS)
        conn.execute("DELETE FROM visit_seen WHERE day <= ?", (past,))
