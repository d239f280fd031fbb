"""The SQLite BuildStore: build records in local mode."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.apps.records import CodeGenType, check_limit
from zerocode.publishing.builds import Build, BuildPage, BuildPurpose, BuildState, check_build_id

_COLUMNS = (
    "id",
    "app_id",
    "purpose",
    "kind",
    "source_digest",
    "state",
    "created_at",
    "started_at",
    "finished_at",
    "log_tail",
    "output",
    "error",
    "runner_id",
)


class SqliteBuildStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.lock:
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS builds (id TEXT NOT NULL, app_id TEXT NOT NULL, "
                "purpose TEXT NOT NULL, kind TEXT NOT NULL, source_digest TEXT NOT NULL, "
                "state TEXT NOT NULL, created_at REAL NOT NULL, started_at REAL, "
                "finished_at REAL, log_tail TEXT NOT NULL, output TEXT, error TEXT, "
                "runner_id TEXT, PRIMARY KEY (app_id, id)) WITHOUT ROWID"
            )

    def put(self, build: Build) -> None:
        values = [getattr(build, c) for c in _COLUMNS]
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO builds ({', '.join(_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(_COLUMNS))})",
                [v.value if hasattr(v, "value") else v for v in values],
            )

    def get(self, app_id: str, build_id: str) -> Build | None:
        rows = self.db.query(
            f"SELECT {', '.join(_COLUMNS)} FROM builds WHERE app_id = ? AND id = ?",
            (app_id, build_id),
        )
        return _build(rows[0]) if rows else None

    def list(
        self,
        app_id: str,
        cursor: str | None = None,
        limit: int = 20,
        purpose: BuildPurpose | None = None,
    ) -> BuildPage:
        check_limit(limit)
        sql = f"SELECT {', '.join(_COLUMNS)} FROM builds WHERE app_id = ?"
        args: list[Any] = [app_id]
        if cursor is not None:
            sql += " AND id < ?"
            args.append(check_build_id(cursor))
        if purpose is not None:
            sql += " AND purpose = ?"
            args.append(purpose.value)
        rows = self.db.query(sql + " ORDER BY id DESC LIMIT ?", [*args, limit + 1])
        builds = [_build(r) for r in rows[:limit]]
        return BuildPage(builds, builds[-1].id if len(rows) > limit else None)

    def finish_published(self, published: Callable[[str, str], bool]) -> int:
        """At start, before :meth:`fail_unfinished`: a deploy is published, then recorded
        succeeded (publishing/service.py), its output already on its record; one whose
        process died between the two is what its site serves, so it is recorded succeeded,
        not failed. ``published(app_id, build_id)``: whether the app's site names it."""
        rows = self.db.query(
            f"SELECT {', '.join(_COLUMNS)} FROM builds WHERE state = ? AND purpose = ? "
            "AND output IS NOT NULL",
            (BuildState.RUNNING.value, BuildPurpose.DEPLOY.value),
        )
        done = [
            replace(b, state=BuildState.SUCCEEDED, finished_at=time.time())
            for b in map(_build, rows)
            if published(b.app_id, b.id)
        ]
        for build in done:
            self.put(build)
        return len(done)

    def fail_unfinished(self, error: str) -> int:
        """At start: builds a previous process left queued or running died with it (local
        builds run in the server's process tree), so they are failed, saying why."""
        with self.db.transaction() as conn:
            return conn.execute(
                "UPDATE builds SET state = ?, error = ?, finished_at = ? WHERE state IN (?, ?)",
                (
                    BuildState.FAILED.value,
                    error,
                    time.time(),
                    BuildState.QUEUED.value,
                    BuildState.RUNNING.value,
                ),
            ).rowcount

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM builds WHERE app_id = ?", (app_id,)).rowcount


def _build(row: Any) -> Build:
    v = dict(zip(_COLUMNS, row, strict=True))
    return Build(
        id=v["id"],
        app_id=v["app_id"],
        purpose=BuildPurpose(v["purpose"]),
        kind=CodeGenType(v["kind"]),
        source_digest=v["source_digest"],
        state=BuildState(v["state"]),
        created_at=v["created_at"],
        started_at=v["started_at"],
        finished_at=v["finished_at"],
        log_tail=v["log_tail"],
        output=v["output"],
        error=v["error"],
        runner_id=v["runner_id"],
    )
