"""The acceptance step of a turn: the app's suite run against the new preview, each verdict
streamed (a pass as its check ends, issue 40; a failure, whose screenshot names the stored
run, once the run is stored) and recorded, failures turned into a repair round
(docs/engine.md, "Acceptance checks"); and an html / multi-file answer's ```checks block
applied to the suite.

Kept apart from engine/turn_steps.py so the turn's steps read as the build, the runtime
check and this, each with its own verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from zerocode.apps.records import App
from zerocode.engine import repair
from zerocode.engine.acceptance import CheckInvalid, parse_check
from zerocode.engine.check_suite import (
    AcceptanceRunner,
    CheckResult,
    CheckStore,
    RunOutcome,
    StoredCheck,
    SuiteRun,
)
from zerocode.engine.events import CheckEvent
from zerocode.engine.parts import EngineParts, io, kind, logged
from zerocode.engine.turn_state import TurnState
from zerocode.errors import Conflict, NotFound
from zerocode.publishing.builds import Build, snapshot

log = logging.getLogger("zerocode.engine.turn")

NO_RUNNER = "no browser runs acceptance checks here"
NOTE_HEAD = "[zerocode checks: what your last answer's checks block did]"
# A turn's suite runs (its first and each repair round's) share this much browser time: one
# tenant's slow suite holds the checking browser for a bounded time per turn (issue 37).
TURN_SUITE_SECONDS = 300.0
USED_UP = f"this turn's browser time for checks ({TURN_SUITE_SECONDS:g} s) is used up"
_clock = time.monotonic  # the suite's time (a test's clock may stand in)


@dataclass(frozen=True)
class SuiteVerdict:
    """What the suite found: the failure to repair, or None (passed, not run, no checks)."""

    failure: repair.Failure | None


def screenshot_url(app_id: str, check_id: str, run: int) -> str:
    return f"/api/apps/{app_id}/checks/{check_id}/runs/{run}/screenshot"


async def run_suite(
    engine: EngineParts,
    app: App,
    st: TurnState,
    build: Build | None,
    *,
    go: asyncio.Event | None = None,
) -> AsyncIterator[CheckEvent | SuiteVerdict]:
    """Run every live check against the preview (``build``, or what it shows now), record
    the run, stream each verdict; last, the verdict of the whole. With ``go``, the suite
    runs while the runtime check does (engine/page_checks.py): until ``go`` is set its
    events wait unread there, and nothing is shown (the phase, a step) or recorded."""
    phase = _shown(st, go)
    st.suite_changed = False
    store = engine.checks
    if store is None or st.turn is None:
        yield SuiteVerdict(None)
        return
    phase("reading the acceptance checks")
    live = [c for c in await io(store.list, app.id) if c.live]
    if not live:
        yield SuiteVerdict(None)
        return
    phase("running the acceptance checks")
    runner = engine.acceptance
    not_run = tuple(CheckResult(check_id=c.id, status="not_run") for c in live)
    outcome = RunOutcome(not_run, NO_RUNNER)
    by_id = {c.id: c for c in live}
    told: set[str] = set()  # checks whose event went out as they ended
    left = TURN_SUITE_SECONDS - st.suite_seconds
    if runner is not None and left <= 0:
        outcome = RunOutcome(not_run, USED_UP)
    elif runner is not None:
        began = _clock()
        async for item in _streamed(runner, app, build, live, left, st.round, told):
            if isinstance(item, RunOutcome):
                outcome = item
            else:
                yield item
        st.suite_seconds += _clock() - began
    if go is not None:
        await go.wait()  # the runtime check passed (or could not run): the run is told
    run = st.suite_run = await _record(engine, app, st, build, outcome)
    for result in run.results:
        check = by_id.get(result.check_id)
        if check is None:
            continue
        st.steps.append(_step_line(check, result, outcome.why_not_run))
        if check.id not in told:
            yield _event(app.id, check, result, run.round, run.number, outcome.why_not_run)
    yield SuiteVerdict(_failure(run, by_id))


def _shown(st: TurnState, go: asyncio.Event | None) -> Callable[[str], None]:
    """The suite's phase, shown unless the suite is held (``go`` not set yet)."""

    def phase(text: str) -> None:
        if go is None or go.is_set():
            st.phase = text

    return phase


async def _record(
    engine: EngineParts, app: App, st: TurnState, build: Build | None, outcome: RunOutcome
) -> SuiteRun:
    """The run stored (its number given); as it was when the store fails (number 0)."""
    assert engine.checks is not None and st.turn is not None
    digest = build.source_digest if build is not None else None
    if digest is None:
        with logged("could not read the files of app=%s", app.id):
            digest = (await io(snapshot, engine.workspace, app.id)).digest
    run = SuiteRun(
        turn=st.turn.number,
        round=st.round,
        build_id=build.id if build is not None else None,
        digest=digest,
        results=outcome.results,
        why_not_run=outcome.why_not_run,
    )
    st.phase = "recording the acceptance checks"
    try:
        return await io(engine.checks.record_run, app.id, run)
    except Exception as exc:  # the verdicts still stand and are told; the record is lost
        log.error("could not record the checks run of app=%s: %s", app.id, kind(exc))
        return run


async def _streamed(
    runner: AcceptanceRunner,
    app: App,
    build: Build | None,
    live: list[StoredCheck],
    left: float,
    round: int,
    told: set[str],
) -> AsyncIterator[CheckEvent | RunOutcome]:
    """The runner's run: a passing check's event as it ends (its id added to ``told``), then
    the outcome; the runner's own trouble is never the page's verdict."""
    by_id = {c.id: c for c in live}
    ended: asyncio.Queue[CheckResult | None] = asyncio.Queue()
    task = asyncio.ensure_future(
        runner.run(app, build, live, seconds=left, on_result=ended.put_nowait)
    )
    task.add_done_callback(lambda _: ended.put_nowait(None))
    try:
        while (result := await ended.get()) is not None:
            check = by_id.get(result.check_id)
            # A failure's evidence names the stored run (its screenshot): told once stored.
            if check is not None and result.status == "passed" and check.id not in told:
                told.add(check.id)
                yield _event(app.id, check, result, round, 0, None)
        yield task.result()
    except Exception as exc:
        log.exception("acceptance checks of app=%s could not run", app.id)
        not_run = tuple(CheckResult(check_id=c.id, status="not_run") for c in live)
        yield RunOutcome(not_run, f"the checks could not run ({kind(exc)})")
    finally:
        if not task.done():  # the turn went away (stopped): so does its suite
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def _event(
    app_id: str, check: StoredCheck, result: CheckResult, round: int, number: int, why: str | None
) -> CheckEvent:
    """A check's event: ``number`` is its stored run's, 0 when told before the run was
    stored (a passing check, as it ended) or when it could not be stored."""
    evidence: dict[str, str | None] | None = None
    if result.evidence is not None:
        shot = screenshot_url(app_id, check.id, number) if result.evidence.shot and number else None
        evidence = {**result.evidence.to_json(), "screenshot": shot}
    return CheckEvent(
        id=check.id,
        description=check.check.description,
        status=result.status,
        round=round,
        run=number,
        evidence=evidence,
        note=(why or "not run") if result.status == "not_run" else None,
    )


def _said(check: StoredCheck, result: CheckResult) -> str:
    ev = result.evidence
    where = f"{ev.where}: expected {ev.expected}, found {ev.actual}" if ev else "failed"
    return f'{check.id} "{check.check.description}": {where}'


def _step_line(check: StoredCheck, result: CheckResult, why: str | None) -> str:
    if result.status == "passed":
        return f"✓ check {check.id} passed: {check.check.description}"
    if result.status == "not_run":
        return f"– check {check.id} not run ({why or 'not run'}): {check.check.description}"
    return f"✗ check {_said(check, result)}"


def _failure(run: SuiteRun, checks: dict[str, StoredCheck]) -> repair.Failure | None:
    failed = [r for r in run.failed() if r.check_id in checks]
    if not failed:
        return None
    total = len(run.results)
    verb = "fails" if len(failed) == 1 else "fail"
    summary = f"{len(failed)} of {total} acceptance checks {verb} on the new preview"
    details = tuple(f"- {_said(checks[r.check_id], r)}" for r in failed)
    return repair.Failure("acceptance", summary, details)


async def tell_checks(engine: EngineParts, app_id: str, st: TurnState) -> None:
    """What an answer's checks block did, told to the model once its turn is closed (a
    one-shot answer has no tool result to carry it): a note of its own (M9). An answer
    not saved for undoing the builder's edit and not yet told (the turn's last answer)
    is told in the same note (engine/answer_guard.py)."""
    if not (st.checks_note or st.refused) or st.turn is None or not st.turn.closed:
        return
    said = NOTE_HEAD + "\n" + "\n".join(st.checks_note) if st.checks_note else ""
    text = (st.take_refused() + said).strip()
    st.checks_note = []
    with logged("could not tell the model about the checks of app=%s", app_id):
        await io(engine.memory.record_note, app_id, text)


def apply_checks_block(store: CheckStore, app_id: str, turn: int, raw: str) -> list[str]:
    """Apply an answer's ```checks block (``{"add": [...], "retire": [...]}`` or a list to
    add) to the suite; one line per thing done or refused, for the note and the display."""
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        return [f"- refused the checks block: it is not JSON ({exc.msg} at line {exc.lineno})"]
    if isinstance(body, list):
        body = {"add": body}
    if not isinstance(body, dict) or set(body) - {"add", "retire"}:
        return ['- refused the checks block: it must be {"add": [...], "retire": [...]}']
    adds, retires = body.get("add", []), body.get("retire", [])
    if not isinstance(adds, list) or not isinstance(retires, list):
        return ['- refused the checks block: "add" and "retire" must be lists']
    lines = []
    for i, raw_check in enumerate(adds, start=1):
        try:
            stored = store.add(app_id, parse_check(raw_check), turn)
            lines.append(f"- added {stored.id}: {stored.check.description}")
        except CheckInvalid as exc:
            lines.append(f"- refused check {i}: {exc.message}")
    for item in retires:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            lines.append('- not retired: each retirement is {"id": "c2", "reason": "…"}')
            continue
        try:
            retired = store.retire(app_id, item["id"], item.get("reason"), turn)  # type: ignore[arg-type]
            lines.append(f"- retired {retired.id}: {retired.retired}")
        except (CheckInvalid, NotFound, Conflict) as exc:
            lines.append(f"- not retired {item['id'][:20]}: {exc.message}")
    return lines
