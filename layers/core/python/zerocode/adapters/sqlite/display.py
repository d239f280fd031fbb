"""The SQLite DisplayHistoryStore: the chat as the user sees it, newest page first."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.memory.display import (
    DisplayEntry,
    DisplayPage,
    DisplayRole,
    DisplayStatus,
    KeyClock,
    check_page,
)
from zerocode.memory.transcript import (
    expires_at,
)


class SqliteDisplayHistoryStore:
    def __init__(
        self, db: SqliteDatabase, retention_days: int = 0, now: Callable[[], float] = time.time
    ) -> None:
        self.db, self.retention_days, self.now = db, retention_days, now
        self.keys = KeyClock()

    def append(
        self,
        app_id: str,
        role: DisplayRole,
        content: str,
        *,
        status: DisplayStatus = DisplayStatus.OK,
        turn: int = 0,
        element: dict[str, Any] | None = None,
        images: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        mode: str | None = None,
    ) -> DisplayEntry:
        key = self.keys.next_key()
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO display (app_id, id, role, content, status, turn, element, "
                "expires_at, images, usage, mode) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (
                    app_id,
                    key,
                    role.value,
                    content,
                    status.value,
                    turn,
                    json.dumps(element) if element is not None else None,
                    expires_at(self.retention_days, self.now()),
                    json.dumps(images) if images else None,
                    json.dumps(usage) if usage else None,
                    mode,
                ),
            )
        return DisplayEntry.keyed(
            key,
            role=role,
            content=content,
            status=status,
            turn=turn,
            element=element,
            images=images,
            usage=usage,
            mode=mode,
        )

    def page(self, app_id: str, before: str | None = None, limit: int = 20) -> DisplayPage:
        check_page(before, limit)
        rows = self.db.query(
            "SELECT id, role, content, status, turn, element, images, usage, mode FROM display "
            "WHERE app_id = ? "
            "AND id < ? ORDER BY id DESC LIMIT ?",
            (app_id, before or "~", limit + 1),
        )
        entries = [
            DisplayEntry.keyed(
                r[0],
                role=DisplayRole(r[1]),
                content=r[2],
                status=DisplayStatus(r[3]),
                turn=r[4],
                element=json.loads(r[5]) if r[5] else None,
                images=json.loads(r[6]) if r[6] else None,
                usage=json.loads(r[7]) if r[7] else None,
                mode=r[8],
            )
            for r in rows[:limit]
        ]
        return DisplayPage(entries, entries[-1].id if len(rows) > limit else None)

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM display WHERE app_id = ?", (app_id,)).rowcount
