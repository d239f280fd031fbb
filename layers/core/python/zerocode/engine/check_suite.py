"""An app's acceptance checks as its regression suite, and what their runs found (issue 25).

Checks accumulate per app (``c1``, ``c2``, … never reused); a check stops applying only
when it is retired with a reason, and is kept for the record. Every run of the suite (one
per build a turn checks, repair rounds included) is kept with each check's verdict and,
for a failure, its evidence and screenshot, so the suite's history and each version's
state can be shown (docs/engine.md, "Acceptance checks").
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from zerocode.apps.records import App
from zerocode.engine.acceptance import Check, text_field
from zerocode.publishing.builds import Build

MAX_CHECKS = 50  # live (not retired) checks per app
MAX_REASON = 300
MAX_RUNS = 100  # runs kept per app: older ones (and their screenshots) are dropped
MAX_SCREENSHOT = 300_000  # bytes; a larger screenshot is not kept (the evidence says so)

Verdict = Literal["passed", "failed", "not_run"]


@dataclass(frozen=True, kw_only=True)
class StoredCheck:
    """A check of an app's suite: numbered per app (``c1``, ``c2``, …), the turn that added
    it, and, once retired, why and by which turn (it is kept, for the record)."""

    id: str
    check: Check
    added_turn: int
    retired: str | None = None
    retired_turn: int | None = None

    @property
    def live(self) -> bool:
        return self.retired is None


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """Why a check failed: where (``steps[2]``, ``expect[0]``), what was expected, what was
    found, and whether a screenshot of the page was kept."""

    where: str
    expected: str
    actual: str
    shot: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"where": self.where, "expected": self.expected, "actual": self.actual}


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """One check's verdict in a run. ``screenshot`` travels from the runner to the store
    only; results read back carry ``evidence.shot`` instead."""

    check_id: str
    status: Verdict
    evidence: Evidence | None = None
    screenshot: bytes | None = None


@dataclass(frozen=True, kw_only=True)
class Tally:
    passed: int = 0
    failed: int = 0
    not_run: int = 0

    @classmethod
    def of(cls, results: Iterable[CheckResult]) -> Tally:
        found = [r.status for r in results]
        return cls(
            passed=found.count("passed"),
            failed=found.count("failed"),
            not_run=found.count("not_run"),
        )

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.not_run

    def to_json(self) -> dict[str, int]:
        return {"passed": self.passed, "failed": self.failed, "notRun": self.not_run}

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Tally:
        return cls(
            passed=int(raw.get("passed", 0)),
            failed=int(raw.get("failed", 0)),
            not_run=int(raw.get("notRun", 0)),
        )


@dataclass(frozen=True, kw_only=True)
class SuiteRun:
    """One run of the suite against one preview build: numbered per app once stored."""

    turn: int
    round: int  # 0 for the turn's first run, then each repair round's
    build_id: str | None
    digest: str | None  # the source digest of the build: the version's files
    results: tuple[CheckResult, ...]
    at: float = field(default_factory=time.time)
    number: int = 0
    why_not_run: str | None = None  # the runner could not run (no browser): the checks' note

    @property
    def tally(self) -> Tally:
        return Tally.of(self.results)

    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == "failed"]


def encode(check: Check) -> str:
    """A check as stored: its JSON, compact."""
    return json.dumps(check.to_json(), ensure_ascii=False, separators=(",", ":"))


def encode_results(results: Sequence[CheckResult]) -> str:
    """A run's results as stored (screenshots apart)."""
    return json.dumps(
        [
            {
                "id": r.check_id,
                "status": r.status,
                **(
                    {"evidence": {**r.evidence.to_json(), "shot": r.evidence.shot}}
                    if r.evidence is not None
                    else {}
                ),
            }
            for r in results
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decode_results(raw: str) -> tuple[CheckResult, ...]:
    out = []
    for item in json.loads(raw):
        ev = item.get("evidence")
        evidence = (
            Evidence(
                where=ev["where"], expected=ev["expected"], actual=ev["actual"], shot=ev["shot"]
            )
            if ev
            else None
        )
        out.append(CheckResult(check_id=item["id"], status=item["status"], evidence=evidence))
    return tuple(out)


def kept_screenshot(result: CheckResult) -> bytes | None:
    """The screenshot a store keeps for ``result``: none past MAX_SCREENSHOT bytes."""
    shot = result.screenshot
    return shot if shot is not None and len(shot) <= MAX_SCREENSHOT else None


class CheckStore(Protocol):
    """Where an app's acceptance checks accumulate (its regression suite) and their runs."""

    def add(self, app_id: str, check: Check, turn: int) -> StoredCheck:
        """The check as the suite's next one; CheckInvalid past MAX_CHECKS live checks."""
        ...

    def retire(self, app_id: str, check_id: str, reason: str, turn: int) -> StoredCheck:
        """Stop applying a check, saying why; NotFound for no such check, Conflict when it
        is retired already."""
        ...

    def list(self, app_id: str) -> list[StoredCheck]:
        """Every check of the app, retired ones included, in the order they were added."""
        ...

    def record_run(self, app_id: str, run: SuiteRun) -> SuiteRun:
        """Keep a run (numbered per app), its screenshots (those within MAX_SCREENSHOT) with
        it; past MAX_RUNS the oldest runs go."""
        ...

    def runs(self, app_id: str, limit: int = 20) -> builtins.list[SuiteRun]:
        """The newest runs first, without their screenshots (``evidence.shot`` says which
        have one)."""
        ...

    def screenshot(self, app_id: str, run: int, check_id: str) -> bytes | None: ...

    def stamp_deploy(self, app_id: str, build_id: str, tally: Tally) -> None:
        """The suite's state for the version a deploy build publishes."""
        ...

    def deploy_stamps(self, app_id: str) -> dict[str, Tally]:
        """Each deploy build's stamp, by build id."""
        ...

    def delete_app(self, app_id: str) -> None: ...


class AcceptanceRunner(Protocol):
    """Runs an app's checks against its preview in a confined browser."""

    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
        on_result: Callable[[CheckResult], None] | None = None,
    ) -> RunOutcome:
        """Each check's verdict against the preview, which must show ``build`` (or, when it
        is None, whatever the preview shows now), within ``seconds`` (the turn's browser time
        left) if given: checks past it are not run, saying so. Never raises for what the
        page does; the platform's trouble (a busy or failing browser) is ``not_run``.
        ``on_result`` is told each check's verdict as it ends (the turn streams it); the
        outcome has them all, in the order of ``checks``."""
        ...


@dataclass(frozen=True)
class RunOutcome:
    """The runner's answer: the results, or why nothing could run (no browser, no preview)."""

    results: tuple[CheckResult, ...]
    why_not_run: str | None = None


def check_id(n: int) -> str:
    return f"c{n}"


def check_number(value: str) -> int | None:
    """``c7`` → 7; None for anything else."""
    if not value.startswith("c") or not value[1:].isdigit() or len(value) > 8:
        return None
    n = int(value[1:])
    return n if n > 0 else None


def retire_reason(reason: object) -> str:
    """A retirement's reason, checked: said, bounded, no control characters."""
    return text_field(reason, "reason", MAX_REASON)
