"""The SQLite PublishReports (zerocode/publishing/publish_report.py): one row per deploy
build's report, its checks as JSON and their verdicts counted (the builds list reads those
alone)."""

from __future__ import annotations

import json

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.publishing.publish_report import PublishReport, ReportState, Summary, Tally

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS publish_reports (app_id TEXT NOT NULL, build_id TEXT NOT NULL, "
    "state TEXT NOT NULL, started_at REAL NOT NULL, finished_at REAL, body TEXT NOT NULL, "
    "passed INTEGER NOT NULL, failed INTEGER NOT NULL, not_run INTEGER NOT NULL, "
    "PRIMARY KEY (app_id, build_id)) WITHOUT ROWID"
)
_COLUMNS = "app_id, build_id, state, started_at, finished_at, body, passed, failed, not_run"


class SqlitePublishReports:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.transaction() as conn:
            conn.execute(_SCHEMA)

    def put(self, report: PublishReport) -> None:
        tally = report.tally()
        with self.db.transaction() as conn:
            conn.execute(
                f"INSERT OR REPLACE INTO publish_reports ({_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    report.app_id,
                    report.build_id,
                    report.state.value,
                    report.started_at,
                    report.finished_at,
                    json.dumps(report.body()),
                    tally.passed,
                    tally.failed,
                    tally.not_run,
                ),
            )

    def get(self, app_id: str, build_id: str) -> PublishReport | None:
        rows = self.db.query(
            "SELECT state, started_at, finished_at, body FROM publish_reports "
            "WHERE app_id = ? AND build_id = ?",
            (app_id, build_id),
        )
        if not rows:
            return None
        state, started, finished, body = rows[0]
        return PublishReport.of(app_id, build_id, state, started, finished, json.loads(body))

    def summaries(self, app_id: str, build_ids: list[str]) -> dict[str, Summary]:
        if not build_ids:
            return {}
        marks = ", ".join("?" * len(build_ids))
        rows = self.db.query(
            "SELECT build_id, state, started_at, passed, failed, not_run FROM publish_reports "
            f"WHERE app_id = ? AND build_id IN ({marks})",
            (app_id, *build_ids),
        )
        return {
            build: Summary(ReportState(state), started, Tally(passed, failed, not_run))
            for build, state, started, passed, failed, not_run in rows
        }

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return int(
                conn.execute("DELETE FROM publish_reports WHERE app_id = ?", (app_id,)).rowcount
            )
