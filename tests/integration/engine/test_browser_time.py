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
from zerocode.adapters.local.build_shares import BuildShares
from zerocode.adapters.local.builder import LocalBuilder
from zerocode.apps.records import App, CodeGenType, new_app_id
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.engine import suite_step
from zerocode.engine.check_suite import CheckResult, Evidence, RunOutcome, StoredCheck
from zerocode.engine.events import BuildEvent, CheckEvent, DoneEvent, RepairEvent
from zerocode.engine.runtime_check import NotChecked
from zerocode.publishing.builds import REFUSED, Build


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
        on_result: object = None,  # told nothing: every verdict comes with the outcome
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


def test_a_build_the_platform_refused_is_told_never_repaired(tmp_path: Path) -> None:
    """A Vue turn of the offline model with no build slot for its user (the real
    LocalBuilder's shares; the user's one slot held by another of their builds): the turn
    fails saying the preview was not built and why, the model is told its files stand, and
    no repair round asks it to change them."""
    p = wiring.platform(Settings(data_dir=tmp_path, runtime_check=False, covers=False))
    app = App(
        id=new_app_id(),
        owner="local",
        name="Todos",
        code_gen_type=CodeGenType.VUE_PROJECT,
        init_prompt="A Vue todo app",
    )
    p.apps.put(app)
    builder = p.publishing.builder
    assert isinstance(builder, LocalBuilder)
    builder.shares = BuildShares(slots=1, per_user=1, wait=0.0)
    builder.shares.by_user[app.owner] = 1  # another build of this user's holds its one slot
    events = run(p, app, "A Vue todo app")
    assert of(events, RepairEvent) == []
    failed = [e for e in of(events, BuildEvent) if e.status == "failed"]
    assert len(failed) == 1 and failed[0].error.startswith(REFUSED), events
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "failed", events
    latest = p.display.page(app.id, limit=1).entries[0].content
    assert "✗ preview not built" in latest
    assert "**Failed:** the preview was not built: the build was refused: you already have" in (
        latest
    )
    assert p.workspace.list(app.id), "the turn's files stand"
    said = [str(m.content) for m in p.memory.window(app.id, "").messages]
    told = [m for m in said if m.startswith("[zerocode note: the preview was not built]")]
    assert len(told) == 1 and "not a fault in the app's files" in told[0], said[-3:]
    assert not any(m.startswith("[zerocode repair") for m in said)
