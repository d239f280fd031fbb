"""The suite follows the files, whoever changed them (issue 38): a preview built outside a
turn (a hand edit, a text edit, a restore, a rebuild) has the app's live checks run against
it in the background, so the Checks tab and a deploy's gate judge the files as they are,
not as the last turn left them. The console's "Run checks now" runs them on demand.

A run is recorded like a turn's (round 0, under the transcript's newest turn); while one is
under way for an app, :func:`running` says so (the Checks tab shows it and polls). Runs of
one app never overlap: a new one waits for the one before it.
"""

from __future__ import annotations

import asyncio
import logging

from zerocode.apps.records import App
from zerocode.engine.check_suite import CheckResult, RunOutcome, SuiteRun
from zerocode.engine.edit_guard import tell_broken
from zerocode.engine.parts import EngineParts, io, kind
from zerocode.engine.suite_step import NO_RUNNER
from zerocode.publishing.builds import Build, BuildState

log = logging.getLogger("zerocode.engine.checks")

# The newest background run of each app (in this process): what running() and settled() read.
_runs: dict[str, asyncio.Task[SuiteRun | None]] = {}


def follow(engine: EngineParts, app: App, build: Build | None) -> bool:
    """Run the app's checks against ``build`` (the new preview) in the background; False
    when nothing will run (no checks kept here, or no preview was built)."""
    if engine.checks is None or build is None or build.state is not BuildState.SUCCEEDED:
        return False
    before = _runs.get(app.id)

    async def after_the_one_before() -> SuiteRun | None:
        if before is not None:
            await asyncio.wait([before])
        try:
            return await run_checks(engine, app, build)
        except Exception as exc:  # nothing awaits a background run: its failure is logged
            log.error("the checks of app=%s could not run: %s", app.id, kind(exc))
            return None

    task = asyncio.get_running_loop().create_task(after_the_one_before())
    _runs[app.id] = task
    task.add_done_callback(lambda done: _forget(app.id, done))
    return True


def _forget(app_id: str, done: asyncio.Task[SuiteRun | None]) -> None:
    if _runs.get(app_id) is done:  # a newer run may have taken its place
        del _runs[app_id]


def running(app_id: str) -> bool:
    """Whether a background run of the app's checks is under way in this process."""
    return app_id in _runs


async def settled(app_id: str) -> None:
    """Wait until the app's background runs (if any) have ended."""
    while (task := _runs.get(app_id)) is not None:
        await asyncio.wait([task])


async def run_checks(engine: EngineParts, app: App, build: Build) -> SuiteRun | None:
    """Every live check against ``build``, the run recorded (None when the app has no live
    checks); the runner's trouble is the run's ``not_run`` with why, never a verdict."""
    store = engine.checks
    if store is None:
        return None
    live = [c for c in await io(store.list, app.id) if c.live]
    if not live:
        return None
    not_run = tuple(CheckResult(check_id=c.id, status="not_run") for c in live)
    outcome = RunOutcome(not_run, NO_RUNNER)
    if engine.acceptance is not None:
        try:
            outcome = await engine.acceptance.run(app, build, live)
        except Exception as exc:
            log.exception("acceptance checks of app=%s could not run", app.id)
            outcome = RunOutcome(not_run, f"the checks could not run ({kind(exc)})")
    head = await io(engine.memory.head, app.id)
    run = SuiteRun(
        turn=head.turn,
        round=0,
        build_id=build.id,
        digest=build.source_digest,
        results=outcome.results,
        why_not_run=outcome.why_not_run,
    )
    run = await io(store.record_run, app.id, run)
    await tell_broken(engine, app.id, run)
    return run
