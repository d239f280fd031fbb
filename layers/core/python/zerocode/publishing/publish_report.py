"""The publish report (issue 44, point 5): the Lighthouse-style checks the platform ran on a
published deploy build, each passed, failed (what is wrong, where, and what to change) or
not run (why: never a false pass or a false failure), kept by build id.

Made in the background once a deploy is published (publishing/report_runner.py), so a
deploy's success never waits for it; ``pending`` meanwhile. The checks and how each is made:
docs/builds.md, "The publish report". This module is the record and its ports: the store
(SQLite locally, the checks table on AWS), the browser's look at the page and the answers
the site gives.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol

# A report still pending this long after it began was cut off (its server stopped): none
# will come. Well past the runner's own bound (report_runner.REPORT_SECONDS).
STALE_SECONDS = 600.0
MAX_DETAILS = 12  # lines of what is wrong, per check
DETAIL_CHARS = 400


class CheckStatus(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    NOT_RUN = "not_run"


class ReportState(StrEnum):
    PENDING = "pending"  # being made
    DONE = "done"  # every check has its verdict
    FAILED = "failed"  # the report itself failed (the platform's trouble): ``why``


# The checks, in the order they are shown: id → title.
CHECKS: dict[str, str] = {
    "meta": "Title, description and page tags",
    "icons": "Icons and web manifest",
    "compression": "Text files sent compressed",
    "caching": "Cache headers",
    "crawl": "Open to search engines",
    "links": "Links within the site",
    "console": "No errors in the browser console",
    "a11y": "Accessibility: no serious violations",
}


@dataclass(frozen=True)
class ReportCheck:
    id: str
    status: CheckStatus
    details: tuple[str, ...] = ()  # what is wrong, where (a failure); what was seen (a pass)
    fix: str = ""  # what to change (a failure)
    note: str | None = None  # why it was not run, or what it could not look at

    @property
    def title(self) -> str:
        return CHECKS.get(self.id, self.id)

    @property
    def passed(self) -> bool | None:
        """True or False; None when it was not run (no verdict)."""
        return None if self.status is CheckStatus.NOT_RUN else self.status is CheckStatus.PASSED

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status.value,
            "details": list(self.details),
            "fix": self.fix,
            "note": self.note,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ReportCheck:
        return cls(
            id=str(raw["id"]),
            status=CheckStatus(raw["status"]),
            details=tuple(str(d) for d in raw.get("details") or ()),
            fix=str(raw.get("fix") or ""),
            note=raw.get("note"),
        )


def passed(check_id: str, *seen: str, note: str | None = None) -> ReportCheck:
    return ReportCheck(check_id, CheckStatus.PASSED, bounded(seen), note=note)


def failed(check_id: str, wrong: list[str], fix: str, note: str | None = None) -> ReportCheck:
    return ReportCheck(check_id, CheckStatus.FAILED, bounded(wrong), fix, note)


def not_run(check_id: str, why: str) -> ReportCheck:
    return ReportCheck(check_id, CheckStatus.NOT_RUN, note=why)


def bounded(lines: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """At most MAX_DETAILS lines of at most DETAIL_CHARS; the last says how many more."""
    cut = [line if len(line) <= DETAIL_CHARS else line[: DETAIL_CHARS - 1] + "…" for line in lines]
    if len(cut) <= MAX_DETAILS:
        return tuple(cut)
    return (*cut[: MAX_DETAILS - 1], f"(and {len(cut) - MAX_DETAILS + 1} more)")


@dataclass(frozen=True)
class Tally:
    passed: int = 0
    failed: int = 0
    not_run: int = 0


@dataclass(frozen=True)
class Summary:
    """A report without its checks: what the builds list shows of it."""

    state: ReportState
    started_at: float
    tally: Tally

    def stale(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        return self.state is ReportState.PENDING and now - self.started_at > STALE_SECONDS


@dataclass(frozen=True)
class PublishReport:
    app_id: str
    build_id: str
    state: ReportState = ReportState.PENDING
    started_at: float = field(default_factory=time.time)
    finished_at: float | None = None
    checks: tuple[ReportCheck, ...] = ()
    why: str | None = None  # a failed report's reason, for people

    def done(self, checks: list[ReportCheck]) -> PublishReport:
        order = list(CHECKS)
        ranked = sorted(checks, key=lambda c: order.index(c.id) if c.id in order else len(order))
        return replace(self, state=ReportState.DONE, checks=tuple(ranked), finished_at=time.time())

    def gave_up(self, why: str) -> PublishReport:
        return replace(self, state=ReportState.FAILED, why=why, finished_at=time.time())

    def stale(self, now: float | None = None) -> bool:
        """A pending report its server stopped under: it will never be finished."""
        return self.summary().stale(now)

    def summary(self) -> Summary:
        return Summary(self.state, self.started_at, self.tally())

    def tally(self) -> Tally:
        count = {s: sum(c.status is s for c in self.checks) for s in CheckStatus}
        return Tally(
            count[CheckStatus.PASSED], count[CheckStatus.FAILED], count[CheckStatus.NOT_RUN]
        )

    def body(self) -> dict[str, Any]:
        """What a store keeps besides the keys and the state."""
        return {"checks": [c.to_json() for c in self.checks], "why": self.why}

    @classmethod
    def of(
        cls,
        app_id: str,
        build_id: str,
        state: str,
        started_at: float,
        finished_at: float | None,
        body: dict[str, Any],
    ) -> PublishReport:
        return cls(
            app_id=app_id,
            build_id=build_id,
            state=ReportState(state),
            started_at=started_at,
            finished_at=finished_at,
            checks=tuple(ReportCheck.from_json(c) for c in body.get("checks") or ()),
            why=body.get("why"),
        )


class PublishReports(Protocol):
    """The reports, one per deploy build (SQLite locally, the checks table on AWS)."""

    def put(self, report: PublishReport) -> None: ...

    def get(self, app_id: str, build_id: str) -> PublishReport | None: ...

    def summaries(self, app_id: str, build_ids: list[str]) -> dict[str, Summary]:
        """The reports of these builds (a page of the builds list: at most 50), by build
        id, without their checks."""
        ...

    def delete_app(self, app_id: str) -> object: ...


@dataclass(frozen=True)
class Violation:
    """A serious accessibility violation axe-core found: its rule, its impact, what it
    asks for (axe's ``help``) and where (the elements' selectors)."""

    rule: str
    impact: str
    help: str
    where: tuple[str, ...]


@dataclass(frozen=True)
class PageLook:
    """What the browser saw of the published home page (PageInspector). ``why``: it could not
    be loaded for a reason of the platform's (no verdict then); ``a11y_why``: axe-core did
    not run to its end (the page's console and links still count)."""

    loaded: bool = False
    problems: tuple[str, ...] = ()  # uncaught errors and console.error lines, in order
    failed: tuple[str, ...] = ()  # requests of its own origin that failed: "path (404)"
    links: tuple[str, ...] = ()  # the URLs the rendered page names (href, src)
    violations: tuple[Violation, ...] | None = None  # None: axe-core did not run
    why: str | None = None
    a11y_why: str | None = None


class PageInspector(Protocol):
    """The published page in the confined, shared browser, in its owner's share."""

    async def look(self, url: str, *, owner: str, app_id: str) -> PageLook: ...


@dataclass(frozen=True)
class Answer:
    """A file of the site as visitors get it: its status and its headers (lower-case)."""

    status: int
    headers: dict[str, str]


class SiteAnswers(Protocol):
    """The published site asked for its files, as a visitor's browser would (accepting
    brotli and gzip); None when the site did not answer."""

    async def get(self, url: str) -> Answer | None: ...
