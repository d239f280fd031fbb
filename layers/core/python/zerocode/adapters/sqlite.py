"""SQLite adapters: the embedded default for one machine.

One database file, WAL mode, one connection per store object guarded by a
lock. Appends run in ``BEGIN IMMEDIATE`` transactions, so a step's entries
land together or not at all, and the head check inside the transaction makes
a second writer fail with Conflict instead of interleaving.
"""

from __future__ import annotations

import base64
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zerocode.accounts.service import Role, User
from zerocode.apps.records import FEATURED_PRIORITY, App, AppPage, CodeGenType, check_limit
from zerocode.errors import Conflict, InvalidInput
from zerocode.memory.display import (
    DisplayEntry,
    DisplayPage,
    DisplayRole,
    DisplayStatus,
    KeyClock,
    check_page,
    created_at_of,
)
from zerocode.memory.transcript import (
    EMPTY_HEAD,
    Entry,
    Head,
    check_continues,
    entry_attributes,
    entry_from_attributes,
    expires_at,
    head_from_attributes,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS transcript (
    app_id TEXT NOT NULL, seq INTEGER NOT NULL, turn INTEGER NOT NULL, unit INTEGER NOT NULL,
    turn_start INTEGER NOT NULL, kind TEXT NOT NULL, covers INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL, uid TEXT NOT NULL, expires_at INTEGER,
    PRIMARY KEY (app_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS display (
    app_id TEXT NOT NULL, id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,
    status TEXT NOT NULL, turn INTEGER NOT NULL, element TEXT, expires_at INTEGER,
    PRIMARY KEY (app_id, id)
) WITHOUT ROWID;
"""
_COLUMNS = ("seq", "turn", "unit", "turn_start", "kind", "covers", "body", "uid")

ConnectionFactory = Callable[[str], sqlite3.Connection]


def _connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)


class SqliteDatabase:
    """A connection with the zerocode schema. ``connect`` lets tests count statements."""

    def __init__(self, path: Path | str, connect: ConnectionFactory = _connect) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.conn = connect(str(path))
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.executescript(_SCHEMA)
        # Name search folds case the way Python does (SQLite's lower() is ASCII-only).
        self.conn.create_function("casefold", 1, str.casefold, deterministic=True)
        self.lock = threading.RLock()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        self.conn.close()


class SqliteTranscriptStore:
    def __init__(self, db: SqliteDatabase, retention_days: int = 0,
                 now: Callable[[], float] = time.time) -> None:
        self.db, self.retention_days, self.now = db, retention_days, now

    def head(self, app_id: str) -> Head:
        rows = self.db.query("SELECT seq, turn, turn_start, kind, uid FROM transcript "
                             "WHERE app_id = ? ORDER BY seq DESC LIMIT 1", (app_id,))
        if not rows:
            return EMPTY_HEAD
        return head_from_attributes(app_id, dict(zip(("seq", "turn", "turn_start", "kind", "uid"),
                                                      rows[0], strict=True)))

    def append(self, app_id: str, entries: Sequence[Entry], expected_head: int) -> None:
        check_continues(entries, expected_head)
        expires = expires_at(self.retention_days, self.now())
        rows = [(app_id, *(entry_attributes(e)[c] for c in _COLUMNS), expires) for e in entries]
        with self.db.transaction() as conn:
            found = conn.execute("SELECT MAX(seq) FROM transcript WHERE app_id = ?",
                                 (app_id,)).fetchone()[0] or 0
            if found != expected_head:
                raise Conflict(f"transcript of app {app_id} moved to {found} while this writer "
                               f"expected {expected_head}; another turn is writing")
            try:
                conn.executemany("INSERT INTO transcript (app_id, seq, turn, unit, turn_start, "
                                 "kind, covers, body, uid, expires_at) "
                                 "VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            except sqlite3.IntegrityError as exc:
                raise Conflict(f"transcript of app {app_id}: {exc}") from exc

    def tail(self, app_id: str, limit: int) -> list[Entry]:
        rows = self.db.query(f"SELECT {', '.join(_COLUMNS)} FROM transcript WHERE app_id = ? "
                             "ORDER BY seq DESC LIMIT ?", (app_id, limit))
        return [entry_from_attributes(app_id, dict(zip(_COLUMNS, r, strict=True)))
                for r in reversed(rows)]

    def get(self, app_id: str, seq: int) -> Entry | None:
        rows = self.db.query(f"SELECT {', '.join(_COLUMNS)} FROM transcript "
                             "WHERE app_id = ? AND seq = ?", (app_id, seq))
        return entry_from_attributes(app_id, dict(zip(_COLUMNS, rows[0], strict=True))) \
            if rows else None

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM transcript WHERE app_id = ?", (app_id,)).rowcount

    def purge_expired(self) -> int:
        """What DynamoDB's TTL does in the background: drop items past their expiry."""
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM transcript WHERE expires_at <= ?",
                                (int(self.now()),)).rowcount


class SqliteDisplayHistoryStore:
    def __init__(self, db: SqliteDatabase, retention_days: int = 0,
                 now: Callable[[], float] = time.time) -> None:
        self.db, self.retention_days, self.now = db, retention_days, now
        self.keys = KeyClock()

    def append(self, app_id: str, role: DisplayRole, content: str, *,
               status: DisplayStatus = DisplayStatus.OK, turn: int = 0,
               element: dict[str, Any] | None = None) -> DisplayEntry:
        key = self.keys.next_key()
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO display (app_id, id, role, content, status, turn, element, "
                         "expires_at) VALUES (?,?,?,?,?,?,?,?)",
                         (app_id, key, role.value, content, status.value, turn,
                          json.dumps(element) if element is not None else None,
                          expires_at(self.retention_days, self.now())))
        return DisplayEntry(key, role, content, status, turn, created_at_of(key), element)

    def page(self, app_id: str, before: str | None = None, limit: int = 20) -> DisplayPage:
        check_page(before, limit)
        rows = self.db.query(
            "SELECT id, role, content, status, turn, element FROM display WHERE app_id = ? "
            "AND id < ? ORDER BY id DESC LIMIT ?", (app_id, before or "~", limit + 1))
        entries = [DisplayEntry(r[0], DisplayRole(r[1]), r[2], DisplayStatus(r[3]), r[4],
                                created_at_of(r[0]), json.loads(r[5]) if r[5] else None)
                   for r in rows[:limit]]
        return DisplayPage(entries, entries[-1].id if len(rows) > limit else None)

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM display WHERE app_id = ?", (app_id,)).rowcount


_APP_COLUMNS = ("id", "owner", "name", "code_gen_type", "init_prompt", "preview_key",
                "deploy_key", "deploy_url", "cover", "priority", "created_at", "updated_at",
                "deploy_build_id", "deployed_at")
# Columns added after the first release: (name, SQL type), added to older files at start.
_APP_ADDED = (("deploy_build_id", "TEXT"), ("deployed_at", "REAL"))


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
            conn.execute(f"INSERT OR REPLACE INTO apps ({', '.join(_APP_COLUMNS)}) "
                         f"VALUES ({', '.join('?' * len(_APP_COLUMNS))})", values)

    def get(self, app_id: str) -> App | None:
        rows = self.db.query(f"SELECT {', '.join(_APP_COLUMNS)} FROM apps WHERE id = ?",
                             (app_id,))
        return _app(rows[0]) if rows else None

    def by_preview_key(self, preview_key: str) -> App | None:
        rows = self.db.query(f"SELECT {', '.join(_APP_COLUMNS)} FROM apps "
                             "WHERE preview_key = ?", (preview_key,))
        return _app(rows[0]) if rows else None

    def list_by_owner(self, owner: str, cursor: str | None = None, limit: int = 20,
                      query: str | None = None) -> AppPage:
        return self._page("owner = ?", [owner], False, cursor, limit, query)

    def list_featured(self, cursor: str | None = None, limit: int = 20,
                      query: str | None = None) -> AppPage:
        return self._page("priority >= ?", [FEATURED_PRIORITY], True, cursor, limit, query)

    def list_all(self, cursor: str | None = None, limit: int = 20,
                 query: str | None = None) -> AppPage:
        return self._page("1 = 1", [], False, cursor, limit, query)

    def _page(self, where: str, params: list[Any], by_priority: bool, cursor: str | None,
              limit: int, query: str | None) -> AppPage:
        """Keyset paging: newest first (highest priority first for featured), id breaks ties."""
        check_limit(limit)
        keys = ["priority", "created_at"] if by_priority else ["created_at"]
        after = _decode_cursor(cursor, len(keys))
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
                args += values[:depth + 1]
            sql += " AND (" + " OR ".join(terms) + ")"
        order = ", ".join(f"{k} DESC" for k in keys) + ", id"
        rows = self.db.query(f"{sql} ORDER BY {order} LIMIT ?", (*args, limit + 1))
        apps = [_app(r) for r in rows[:limit]]
        more = len(rows) > limit
        last_app = apps[-1] if more else None
        next_cursor = _encode_cursor([*(getattr(last_app, k) for k in keys), last_app.id]) \
            if last_app else None
        return AppPage(apps, next_cursor)

    def delete(self, app_id: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM apps WHERE id = ?", (app_id,)).rowcount > 0


def _app(row: Sequence[Any]) -> App:
    data = dict(zip(_APP_COLUMNS, row, strict=True))
    data["code_gen_type"] = CodeGenType(data["code_gen_type"])
    return App(**data)


def _encode_cursor(values: list[Any]) -> str:
    raw = json.dumps(values).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str | None, sort_keys: int) -> list[Any] | None:
    """The sort values and id a cursor carries; InvalidInput for anything else."""
    if cursor is None:
        return None
    try:
        values = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if not isinstance(values, list) or len(values) != sort_keys + 1 or \
                not isinstance(values[-1], str) or \
                not all(isinstance(v, int | float) and not isinstance(v, bool)
                        for v in values[:-1]):
            raise ValueError("wrong shape")
        return values
    except (ValueError, TypeError) as exc:
        raise InvalidInput("cursor is not one returned by this API") from exc


class SqliteLease:
    def __init__(self, db: SqliteDatabase, now: Callable[[], float] = time.time) -> None:
        self.db, self.now = db, now
        with db.lock:
            db.conn.execute("CREATE TABLE IF NOT EXISTS leases (key TEXT PRIMARY KEY, "
                            "holder TEXT NOT NULL, expires_at REAL NOT NULL)")

    def acquire(self, key: str, holder: str, ttl_seconds: float) -> bool:
        now = self.now()
        with self.db.transaction() as conn:
            row = conn.execute("SELECT holder, expires_at FROM leases WHERE key = ?",
                               (key,)).fetchone()
            if row is not None and row[0] != holder and row[1] > now:
                return False
            conn.execute("INSERT OR REPLACE INTO leases (key, holder, expires_at) "
                         "VALUES (?, ?, ?)", (key, holder, now + ttl_seconds))
            return True

    def release(self, key: str, holder: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM leases WHERE key = ? AND holder = ?", (key, holder))


_USER_COLUMNS = ("id", "account", "name", "role", "password_hash", "created_at",
                 "failed_logins")


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
                conn.execute(f"INSERT INTO users ({', '.join(_USER_COLUMNS)}) VALUES "
                             f"({', '.join('?' * len(_USER_COLUMNS))})",
                             (user.id, user.account, user.name, user.role.value,
                              user.password_hash, user.created_at, user.failed_logins))
        except sqlite3.IntegrityError as exc:
            raise Conflict(f"account {user.account!r} is already taken") from exc

    def _one(self, where: str, value: str) -> User | None:
        rows = self.db.query(f"SELECT {', '.join(_USER_COLUMNS)} FROM users WHERE {where} = ?",
                             (value,))
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
            conn.execute("UPDATE users SET failed_logins = failed_logins + 1 WHERE id = ?",
                         (user_id,))

    def put_token(self, token_hash: str, user_id: str, expires_at: float) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO tokens (token_hash, user_id, expires_at) VALUES (?,?,?)",
                         (token_hash, user_id, expires_at))

    def token_user(self, token_hash: str, now: float) -> User | None:
        rows = self.db.query(
            f"SELECT {', '.join('u.' + c for c in _USER_COLUMNS)} FROM tokens t "
            "JOIN users u ON u.id = t.user_id WHERE t.token_hash = ? AND t.expires_at > ?",
            (token_hash, now))
        return _user(rows[0]) if rows else None

    def delete_token(self, token_hash: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM tokens WHERE token_hash = ?", (token_hash,))

    def list_users(self, cursor: str | None = None, limit: int = 20,
                   query: str | None = None) -> tuple[list[User], str | None]:
        check_limit(limit)
        after = _decode_cursor(cursor, 0)
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
        return users, _encode_cursor([users[-1].account]) if len(rows) > limit else None


def _user(row: Sequence[Any]) -> User:
    data = dict(zip(_USER_COLUMNS, row, strict=True))
    data["role"] = Role(data["role"])
    return User(**data)


class SqlitePendingDeletions:
    def __init__(self, db: SqliteDatabase, now: Callable[[], float] = time.time) -> None:
        self.db, self.now = db, now
        with db.lock:
            db.conn.execute("CREATE TABLE IF NOT EXISTS deletions (app_id TEXT PRIMARY KEY, "
                            "since REAL NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, "
                            "last_error TEXT)")

    def add(self, app_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO deletions (app_id, since) VALUES (?, ?)",
                         (app_id, self.now()))

    def done(self, app_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM deletions WHERE app_id = ?", (app_id,))

    def failed(self, app_id: str, error: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE deletions SET attempts = attempts + 1, last_error = ? "
                         "WHERE app_id = ?", (error, app_id))

    def pending(self, limit: int = 50) -> list[str]:
        rows = self.db.query("SELECT app_id FROM deletions ORDER BY since LIMIT ?", (limit,))
        return [r[0] for r in rows]
