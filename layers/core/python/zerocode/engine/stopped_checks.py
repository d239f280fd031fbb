"""Checks the server's stop left unrun (issue 38, "Shutdown in order").

A stopping server lets its turns finish, checks included, within a bound
(``ZEROCODE_SHUTDOWN_SECONDS``); a turn still running past it is stopped, and when its files
were never checked as they are now, its checks are recorded ``not_run`` with the reason
:data:`STOPPING` (:func:`mark_not_run`) rather than any verdict. At the next start those
runs are found and the checks run again on their own against each app's current preview
(:func:`rerun`), as a preview built outside a turn is checked (engine/suite_follow.py).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable

from zerocode.apps.records import App
from zerocode.engine.check_suite import CheckResult, SuiteRun
from zerocode.engine.events import CheckEvent
from zerocode.engine.parts import EngineParts, io, kind, logged
from zerocode.engine.suite_follow import follow, settled
from zerocode.engine.turn_state import TurnState
from zerocode.publishing.builds import Build, BuildPurpose, BuildState, BuildStore, snapshot

log = logging.getLogger("zerocode.engine.checks")

STOPPING = "the server was stopping"


async def mark_not_run(engine: EngineParts, app: App, st: TurnState) -> AsyncIterator[CheckEvent]:
    """A turn the stopping server cut short: its live checks recorded (and streamed)
    ``not_run`` for STOPPING when the turn changed files its suite never judged as they are
    now; nothing when it changed none or its newest run saw these very files."""
    store = engine.checks
    if store is None or st.turn is None or not (st.changed or st.saved):
        return
    with logged("could not mark the checks of app=%s not run", app.id):
        digest = (await io(snapshot, engine.workspace, app.id)).digest
        if st.suite_run is not None and st.suite_run.digest == digest:
            return
        live = [c for c in await io(store.list, app.id) if c.live]
        if not live:
            return
        results = tuple(CheckResult(check_id=c.id, status="not_run") for c in live)
        run = SuiteRun(
            turn=st.turn.number,
            round=st.round,
            build_id=None,
            digest=digest,
            results=results,
            why_not_run=STOPPING,
        )
        run = await io(store.record_run, app.id, run)
        st.suite_run = run
        for check in live:
            st.steps.append(f"– check {check.id} not run ({STOPPING}): {check.check.description}")
            yield CheckEvent(
                id=check.id,
                description=check.check.description,
                status="not_run",
                round=run.round,
                run=run.number,
                evidence=None,
                note=STOPPING,
            )


def current_preview(builds: BuildStore, app_id: str) -> Build | None:
    """The app's newest successful preview build: the one its preview shows."""
    page = builds.list(app_id, limit=20, purpose=BuildPurpose.PREVIEW)
    return next((b for b in page.builds if b.state is BuildState.SUCCEEDED), None)


async def rerun(
    engine: EngineParts,
    app_ids: list[str],
    app_of: Callable[[str], App | None],
    builds: BuildStore,
) -> int:
    """At start: run again the checks of each app whose newest run was left ``not_run`` by
    a stopping server, against its current preview, each run recorded as any; how many
    apps' checks ran. One app's trouble is logged and never stops the others."""
    ran = 0
    for app_id in app_ids:
        try:
            if await _rerun_one(engine, app_id, app_of, builds):
                ran += 1
        except Exception as exc:
            log.error("the stopped checks of app=%s could not run again: %s", app_id, kind(exc))
    return ran


async def _rerun_one(
    engine: EngineParts,
    app_id: str,
    app_of: Callable[[str], App | None],
    builds: BuildStore,
) -> bool:
    store, app = engine.checks, await io(app_of, app_id)
    if store is None or app is None:
        return False
    newest = await io(store.runs, app_id, 1)
    if not newest or newest[0].why_not_run != STOPPING:
        return False  # run again already (or by a turn) since
    build = await io(current_preview, builds, app_id)
    if build is None:  # nothing to check: it stays not run, for the next build's run
        return False
    # As a preview built outside a turn is checked: the Checks tab says they run meanwhile.
    if not follow(engine, app, build):
        return False
    await settled(app_id)
    log.info("checks of app=%s left unrun by the server's stop ran again", app_id)
    return True
