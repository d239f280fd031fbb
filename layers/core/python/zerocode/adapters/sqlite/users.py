"""The SQLite UserStore: local accounts and their session tokens."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from zerocode.accounts.service import Role, User
from zerocode.adapters.sqlite.cursor import decode_cursor, encode_cursor
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.apps.records import check_limit
from zerocode.errors import AccountTaken

_USER_COLUMNS = ("id", "account", "name", "role", "password_hash", "created_at", "failed_logins")


class SqliteUserStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.lock:
            db.conn.executescript("""
                CREATE TABLE IF NOT EXISTS users (
                    id TEXT PRIMARY KEY, account TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
                    role TEXT NOT NULL, password_hash TEXT NOT NULL, created_at REAL NOT NULL,
                    failed_logins INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE IF NOT EXISTS tokens (
                    token_hash TEXT PRIMARY KEY, user_id TEXT NOT NULL,
                    expires_at REAL NOT NULL);
            """)

    def create(self, user: User) -> None:
        try:
            with self.db.transaction() as conn:
                conn.execute(
                    f"INSERT INTO users ({', '.join(_USER_COLUMNS)}) VALUES "
                    f"({', '.join('?' * len(_USER_COLUMNS))})",
                    (
                        user.id,
                        user.account,
                        user.name,
                        user.role.value,
                        user.password_hash,
                        user.created_at,
                        user.failed_logins,
                    ),
                )
        except sqlite3.IntegrityError as exc:
            raise AccountTaken(f"account {user.account!r} is already taken") from exc

    def _one(self, where: str, value: str) -> User | None:
        rows = self.db.query(
            f"SELECT {', '.join(_USER_COLUMNS)} FROM users WHERE {where} = ?", (value,)
        )
        return _user(rows[0]) if rows else None

    def by_account(self, account: str) -> User | None:
        return self._one("account", account)

    def get(self, user_id: str) -> User | None:
        return self._one("id", user_id)

    def set_role(self, user_id: str, role: Role) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE users SET role = ? WHERE id = ?", (role.value, user_id))

    def count_failed_login(self, user_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE users SET failed_logins = failed_logins + 1 WHERE id = ?", (user_id,)
            )

    def put_token(self, token_hash: str, user_id: str, expires_at: float) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO tokens (token_hash, user_id, expires_at) VALUES (?,?,?)",
                (token_hash, user_id, expires_at),
            )

    def token_user(self, token_hash: str, now: float) -> User | None:
        rows = self.db.query(
            f"SELECT {', '.join('u.' + c for c in _USER_COLUMNS)} FROM tokens t "
            "JOIN users u ON u.id = t.user_id WHERE t.token_hash = ? AND t.expires_at > ?",
            (token_hash, now),
        )
        return _user(rows[0]) if rows else None

    def delete_token(self, token_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM tokens WHERE token_hash = ?", (token_hash,))

    def list_users(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> tuple[list[User], str | None]:
        check_limit(limit)
        after = decode_cursor(cursor, 0)
        sql = f"SELECT {', '.join(_USER_COLUMNS)} FROM users WHERE 1 = 1"
        args: list[Any] = []
        if query:
            sql += " AND instr(account, ?) > 0"
            args.append(query.casefold())
        if after is not None:
            sql += " AND account > ?"
            args.append(after[0])
        rows = self.db.query(sql + " ORDER BY account LIMIT ?", (*args, limit + 1))
        users = [_user(r) for r in rows[:limit]]
        return users, encode_cursor([users[-1].account]) if len(rows) > limit else None


def _user(row: Sequence[Any]) -> User:
    data = dict(zip(_USER_COLUMNS, row, strict=True))
    data["role"] = Role(data["role"])
    return User(**data)
