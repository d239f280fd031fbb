"""The SQLite EndUserStore (zerocode/data/end_users.py): an app's end users and their
sessions, per app and space. Sessions are kept by their token's hash alone, under the app
and space they were made for, and an expired one is deleted when it is met."""

from __future__ import annotations

import sqlite3
from typing import Any

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.data.end_users import EndUser, UsernameTaken, UsersFull
from zerocode.data.records import Space

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS end_users (app_id TEXT NOT NULL, space TEXT NOT NULL, "
    "id TEXT NOT NULL, username TEXT NOT NULL, password_hash TEXT NOT NULL, "
    "created_at TEXT NOT NULL, PRIMARY KEY (app_id, space, id)) WITHOUT ROWID",
    "CREATE UNIQUE INDEX IF NOT EXISTS end_users_by_name ON end_users (app_id, space, username)",
    "CREATE TABLE IF NOT EXISTS end_user_sessions (token_sha TEXT PRIMARY KEY, "
    "app_id TEXT NOT NULL, space TEXT NOT NULL, user_id TEXT NOT NULL, "
    "expires_at REAL NOT NULL) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS end_user_sessions_by_user ON end_user_sessions "
    "(app_id, space, user_id)",
)
_COLUMNS = "id, username, created_at, password_hash"


class SqliteEndUserStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.transaction() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)

    def create(self, app_id: str, space: Space, user: EndUser, most: int) -> None:
        try:
            with self.db.transaction() as conn:  # BEGIN IMMEDIATE: the count holds
                (held,) = conn.execute(
                    "SELECT COUNT(*) FROM end_users WHERE app_id = ? AND space = ?",
                    (app_id, space),
                ).fetchone()
                if held >= most:
                    raise UsersFull(f"this app has {held} users, as many as it may")
                conn.execute(
                    f"INSERT INTO end_users (app_id, space, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
                    (app_id, space, user.id, user.username, user.created_at, user.password_hash),
                )
        except sqlite3.IntegrityError as exc:
            raise UsernameTaken(f"the username {user.username} is taken") from exc

    def by_username(self, app_id: str, space: Space, username: str) -> EndUser | None:
        return self._one("username", app_id, space, username)

    def get(self, app_id: str, space: Space, user_id: str) -> EndUser | None:
        return self._one("id", app_id, space, user_id)

    def _one(self, column: str, app_id: str, space: Space, value: str) -> EndUser | None:
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM end_users WHERE app_id = ? AND space = ? AND {column} = ?",
            (app_id, space, value),
        )
        return _user(rows[0]) if rows else None

    def list(
        self, app_id: str, space: Space, after: str | None, limit: int
    ) -> tuple[list[EndUser], str | None]:
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM end_users WHERE app_id = ? AND space = ? "
            "AND username > ? ORDER BY username LIMIT ?",
            (app_id, space, after or "", limit + 1),
        )
        users = [_user(row) for row in rows[:limit]]
        return users, users[-1].username if len(rows) > limit and users else None

    def remove(self, app_id: str, space: Space, user_id: str) -> bool:
        with self.db.transaction() as conn:
            conn.execute(
                "DELETE FROM end_user_sessions WHERE app_id = ? AND space = ? AND user_id = ?",
                (app_id, space, user_id),
            )
            done = conn.execute(
                "DELETE FROM end_users WHERE app_id = ? AND space = ? AND id = ?",
                (app_id, space, user_id),
            )
            return done.rowcount == 1

    def put_session(
        self, app_id: str, space: Space, token_sha: str, user_id: str, expires_at: float
    ) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO end_user_sessions (token_sha, app_id, space, user_id, expires_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (token_sha, app_id, space, user_id, expires_at),
            )

    def session_user(self, app_id: str, space: Space, token_sha: str, now: float) -> EndUser | None:
        rows = self.db.query(
            "SELECT s.expires_at, u.id, u.username, u.created_at, u.password_hash "
            "FROM end_user_sessions s JOIN end_users u ON u.app_id = s.app_id "
            "AND u.space = s.space AND u.id = s.user_id "
            "WHERE s.token_sha = ? AND s.app_id = ? AND s.space = ?",
            (token_sha, app_id, space),
        )
        if not rows:
            return None
        expires_at, *user = rows[0]
        if expires_at <= now:
            self.delete_session(app_id, space, token_sha)
            return None
        return _user(user)

    def delete_session(self, app_id: str, space: Space, token_sha: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "DELETE FROM end_user_sessions WHERE token_sha = ? AND app_id = ? AND space = ?",
                (token_sha, app_id, space),
            )

    def clear(self, app_id: str, space: Space | None = None) -> int:
        where, params = _scope(app_id, space)
        with self.db.transaction() as conn:
            conn.execute(f"DELETE FROM end_user_sessions WHERE {where}", params)
            done = conn.execute(f"DELETE FROM end_users WHERE {where}", params)
            return int(done.rowcount)

    def delete_app(self, app_id: str) -> int:
        return self.clear(app_id)


def _scope(app_id: str, space: Space | None) -> tuple[str, tuple[str, ...]]:
    if space is None:
        return "app_id = ?", (app_id,)
    return "app_id = ? AND space = ?", (app_id, space)


def _user(row: Any) -> EndUser:
    user_id, username, created_at, password_hash = row
    return EndUser(user_id, username, created_at, password_hash)
