"""The SQLite CheckStore: one row per check, numbered per app in the adding transaction."""

from __future__ import annotations

import json

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.engine.acceptance import (
    MAX_CHECKS,
    Check,
    CheckInvalid,
    StoredCheck,
    check_id,
    encode,
    parse_check,
    retire_reason,
)
from zerocode.errors import Conflict, NotFound


class SqliteCheckStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.lock:
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS checks (app_id TEXT NOT NULL, n INTEGER NOT NULL, "
                "body TEXT NOT NULL, added_turn INTEGER NOT NULL, retired TEXT, "
                "retired_turn INTEGER, PRIMARY KEY (app_id, n)) WITHOUT ROWID"
            )

    def add(self, app_id: str, check: Check, turn: int) -> StoredCheck:
        with self.db.transaction() as conn:
            last, live = conn.execute(
                "SELECT COALESCE(MAX(n), 0), COUNT(*) FILTER (WHERE retired IS NULL) "
                "FROM checks WHERE app_id = ?",
                (app_id,),
            ).fetchone()
            if live >= MAX_CHECKS:
                raise CheckInvalid(
                    f"the app has {MAX_CHECKS} checks; retire one that no longer applies first"
                )
            conn.execute(
                "INSERT INTO checks (app_id, n, body, added_turn) VALUES (?, ?, ?, ?)",
                (app_id, last + 1, encode(check), turn),
            )
        return StoredCheck(id=check_id(last + 1), check=check, added_turn=turn)

    def retire(self, app_id: str, check_id_: str, reason: str, turn: int) -> StoredCheck:
        why = retire_reason(reason)
        n = _number(check_id_)
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT retired FROM checks WHERE app_id = ? AND n = ?", (app_id, n)
            ).fetchone()
            if row is None:
                raise NotFound(f"check {check_id_} not found")
            if row[0] is not None:
                raise Conflict(f"check {check_id_} is retired already")
            conn.execute(
                "UPDATE checks SET retired = ?, retired_turn = ? WHERE app_id = ? AND n = ?",
                (why, turn, app_id, n),
            )
        return next(c for c in self.list(app_id) if c.id == check_id_)

    def list(self, app_id: str) -> list[StoredCheck]:
        rows = self.db.query(
            "SELECT n, body, added_turn, retired, retired_turn FROM checks WHERE app_id = ? "
            "ORDER BY n",
            (app_id,),
        )
        return [
            StoredCheck(
                id=check_id(n),
                check=parse_check(json.loads(body)),
                added_turn=added,
                retired=retired,
                retired_turn=retired_turn,
            )
            for n, body, added, retired, retired_turn in rows
        ]

    def delete_app(self, app_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM checks WHERE app_id = ?", (app_id,))


def _number(check_id_: str) -> int:
    if not check_id_.startswith("c") or not check_id_[1:].isdigit() or len(check_id_) > 8:
        raise NotFound(f"check {check_id_[:20]} not found")
    return int(check_id_[1:])
