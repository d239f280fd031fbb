"""The SQLite CheckStore: one row per check, numbered per app in the adding transaction; one
row per run of the suite, its screenshots in a table of their own."""

from __future__ import annotations

import builtins
import json
from dataclasses import replace

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.engine.acceptance import Check, CheckInvalid, parse_check
from zerocode.engine.check_suite import (
    MAX_CHECKS,
    MAX_RUNS,
    StoredCheck,
    SuiteRun,
    Tally,
    check_id,
    check_number,
    decode_results,
    encode,
    encode_results,
    kept_screenshot,
    retire_reason,
)
from zerocode.errors import Conflict, NotFound

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS checks (app_id TEXT NOT NULL, n INTEGER NOT NULL, "
    "body TEXT NOT NULL, added_turn INTEGER NOT NULL, retired TEXT, "
    "retired_turn INTEGER, PRIMARY KEY (app_id, n)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS check_runs (app_id TEXT NOT NULL, n INTEGER NOT NULL, "
    "turn INTEGER NOT NULL, round INTEGER NOT NULL, build_id TEXT, digest TEXT, "
    "at REAL NOT NULL, results TEXT NOT NULL, why_not_run TEXT, "
    "PRIMARY KEY (app_id, n)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS check_shots (app_id TEXT NOT NULL, run INTEGER NOT NULL, "
    "check_id TEXT NOT NULL, png BLOB NOT NULL, PRIMARY KEY (app_id, run, check_id))",
    "CREATE TABLE IF NOT EXISTS check_deploys (app_id TEXT NOT NULL, build_id TEXT NOT NULL, "
    "tally TEXT NOT NULL, PRIMARY KEY (app_id, build_id)) WITHOUT ROWID",
)


class SqliteCheckStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.transaction() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)

    def add(self, app_id: str, check: Check, turn: int) -> StoredCheck:
        with self.db.transaction() as conn:
            last, live = conn.execute(
                "SELECT COALESCE(MAX(n), 0), COUNT(*) FILTER (WHERE retired IS NULL) "
                "FROM checks WHERE app_id = ?",
                (app_id,),
            ).fetchone()
            if live >= MAX_CHECKS:
                raise CheckInvalid(
                    f"the app has {MAX_CHECKS} checks; retire one that no longer applies first"
                )
            conn.execute(
                "INSERT INTO checks (app_id, n, body, added_turn) VALUES (?, ?, ?, ?)",
                (app_id, last + 1, encode(check), turn),
            )
        return StoredCheck(id=check_id(last + 1), check=check, added_turn=turn)

    def retire(self, app_id: str, check_id_: str, reason: str, turn: int) -> StoredCheck:
        why = retire_reason(reason)
        n = check_number(check_id_)
        if n is None:
            raise NotFound(f"check {check_id_[:20]} not found")
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT retired FROM checks WHERE app_id = ? AND n = ?", (app_id, n)
            ).fetchone()
            if row is None:
                raise NotFound(f"check {check_id_} not found")
            if row[0] is not None:
                raise Conflict(f"check {check_id_} is retired already")
            conn.execute(
                "UPDATE checks SET retired = ?, retired_turn = ? WHERE app_id = ? AND n = ?",
                (why, turn, app_id, n),
            )
        return next(c for c in self.list(app_id) if c.id == check_id_)

    def list(self, app_id: str) -> list[StoredCheck]:
        rows = self.db.query(
            "SELECT n, body, added_turn, retired, retired_turn FROM checks WHERE app_id = ? "
            "ORDER BY n",
            (app_id,),
        )
        return [
            StoredCheck(
                id=check_id(n),
                check=parse_check(json.loads(body)),
                added_turn=added,
                retired=retired,
                retired_turn=retired_turn,
            )
            for n, body, added, retired, retired_turn in rows
        ]

    def record_run(self, app_id: str, run: SuiteRun) -> SuiteRun:
        with self.db.transaction() as conn:
            (last,) = conn.execute(
                "SELECT COALESCE(MAX(n), 0) FROM check_runs WHERE app_id = ?", (app_id,)
            ).fetchone()
            n = last + 1
            conn.execute(
                "INSERT INTO check_runs (app_id, n, turn, round, build_id, digest, at, results, "
                "why_not_run) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    app_id,
                    n,
                    run.turn,
                    run.round,
                    run.build_id,
                    run.digest,
                    run.at,
                    encode_results(run.results),
                    run.why_not_run,
                ),
            )
            for result in run.results:
                shot = kept_screenshot(result)
                if shot is not None:
                    conn.execute(
                        "INSERT INTO check_shots (app_id, run, check_id, png) VALUES (?, ?, ?, ?)",
                        (app_id, n, result.check_id, shot),
                    )
            if n > MAX_RUNS:
                for table, column in (("check_runs", "n"), ("check_shots", "run")):
                    conn.execute(
                        f"DELETE FROM {table} WHERE app_id = ? AND {column} <= ?",
                        (app_id, n - MAX_RUNS),
                    )
        return replace(run, number=n, results=decode_results(encode_results(run.results)))

    def runs(self, app_id: str, limit: int = 20) -> builtins.list[SuiteRun]:
        rows = self.db.query(
            "SELECT n, turn, round, build_id, digest, at, results, why_not_run FROM check_runs "
            "WHERE app_id = ? ORDER BY n DESC LIMIT ?",
            (app_id, limit),
        )
        return [
            SuiteRun(
                number=n,
                turn=turn,
                round=round_,
                build_id=build_id,
                digest=digest,
                at=at,
                results=decode_results(results),
                why_not_run=why,
            )
            for n, turn, round_, build_id, digest, at, results, why in rows
        ]

    def left_not_run(self, why: str) -> builtins.list[str]:
        """The apps whose newest run was not run for ``why`` (a stopping server's, to run
        again at the next start: engine/stopped_checks.py)."""
        rows = self.db.query(
            "SELECT app_id FROM check_runs AS r WHERE why_not_run = ? AND n = "
            "(SELECT MAX(n) FROM check_runs WHERE app_id = r.app_id) ORDER BY app_id",
            (why,),
        )
        return [app_id for (app_id,) in rows]

    def screenshot(self, app_id: str, run: int, check_id_: str) -> bytes | None:
        rows = self.db.query(
            "SELECT png FROM check_shots WHERE app_id = ? AND run = ? AND check_id = ?",
            (app_id, run, check_id_),
        )
        return bytes(rows[0][0]) if rows else None

    def stamp_deploy(self, app_id: str, build_id: str, tally: Tally) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO check_deploys (app_id, build_id, tally) VALUES (?, ?, ?)",
                (app_id, build_id, json.dumps(tally.to_json())),
            )

    def deploy_stamps(self, app_id: str) -> dict[str, Tally]:
        rows = self.db.query(
            "SELECT build_id, tally FROM check_deploys WHERE app_id = ?", (app_id,)
        )
        return {build_id: Tally.from_json(json.loads(raw)) for build_id, raw in rows}

    def delete_app(self, app_id: str) -> None:
        with self.db.transaction() as conn:
            for table in ("checks", "check_runs", "check_shots", "check_deploys"):
                conn.execute(f"DELETE FROM {table} WHERE app_id = ?", (app_id,))
