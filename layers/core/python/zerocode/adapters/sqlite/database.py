"""SQLite adapters: the embedded default for one machine.

One database file, WAL mode, one connection per store object guarded by a
lock. Appends run in ``BEGIN IMMEDIATE`` transactions, so a step's entries
land together or not at all, and the head check inside the transaction makes
a second writer fail with Conflict instead of interleaving.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zerocode.adapters.local.private import private_dir, private_file

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

ConnectionFactory = Callable[[str], sqlite3.Connection]


def _connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)


class SqliteDatabase:
    """A connection with the zerocode schema. ``connect`` lets tests count statements."""

    def __init__(self, path: Path | str, connect: ConnectionFactory = _connect) -> None:
        if str(path) != ":memory:":
            # Private (0600, and SQLite gives its -wal and -shm the database's mode).
            private_dir(Path(path).parent)
            for file in (Path(path), *(Path(f"{path}{end}") for end in ("-wal", "-shm"))):
                if file == Path(path) or file.exists():
                    private_file(file)
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
