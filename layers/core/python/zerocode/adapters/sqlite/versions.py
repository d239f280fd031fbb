"""The SQLite VersionStore: version records and their contents, by hash, per app."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.apps.versions import Version, VersionKind
from zerocode.errors import Conflict, NotFound

_COLUMNS = (
    "app_id, number, turn, kind, summary, digest, manifest, created_at, restored_from, build_id"
)


class SqliteVersionStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.lock:
            db.conn.executescript(
                "CREATE TABLE IF NOT EXISTS versions (app_id TEXT NOT NULL, "
                "number INTEGER NOT NULL, turn INTEGER NOT NULL, kind TEXT NOT NULL, "
                "summary TEXT NOT NULL, digest TEXT NOT NULL, manifest TEXT NOT NULL, "
                "created_at REAL NOT NULL, restored_from INTEGER, build_id TEXT, "
                "PRIMARY KEY (app_id, number)) WITHOUT ROWID;"
                "CREATE TABLE IF NOT EXISTS version_blobs (app_id TEXT NOT NULL, "
                "sha TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (app_id, sha)) WITHOUT ROWID;"
            )

    def add(self, version: Version, blobs: Mapping[str, bytes]) -> None:
        """Blobs and the record in one transaction; a taken number is Conflict."""
        try:
            with self.db.transaction() as conn:
                conn.executemany(
                    "INSERT OR IGNORE INTO version_blobs (app_id, sha, data) VALUES (?, ?, ?)",
                    [(version.app_id, sha, data) for sha, data in blobs.items()],
                )
                conn.execute(
                    f"INSERT INTO versions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        version.app_id,
                        version.number,
                        version.turn,
                        version.kind.value,
                        version.summary,
                        version.digest,
                        json.dumps(dict(version.manifest), separators=(",", ":")),
                        version.created_at,
                        version.restored_from,
                        version.build_id,
                    ),
                )
        except sqlite3.IntegrityError:
            raise Conflict(f"version {version.id} of app {version.app_id} exists") from None

    def latest(self, app_id: str) -> Version | None:
        found = self.list(app_id, None, 1)
        return found[0] if found else None

    def get(self, app_id: str, number: int) -> Version | None:
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM versions WHERE app_id = ? AND number = ?", (app_id, number)
        )
        return _version(rows[0]) if rows else None

    def list(self, app_id: str, before: int | None = None, limit: int = 20) -> list[Version]:
        sql = f"SELECT {_COLUMNS} FROM versions WHERE app_id = ?"
        args: list[Any] = [app_id]
        if before is not None:
            sql += " AND number < ?"
            args.append(before)
        rows = self.db.query(sql + " ORDER BY number DESC LIMIT ?", [*args, limit])
        return [_version(r) for r in rows]

    def blob(self, app_id: str, sha: str) -> bytes:
        rows = self.db.query(
            "SELECT data FROM version_blobs WHERE app_id = ? AND sha = ?", (app_id, sha)
        )
        if not rows:
            raise NotFound(f"the content {sha[:12]} of a version of app {app_id} is missing")
        return bytes(rows[0][0])

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            count = conn.execute("DELETE FROM versions WHERE app_id = ?", (app_id,)).rowcount
            conn.execute("DELETE FROM version_blobs WHERE app_id = ?", (app_id,))
        return int(count)


def _version(row: Any) -> Version:
    app_id, number, turn, kind, summary, digest, manifest, created, restored, build = row
    return Version(
        app_id=app_id,
        number=int(number),
        turn=int(turn),
        kind=VersionKind(kind),
        summary=summary,
        digest=digest,
        manifest=json.loads(manifest),
        created_at=float(created),
        restored_from=restored,
        build_id=build,
    )
