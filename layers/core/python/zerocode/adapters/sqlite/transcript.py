"""The SQLite TranscriptStore: a step's entries appended in one transaction."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence

from zerocode import faults
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.errors import Conflict
from zerocode.memory.transcript import (
    CLOSING_KINDS,
    EMPTY_HEAD,
    Entry,
    Head,
    check_continues,
    entry_attributes,
    entry_from_attributes,
    expires_at,
    head_from_attributes,
)

_COLUMNS = ("seq", "turn", "unit", "turn_start", "kind", "covers", "body", "uid")


class SqliteTranscriptStore:
    def __init__(
        self, db: SqliteDatabase, retention_days: int = 0, now: Callable[[], float] = time.time
    ) -> None:
        self.db, self.retention_days, self.now = db, retention_days, now

    def head(self, app_id: str) -> Head:
        rows = self.db.query(
            "SELECT seq, turn, turn_start, kind, uid FROM transcript "
            "WHERE app_id = ? ORDER BY seq DESC LIMIT 1",
            (app_id,),
        )
        if not rows:
            return EMPTY_HEAD
        return head_from_attributes(
            app_id, dict(zip(("seq", "turn", "turn_start", "kind", "uid"), rows[0], strict=True))
        )

    def append(self, app_id: str, entries: Sequence[Entry], expected_head: int) -> None:
        check_continues(entries, expected_head)
        faults.write("transcript")
        expires = expires_at(self.retention_days, self.now())
        rows = [(app_id, *(entry_attributes(e)[c] for c in _COLUMNS), expires) for e in entries]
        with self.db.transaction() as conn:
            found = (
                conn.execute(
                    "SELECT MAX(seq) FROM transcript WHERE app_id = ?", (app_id,)
                ).fetchone()[0]
                or 0
            )
            if found != expected_head:
                raise Conflict(
                    f"transcript of app {app_id} moved to {found} while this writer "
                    f"expected {expected_head}; another turn is writing"
                )
            try:
                conn.executemany(
                    "INSERT INTO transcript (app_id, seq, turn, unit, turn_start, "
                    "kind, covers, body, uid, expires_at) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?)",
                    rows,
                )
            except sqlite3.IntegrityError as exc:
                raise Conflict(f"transcript of app {app_id}: {exc}") from exc
        if any(e.kind in CLOSING_KINDS for e in entries):
            # A turn closed: its writes are done, and the WAL can go back to 0 bytes
            # (database.py; the turn's last few writes wait for the next turn's).
            self.db.checkpoint()

    def tail(self, app_id: str, limit: int) -> list[Entry]:
        rows = self.db.query(
            f"SELECT {', '.join(_COLUMNS)} FROM transcript WHERE app_id = ? "
            "ORDER BY seq DESC LIMIT ?",
            (app_id, limit),
        )
        return [
            entry_from_attributes(app_id, dict(zip(_COLUMNS, r, strict=True)))
            for r in reversed(rows)
        ]

    def get(self, app_id: str, seq: int) -> Entry | None:
        rows = self.db.query(
            f"SELECT {', '.join(_COLUMNS)} FROM transcript WHERE app_id = ? AND seq = ?",
            (app_id, seq),
        )
        return (
            entry_from_attributes(app_id, dict(zip(_COLUMNS, rows[0], strict=True)))
            if rows
            else None
        )

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM transcript WHERE app_id = ?", (app_id,)).rowcount

    def purge_expired(self) -> int:
        """What DynamoDB's TTL does in the background: drop items past their expiry."""
        with self.db.transaction() as conn:
            return conn.execute(
                "DELETE FROM transcript WHERE expires_at <= ?", (int(self.now()),)
            ).rowcount
