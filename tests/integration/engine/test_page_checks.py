"""The runtime check and the acceptance suite at once (issue 40, point 3), in-process on the
real local platform (SQLite, the real builder); the browser is stood in for as in
test_acceptance_turns.py, by a runtime check and a runner that wait for each other: run one
after the other, they would not finish. What is tested is the engine's order of telling: the
suite runs during the runtime check, nothing of it is told or stored before the page has
passed, and a page that fails loses its suite unseen."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.integration.engine.test_acceptance_turns import (
    CHECK,
    WORKS,
    Scripted,
    page,
    setup,
)
from zerocode.apps.records import App
from zerocode.bootstrap.platform import Platform
from zerocode.engine.check_suite import CheckResult, RunOutcome, StoredCheck
from zerocode.engine.events import (
    BuildEvent,
    CheckEvent,
    DoneEvent,
    RepairEvent,
    TurnEvent,
)
from zerocode.engine.runtime_check import NotChecked
from zerocode.memory.validation import validate
from zerocode.publishing.builds import Build

SECOND = {**CHECK, "description": "A second check"}
WAIT = 10.0  # far more than either side needs; a sequential engine would wait it out


class Meeting:
    """What the stand-ins saw, in the order they saw it, shared with the turn's events."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.suite_started = asyncio.Event()
        self.first_ended = asyncio.Event()


class RuntimeCheck:
    """Waits until the suite has started and ended a check, then gives its verdicts in turn
    (one per round): a sequential engine never starts the suite, and this check says so."""

    def __init__(self, meeting: Meeting, *verdicts: list[str] | NotChecked | None) -> None:
        self.meeting, self.verdicts = meeting, list(verdicts)

    async def check(self, app: App, build: Build) -> list[str] | NotChecked | None:
        try:
            await asyncio.wait_for(self.meeting.first_ended.wait(), WAIT)
            self.meeting.seen.append("suite ran during the runtime check")
        except TimeoutError:
            self.meeting.seen.append("suite did not run during the runtime check")
        verdict = self.verdicts.pop(0) if len(self.verdicts) > 1 else self.verdicts[0]
        self.meeting.seen.append(f"runtime verdict {verdict!r}")
        return verdict


class Runner:
    """Passes its first check at once; the second waits (``hold``) before it passes."""

    def __init__(self, meeting: Meeting, hold: Callable[[], asyncio.Event]) -> None:
        self.meeting, self.hold = meeting, hold
        self.runs = self.cancelled = 0

    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
        on_result: Callable[[CheckResult], None] | None = None,
    ) -> RunOutcome:
        self.runs += 1
        self.meeting.suite_started.set()
        results = []
        try:
            for i, c in enumerate(checks):
                if i:
                    await asyncio.wait_for(self.hold().wait(), WAIT)
                result = CheckResult(check_id=c.id, status="passed")
                results.append(result)
                self.meeting.seen.append(f"{c.id} ended")
                if on_result is not None:
                    on_result(result)
                self.meeting.first_ended.set()
        except asyncio.CancelledError:
            self.cancelled += 1
            self.meeting.seen.append("suite stopped")
            raise
        return RunOutcome(tuple(results))


def run_watched(p: Platform, app: App, meeting: Meeting, message: str) -> list[TurnEvent]:
    async def collect() -> list[TurnEvent]:
        events = []
        async for event in p.engine.start(app, message, None).events():
            if isinstance(event, CheckEvent):
                meeting.seen.append(f"told {event.id} round {event.round}")
            events.append(event)
        return events

    return asyncio.run(collect())


def test_the_suite_runs_during_the_runtime_check_and_is_told_after_its_pass(
    tmp_path: Path,
) -> None:
    p, app = setup(tmp_path, Scripted(page(WORKS, {"add": [CHECK, SECOND]})))
    meeting = Meeting()
    go_on = asyncio.Event()
    runner = Runner(meeting, lambda: go_on)
    p.engine.acceptance = runner
    check = RuntimeCheck(meeting, [])
    p.engine.runtime_check = check

    # The second check ends only after the runtime verdict: told as it ends, not held back.
    real = check.check

    async def then_release(app: App, build: Build) -> list[str] | NotChecked | None:
        verdict = await real(app, build)
        asyncio.get_running_loop().call_later(0.05, go_on.set)
        return verdict

    check.check = then_release  # type: ignore[method-assign]
    events = run_watched(p, app, meeting, "A counter")
    assert meeting.seen == [
        "c1 ended",
        "suite ran during the runtime check",
        "runtime verdict []",
        "told c1 round 0",  # held until the page stood, then told at once
        "c2 ended",
        "told c2 round 0",
    ], meeting.seen
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded"
    assert done.checks == {"passed": 2, "failed": 0, "notRun": 0}
    [stored] = p.engine.checks.runs(app.id)  # type: ignore[union-attr]
    assert stored.round == 0 and stored.tally.passed == 2
    # The reply's steps: the page's verdict first, then the suite's.
    content = p.display.page(app.id, limit=1).entries[0].content
    loads = content.index("✓ the page loads in a browser without errors")
    assert loads < content.index("✓ check c1 passed") < content.index("✓ check c2 passed")
    assert runner.cancelled == 0


def test_a_page_that_fails_loses_its_suite_unseen_and_is_repaired_for_what_failed(
    tmp_path: Path,
) -> None:
    model = Scripted(page(WORKS, {"add": [CHECK, SECOND]}), page(WORKS))
    p, app = setup(tmp_path, model)
    meeting = Meeting()
    rounds: list[asyncio.Event] = []

    def hold() -> asyncio.Event:  # round 0's second check never ends; round 1's at once
        event = asyncio.Event()
        if rounds:
            event.set()
        rounds.append(event)
        return event

    runner = Runner(meeting, hold)
    p.engine.acceptance = runner
    p.engine.runtime_check = RuntimeCheck(meeting, ["Uncaught TypeError: x is undefined"], [])
    events = run_watched(p, app, meeting, "A counter")

    assert meeting.seen[:4] == [
        "c1 ended",
        "suite ran during the runtime check",
        "runtime verdict ['Uncaught TypeError: x is undefined']",
        "suite stopped",  # before anything of it was told
    ], meeting.seen
    assert runner.cancelled == 1 and runner.runs == 2
    checks = [e for e in events if isinstance(e, CheckEvent)]
    assert [(c.id, c.round) for c in checks] == [("c1", 1), ("c2", 1)]  # round 0: none
    [repair] = [e for e in events if isinstance(e, RepairEvent)]
    assert repair.attempt == 1 and "fails in the browser" in repair.reason
    runs = p.engine.checks.runs(app.id)  # type: ignore[union-attr]
    assert [r.round for r in runs] == [1]  # round 0's suite never stored
    done = events[-1]
    assert isinstance(done, DoneEvent) and done.status == "succeeded"
    entry = p.display.page(app.id, limit=1).entries[0].content
    assert "✗ the page fails in the browser: Uncaught TypeError" in entry
    assert entry.count("✓ check c1 passed") == 1  # round 1's alone
    # The model was told the runtime failure, not a suite it never saw run.
    repair_call = str(model.seen[1][0][-1].content)
    assert "Uncaught TypeError" in repair_call and "acceptance checks" not in repair_call
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)


def test_a_build_event_comes_before_every_check_of_its_round(tmp_path: Path) -> None:
    p, app = setup(tmp_path, Scripted(page(WORKS, {"add": [CHECK]})))
    meeting = Meeting()
    p.engine.acceptance = Runner(meeting, asyncio.Event)
    p.engine.runtime_check = RuntimeCheck(meeting, None)  # not checked: the suite still told
    events = run_watched(p, app, meeting, "A counter")
    kinds = [type(e).__name__ for e in events if isinstance(e, BuildEvent | CheckEvent)]
    assert kinds == ["BuildEvent", "BuildEvent", "CheckEvent"], kinds
    content = p.display.page(app.id, limit=1).entries[0].content
    assert "– the page was not checked in a browser" in content
    assert "✓ check c1 passed" in content
