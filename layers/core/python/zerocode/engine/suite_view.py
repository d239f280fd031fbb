"""The app's suite as people see it (``GET /api/apps/{id}/checks``), the gate a deploy with
``requireChecks`` passes, and a check retired from the console (docs/api.md, "Acceptance
checks").

A check's state for a version is its newest verdict in a run whose build was made from
that version's files (the same source digest): a deploy publishes the files as they are,
so it is judged by the runs of exactly those files, and a check never run on them counts
as not run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zerocode.apps.versions import Versions
from zerocode.engine.check_suite import (
    CheckResult,
    CheckStore,
    StoredCheck,
    SuiteRun,
    Tally,
    retire_reason,
)
from zerocode.engine.closing import close_crashed
from zerocode.engine.parts import EngineParts, app_lease, io
from zerocode.engine.platform_checks import is_platform
from zerocode.engine.suite_follow import running
from zerocode.engine.suite_step import screenshot_url
from zerocode.engine.suite_update import edit_changed
from zerocode.errors import Conflict, NotFound

RUNS_SHOWN = 20
RUNS_READ = 100  # the runs a deploy's gate looks through for the files' verdicts


class ChecksFailed(Conflict):
    """A deploy that requires passing checks, with checks failing or not run on its files."""

    code = "checks_failed"


@dataclass(frozen=True)
class Verdicts:
    """Each live check's newest verdict on one set of files ("not_run" when never run)."""

    by_check: dict[str, str]

    @property
    def tally(self) -> Tally:
        found = list(self.by_check.values())
        return Tally(
            passed=found.count("passed"),
            failed=found.count("failed"),
            not_run=found.count("not_run"),
        )

    def short_of_passing(self) -> list[str]:
        return [
            f"{cid} {status.replace('_', ' ')}"
            for cid, status in self.by_check.items()
            if status != "passed"
        ]


def verdicts_for(store: CheckStore, app_id: str, digest: str) -> Verdicts | None:
    """The live checks' verdicts on the files of ``digest``; None when the app has none."""
    live = [c for c in store.list(app_id) if c.live]
    if not live:
        return None
    runs = [r for r in store.runs(app_id, RUNS_READ) if r.digest == digest]
    found: dict[str, str] = {}
    for check in live:
        result = _newest(runs, check.id)
        found[check.id] = result.status if result is not None else "not_run"
    return Verdicts(found)


def gate_deploy(store: CheckStore, app_id: str, digest: str, *, required: bool) -> Tally | None:
    """The suite's state for a deploy of these files; ChecksFailed when passing checks are
    required and one failed or was never run on them."""
    verdicts = verdicts_for(store, app_id, digest)
    if verdicts is None:
        return None
    short = verdicts.short_of_passing()
    if required and short:
        raise ChecksFailed(
            "this app requires its acceptance checks to pass before a deploy, and on the "
            "files to deploy " + ", ".join(short) + " (" + _next_step(app_id) + ")"
        )
    return verdicts.tally


def _next_step(app_id: str) -> str:
    if running(app_id):
        return "the checks are running on these files now: deploy once they pass"
    return (
        "run the checks (the Checks tab's Run checks now), update or retire a check "
        "that no longer applies, or rebuild the preview"
    )


def suite_json(store: CheckStore, versions: Versions | None, app_id: str) -> dict[str, Any]:
    """The body of ``GET /api/apps/{id}/checks`` (without the app's setting)."""
    checks = store.list(app_id)
    runs = store.runs(app_id, RUNS_SHOWN)
    made_from = versions.made_from(app_id) if versions is not None else {}
    newest = versions.store.list(app_id, None, 50) if versions is not None else []

    def run_head(run: SuiteRun) -> dict[str, Any]:
        return {
            "run": run.number,
            "turn": run.turn,
            "round": run.round,
            "versionId": made_from.get(run.digest or ""),
            "buildId": run.build_id,
            "at": run.at,
        }

    out = []
    for check in checks:
        last = next(((r, x) for r in runs if (x := _result(r, check.id)) is not None), None)
        last_run = None
        if last is not None:
            run, result = last
            last_run = {
                **run_head(run),
                "status": result.status,
                "evidence": _evidence(app_id, check.id, run, result),
            }
        status = "retired" if not check.live else (last_run or {}).get("status", "not_run")
        out.append(
            {
                "id": check.id,
                "description": check.check.description,
                "steps": [s.to_json() for s in check.check.steps],
                "expect": [e.to_json() for e in check.check.expect],
                "status": status,
                "addedTurn": check.added_turn,
                "retired": {"reason": check.retired, "turn": check.retired_turn}
                if not check.live
                else None,
                "lastRun": last_run,
                "editChanged": edit_changed(check, runs, newest),
                "platform": is_platform(check.id),
                "history": [
                    {"run": r.number, "turn": r.turn, "status": x.status}
                    for r in runs
                    if (x := _result(r, check.id)) is not None
                ],
            }
        )
    listed = [
        {**run_head(r), "checks": r.tally.to_json(), "whyNotRun": r.why_not_run} for r in runs
    ]
    return {"checks": out, "runs": listed}


async def retire_by_user(
    engine: EngineParts, app_id: str, check_id: str, reason: str
) -> StoredCheck:
    """A check retired from the console: under the app's turn lease (409 while a turn runs),
    told to the model in a note (M9), which is the turn the retirement names."""
    store = engine.checks
    if store is None:
        raise NotFound("acceptance checks are not kept on this platform")
    why = retire_reason(reason)
    async with app_lease(engine, app_id, "a turn is running for this app; retire it after"):
        found = next((c for c in await io(store.list, app_id) if c.id == check_id), None)
        if found is None:
            raise NotFound(f"check {check_id[:20]} not found")
        if not found.live:
            raise Conflict(f"check {check_id} is retired already")
        note = (
            f"[zerocode checks: the user retired check {found.id} "
            f'("{found.check.description}") in the console: {why}]'
        )
        crashed = await io(close_crashed, engine, app_id)
        turn = await io(engine.memory.record_note, app_id, note, crashed)
        return await io(store.retire, app_id, found.id, why, turn)


def _result(run: SuiteRun, check_id: str) -> CheckResult | None:
    return next((r for r in run.results if r.check_id == check_id), None)


def _newest(runs: list[SuiteRun], check_id: str) -> CheckResult | None:
    for run in runs:  # newest first
        found = _result(run, check_id)
        if found is not None:
            return found
    return None


def _evidence(
    app_id: str, check_id: str, run: SuiteRun, result: CheckResult
) -> dict[str, Any] | None:
    if result.evidence is None:
        return None
    shot = screenshot_url(app_id, check_id, run.number) if result.evidence.shot else None
    return {**result.evidence.to_json(), "screenshot": shot}
