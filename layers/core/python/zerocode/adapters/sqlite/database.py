"""SQLite adapters: the embedded default for one machine.

One database file, WAL mode, one connection per store object guarded by a
lock. Appends run in ``BEGIN IMMEDIATE`` transactions, so a step's entries
land together or not at all, and the head check inside the transaction makes
a second writer fail with Conflict instead of interleaving.

The WAL is kept small (issue 29): SQLite reuses a WAL file at the largest size it ever
reached and never gives the space back, so without a bound ordinary use leaves megabytes of
it on the disk. ``journal_size_limit`` truncates it to ``WAL_LIMIT_BYTES`` whenever it starts
over, an automatic checkpoint runs once it holds that much, and :meth:`SqliteDatabase.
checkpoint` (after each closed turn: adapters/sqlite/transcript.py) empties it to 0 bytes.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
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

log = logging.getLogger(__name__)

# The WAL's size at rest is at most this (journal_size_limit), and an automatic (passive)
# checkpoint runs once it holds this much (wal_autocheckpoint, in pages): 1 MiB, where
# SQLite's default of 1,000 pages let it grow to 4 MiB and stay there. None: SQLite's
# defaults (the benchmark's "before", bench/wal.py).
WAL_LIMIT_BYTES: int | None = 1 << 20
BUSY_MS = 10_000
# How long a checkpoint after a turn waits for another connection's readers or writer before
# it settles for what it could copy (it holds this connection's lock meanwhile).
CHECKPOINT_WAIT_MS = 200


@dataclass(frozen=True)
class Checkpoint:
    """How a checkpoint went: ``busy`` when another connection kept it from finishing (the
    WAL was not truncated), and how long it took."""

    busy: bool
    seconds: float


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
        self.conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
        if WAL_LIMIT_BYTES is not None:
            page = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
            self.conn.execute(f"PRAGMA journal_size_limit={WAL_LIMIT_BYTES}")
            self.conn.execute(f"PRAGMA wal_autocheckpoint={max(WAL_LIMIT_BYTES // page, 16)}")
        self.conn.executescript(_SCHEMA)
        # Columns added since a database was made (issue 41: a message's images; issue 43:
        # a reply's usage, a question's mode).
        have = {row[1] for row in self.conn.execute("PRAGMA table_info(display)").fetchall()}
        for column in ("images", "usage", "mode"):
            if column not in have:
                with contextlib.suppress(sqlite3.OperationalError):  # another opener added it
                    self.conn.execute(f"ALTER TABLE display ADD COLUMN {column} TEXT")
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

    def checkpoint(self) -> Checkpoint | None:
        """Copy the WAL into the database and truncate it to 0 bytes (between turns it is
        then empty). Waits at most ``CHECKPOINT_WAIT_MS`` for other connections (a reader
        in another process, a CLI command); if they are still busy, what could be copied
        is, and the next checkpoint finishes it. Never raises: the writes before it are
        committed whatever it does (a full disk shows on the next write); None if it
        failed."""
        if WAL_LIMIT_BYTES is None:
            return None
        with self.lock:
            started = time.perf_counter()
            try:
                self.conn.execute(f"PRAGMA busy_timeout={CHECKPOINT_WAIT_MS}")
                try:
                    busy = self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                finally:
                    self.conn.execute(f"PRAGMA busy_timeout={BUSY_MS}")
            except sqlite3.Error as exc:
                log.warning("the WAL checkpoint failed: %s", exc)
                return None
        return Checkpoint(bool(busy), time.perf_counter() - started)

    def close(self) -> None:
        self.conn.close()
