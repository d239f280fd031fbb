"""The checking browser's trouble is never a turn's repair round, and a turn's suites share
a bounded browser time across its repair rounds (issue 37, points 2 and 3), in-process on the
real local platform; the browser is stood in for as in test_acceptance_turns.py (the real
one: tests/integration/adapters/test_browser_shares.py, tests/e2e/test_browser_shares.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.integration.engine.test_acceptance_turns import (
    BROKEN,
    CHECK,
    WORKS,
    Scripted,
    of,
    page,
    run,
    setup,
)
from zerocode.adapters.local.browser_shares import BUSY
from zerocode.apps.records import App
from zerocode.engine import suite_step
from zerocode.engine.check_suite import CheckResult, Evidence, RunOutcome, StoredCheck
from zerocode.engine.events import CheckEvent, DoneEvent, RepairEvent
from zerocode.engine.runtime_check import NotChecked
from zerocode.publishing.builds import Build


class SlowFailingRunner:
    """Every check fails, and each run takes 200 s of the suite's clock."""

    def __init__(self, clock: list[float]) -> None:
        self.clock, self.given = clock, list[float | None]()

    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
    ) -> RunOutcome:
        self.given.append(seconds)
        self.clock[0] += 200
        evidence = Evidence(where="expect[0]", expected="1", actual="0")
        return RunOutcome(
            tuple(CheckResult(check_id=c.id, status="failed", evidence=evidence) for c in checks)
        )


def test_a_turns_suites_share_a_bounded_browser_time_across_repair_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TURN_SUITE_SECONDS (300 s): the first run may take all of it, the repair round's
    what is left; past it the checks are not run, saying so, and start no repair round."""
    clock = [0.0]
    monkeypatch.setattr(suite_step, "_clock", lambda: clock[0])
    p, app = setup(tmp_path, Scripted(page(BROKEN, {"add": [CHECK]}), page(BROKEN)))
    runner = SlowFailingRunner(clock)
    p.engine.acceptance = runner
    events = run(p, app)
    assert runner.given == [300, 100]
    verdicts = [(c.round, c.status) for c in of(events, CheckEvent)]
    assert verdicts == [(0, "failed"), (1, "failed"), (2, "not_run")], verdicts
    assert of(events, CheckEvent)[-1].note == suite_step.USED_UP
    assert [r.attempt for r in of(events, RepairEvent)] == [1, 2]


class BusyCheck:
    async def check(self, app: App, build: Build) -> list[str] | NotChecked | None:
        return NotChecked(BUSY)


def test_a_page_the_busy_browser_did_not_check_is_told_never_repaired(tmp_path: Path) -> None:
    p, app = setup(tmp_path, Scripted(page(WORKS, {"add": [CHECK]})))
    p.engine.runtime_check = BusyCheck()
    events = run(p, app)
    assert of(events, RepairEvent) == []
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded", events
    latest = p.display.page(app.id, limit=1).entries[0].content
    assert "– the page was not checked in a browser: the checking browser was busy" in latest
