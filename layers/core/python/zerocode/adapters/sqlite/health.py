"""The local storage probe: one row written to the database, and the data directory's room.

The write goes through a connection of its own with a short busy timeout, so health never
queues behind the stores' lock; a database locked by another writer is taking writes, so
"busy" is not a problem. The row is one (``health_probe``), updated in place.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from zerocode.adapters.local.free_space import low_space
from zerocode.apps.storage_health import StorageHealth

_TABLE = "CREATE TABLE IF NOT EXISTS health_probe (id INTEGER PRIMARY KEY CHECK (id = 1), at REAL)"
_WRITE = "INSERT INTO health_probe (id, at) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET at = ?"


class SqliteStorageProbe:
    def __init__(self, database: Path, data_dir: Path, min_free_mb: int) -> None:
        self.database, self.data_dir, self.min_free_mb = database, data_dir, min_free_mb
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def check(self) -> StorageHealth:
        problems = [p for p in (self._space(), self._write()) if p]
        return StorageHealth(tuple(problems))

    def _space(self) -> str | None:
        try:
            return low_space(self.data_dir, self.min_free_mb)
        except OSError as exc:
            return f"the data directory {self.data_dir.resolve()} cannot be read ({exc.strerror})"

    def _write(self) -> str | None:
        with self._lock:
            try:
                if self._conn is None:
                    self._conn = sqlite3.connect(
                        self.database, timeout=1.0, isolation_level=None, check_same_thread=False
                    )
                    self._conn.execute(_TABLE)
                now = time.time()
                self._conn.execute(_WRITE, (now, now))
            except sqlite3.Error as exc:
                kind = getattr(exc, "sqlite_errorname", type(exc).__name__)
                if kind == "SQLITE_BUSY":
                    return None  # another writer holds the database: it takes writes
                self._close()  # a damaged connection is not reused
                return f"the database {self.database.resolve()} cannot take a write: {kind} ({exc})"
        return None

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
