"""The publish report's bodies (issue 44, point 5): a deploy build's report, and what the
builds list says of it. Apart from http/schemas.py, by domain."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from zerocode.publishing.publish_report import PublishReport, ReportCheck, Summary
from zerocode.publishing.report_runner import ReportView

ReportState = Literal["pending", "done", "none"]


class BuildReportOut(BaseModel):
    """What the builds list says of a deploy build's report: its state, and its verdicts
    counted once it is done (GET …/deploys/{buildId}/report has the checks)."""

    state: ReportState
    passed: int = 0
    failed: int = 0
    notRun: int = 0


class ReportCheckOut(BaseModel):
    id: str = Field(description="meta, icons, compression, caching, crawl, links, console, a11y")
    title: str
    status: Literal["passed", "failed", "not_run"]
    passed: bool | None = Field(description="null when the check was not run (no verdict)")
    details: list[str] = Field(description="what is wrong and where; what was seen, when passed")
    fix: str = Field(description="what to change, when it failed")
    note: str | None = Field(description="why it was not run, or what it could not look at")


class PublishReportOut(BaseModel):
    appId: str
    buildId: str
    state: ReportState = Field(
        description="pending: being made (poll again); done: every check has its verdict; "
        "none: no report (why says why)"
    )
    why: str | None
    startedAt: float | None
    finishedAt: float | None
    summary: BuildReportOut | None
    checks: list[ReportCheckOut]


def build_report_out(state: str, summary: Summary | None) -> BuildReportOut:
    tally = summary.tally if summary is not None and state == "done" else None
    return BuildReportOut(
        state=_state(state),
        passed=tally.passed if tally else 0,
        failed=tally.failed if tally else 0,
        notRun=tally.not_run if tally else 0,
    )


def report_out(app_id: str, build_id: str, view: ReportView) -> PublishReportOut:
    report: PublishReport | None = view.report if view.state != "none" else None
    return PublishReportOut(
        appId=app_id,
        buildId=build_id,
        state=_state(view.state),
        why=view.why,
        startedAt=report.started_at if report else None,
        finishedAt=report.finished_at if report else None,
        summary=build_report_out(view.state, report.summary()) if report else None,
        checks=[_check(c) for c in report.checks] if report else [],
    )


def _check(check: ReportCheck) -> ReportCheckOut:
    return ReportCheckOut(
        id=check.id,
        title=check.title,
        status=check.status.value,
        passed=check.passed,
        details=list(check.details),
        fix=check.fix,
        note=check.note,
    )


def _state(state: str) -> ReportState:
    if state == "pending":
        return "pending"
    return "done" if state == "done" else "none"
