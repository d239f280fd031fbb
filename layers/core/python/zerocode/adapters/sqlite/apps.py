"""The SQLite AppStore: keyset paging over the apps table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from zerocode.adapters.sqlite.cursor import decode_cursor, encode_cursor
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.apps.records import FEATURED_PRIORITY, App, AppPage, CodeGenType, check_limit

_APP_COLUMNS = (
    "id",
    "owner",
    "name",
    "code_gen_type",
    "init_prompt",
    "preview_key",
    "deploy_key",
    "deploy_url",
    "cover",
    "priority",
    "created_at",
    "updated_at",
    "deploy_build_id",
    "deployed_at",
    "require_checks",
    "preview_cover",
)
# Columns added after the first release: (name, SQL type), added to older files at start.
_APP_ADDED = (
    ("deploy_build_id", "TEXT"),
    ("deployed_at", "REAL"),
    ("require_checks", "INTEGER NOT NULL DEFAULT 0"),
    ("preview_cover", "TEXT"),
)


class SqliteAppStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.lock:
            db.conn.executescript("""
                CREATE TABLE IF NOT EXISTS apps (
                    id TEXT PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL,
                    code_gen_type TEXT NOT NULL, init_prompt TEXT NOT NULL,
                    preview_key TEXT NOT NULL UNIQUE, deploy_key TEXT UNIQUE, deploy_url TEXT,
                    cover TEXT, priority INTEGER NOT NULL DEFAULT 0,
                    created_at REAL NOT NULL, updated_at REAL NOT NULL);
                CREATE INDEX IF NOT EXISTS apps_by_owner ON apps (owner, created_at DESC, id);
            """)
            have = {row[1] for row in db.conn.execute("PRAGMA table_info(apps)")}
            for column, kind in _APP_ADDED:
                if column not in have:
                    db.conn.execute(f"ALTER TABLE apps ADD COLUMN {column} {kind}")

    def put(self, app: App) -> None:
        values = [getattr(app, c) for c in _APP_COLUMNS]
        values[3] = app.code_gen_type.value
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO apps ({', '.join(_APP_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_APP_COLUMNS))})",
                values,
            )

    def get(self, app_id: str) -> App | None:
        rows = self.db.query(f"SELECT {', '.join(_APP_COLUMNS)} FROM apps WHERE id = ?", (app_id,))
        return _app(rows[0]) if rows else None

    def by_preview_key(self, preview_key: str) -> App | None:
        rows = self.db.query(
            f"SELECT {', '.join(_APP_COLUMNS)} FROM apps WHERE preview_key = ?", (preview_key,)
        )
        return _app(rows[0]) if rows else None

    def list_by_owner(
        self, owner: str, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        return self._page("owner = ?", [owner], cursor, limit, query, by_priority=False)

    def list_featured(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        return self._page(
            "priority >= ?", [FEATURED_PRIORITY], cursor, limit, query, by_priority=True
        )

    def list_all(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        return self._page("1 = 1", [], cursor, limit, query, by_priority=False)

    def _page(
        self,
        where: str,
        params: list[Any],
        cursor: str | None,
        limit: int,
        query: str | None,
        *,
        by_priority: bool,
    ) -> AppPage:
        """Keyset paging: newest first (highest priority first for featured), id breaks ties."""
        check_limit(limit)
        keys = ["priority", "created_at"] if by_priority else ["created_at"]
        after = decode_cursor(cursor, len(keys))
        sql = f"SELECT {', '.join(_APP_COLUMNS)} FROM apps WHERE {where}"
        args = list(params)
        if query:
            sql += " AND instr(casefold(name), ?) > 0"
            args.append(query.casefold())
        if after is not None:
            # (k1, k2, ..., id) strictly after the cursor in (DESC, DESC, ..., ASC) order.
            terms, values = [], list(after)
            for depth in range(len(keys) + 1):
                equal = [f"{k} = ?" for k in keys[:depth]]
                last = f"{keys[depth]} < ?" if depth < len(keys) else "id > ?"
                terms.append("(" + " AND ".join([*equal, last]) + ")")
                args += values[: depth + 1]
            sql += " AND (" + " OR ".join(terms) + ")"
        order = ", ".join(f"{k} DESC" for k in keys) + ", id"
        rows = self.db.query(f"{sql} ORDER BY {order} LIMIT ?", (*args, limit + 1))
        apps = [_app(r) for r in rows[:limit]]
        more = len(rows) > limit
        last_app = apps[-1] if more else None
        next_cursor = (
            encode_cursor([*(getattr(last_app, k) for k in keys), last_app.id])
            if last_app
            else None
        )
        return AppPage(apps, next_cursor)

    def delete(self, app_id: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM apps WHERE id = ?", (app_id,)).rowcount > 0


def _app(row: Sequence[Any]) -> App:
    data = dict(zip(_APP_COLUMNS, row, strict=True))
    data["code_gen_type"] = CodeGenType(data["code_gen_type"])
    data["require_checks"] = bool(data["require_checks"])
    return App(**data)
