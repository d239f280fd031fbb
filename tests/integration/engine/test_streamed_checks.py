"""A turn streams each check's verdict as its check ends (issue 40, point 3): the `check`
event of a check that passed reaches the turn's stream while a slower check of the same
suite is still running; the stored run and the reply's lines are as before, in the suite's
order. The runner here stands in for the browser (the real one: tests/integration/adapters/
test_checks_together.py); a gate, not a timing, proves the order."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

from tests.integration.engine.test_acceptance_turns import CHECK, WORKS, Scripted, of, page, setup
from zerocode.apps.records import App
from zerocode.engine.check_suite import CheckResult, RunOutcome, StoredCheck
from zerocode.engine.events import CheckEvent, DoneEvent, TurnEvent
from zerocode.publishing.builds import Build

GATE_SECONDS = 60.0  # a gate that never opens: the slow check is not run (not a timing)


class Streaming:
    """Tells c1's verdict at once, then holds c2 until the stream has shown c1's event."""

    def __init__(self) -> None:
        self.seen = asyncio.Event()
        self.held = False

    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
        on_result: Callable[[CheckResult], None] | None = None,
    ) -> RunOutcome:
        assert on_result is not None
        first = CheckResult(check_id=checks[0].id, status="passed")
        on_result(first)
        try:
            await asyncio.wait_for(self.seen.wait(), GATE_SECONDS)
            self.held = True
        except TimeoutError:
            return RunOutcome((first, CheckResult(check_id=checks[1].id, status="not_run")), "x")
        second = CheckResult(check_id=checks[1].id, status="passed")
        on_result(second)
        return RunOutcome((first, second))


def test_a_check_event_is_streamed_before_a_slower_check_ends(tmp_path: Path) -> None:
    second = {**CHECK, "description": "Add works twice"}
    p, app = setup(tmp_path, Scripted(page(WORKS, {"add": [CHECK, second]})))
    runner = Streaming()
    p.engine.acceptance = runner

    async def collect() -> list[TurnEvent]:
        events = []
        async for event in p.engine.start(app, "A counter", None).events():
            events.append(event)
            if isinstance(event, CheckEvent) and event.id == "c1":
                runner.seen.set()
        return events

    events = asyncio.run(collect())
    assert runner.held  # c1's event was in the stream while c2 was still running
    checks = of(events, CheckEvent)
    assert [(e.id, e.status) for e in checks] == [("c1", "passed"), ("c2", "passed")]
    assert of(events, DoneEvent)[-1].checks == {"passed": 2, "failed": 0, "notRun": 0}
    assert p.engine.checks is not None
    (run,) = p.engine.checks.runs(app.id)
    assert [(r.check_id, r.status) for r in run.results] == [("c1", "passed"), ("c2", "passed")]
