"""Acceptance checks on AWS: a checks run of the build box (issue 42, point 1).

No browser runs in the API function. An app's suite runs where its runtime check runs: in
the platform's build image on CodeBuild, with the page code of a local run and the runtime
check's confinement (:mod:`zerocode.buildbox.box_checks`). Each run of the suite is one
CodeBuild run of the box with ``ZEROCODE_TASK=checks``: its source is the checked build's
output as published (``builds/{appId}/{buildId}/``, so the checks see exactly what the
preview or site serves), the checks, and the build's data model for a data app; it hands
back the verdicts and the failures' screenshots through the same one-archive hand-off as a
build (:mod:`.build_handoff`), read here by the platform's rules: the verdicts are the
box's word, and the box ran the app's code, so anything malformed, unknown or too large is
"not run", never "passed". ``requireChecks`` then means on AWS what it means locally.

The run is waited for (a turn's suite needs its verdicts); a turn stopped or gone stops it
(StopBuild), and so does the run's time running out. What a checks run costs and how long
it takes: docs/operations.md, "Acceptance checks on AWS".
"""

from __future__ import annotations

import asyncio
import json
import logging
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder
from zerocode.apps.records import App
from zerocode.data.in_force import BuildModels
from zerocode.engine.check_suite import (
    MAX_SCREENSHOT,
    CheckResult,
    Evidence,
    RunOutcome,
    StoredCheck,
)
from zerocode.engine.platform_checks import PlatformCheck
from zerocode.publishing.builds import Build, BuildState, new_build_id
from zerocode.publishing.output_archive import OutputRefused

log = logging.getLogger(__name__)

SUITE_SECONDS = 180.0  # a suite's run, however much time the turn has left (as locally)
# Past the suite's own time: CodeBuild starting the box (Lambda compute: seconds), the
# source fetched, Chromium started and the verdicts handed back.
START_SECONDS = 120.0
VERDICTS = {"passed", "failed", "not_run"}
MAX_WHERE, MAX_EXPECTED, MAX_ACTUAL, MAX_WHY = 40, 400, 1_500, 300


class BoxAcceptance:
    """:class:`zerocode.engine.check_suite.AcceptanceRunner` by checks runs of the build box."""

    def __init__(
        self,
        builder: CodeBuildBuilder,
        *,
        shown: Callable[[App], str | None],
        models: Callable[[], BuildModels | None],
        start_seconds: float = START_SECONDS,
    ) -> None:
        """``shown``: the build an app's preview shows now (for a run asked for without a
        build); ``models``: each build's data model, as kept when it started."""
        self.builder, self.shown, self.models = builder, shown, models
        self.start_seconds = start_seconds

    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
        on_result: Callable[[CheckResult], None] | None = None,
    ) -> RunOutcome:
        bound = SUITE_SECONDS if seconds is None else min(SUITE_SECONDS, seconds)
        if build is not None and build.state is not BuildState.SUCCEEDED:
            return not_run(checks, "the build did not succeed")
        build_id = build.id if build is not None else await asyncio.to_thread(self.shown, app)
        if build_id is None:
            return not_run(checks, "the preview shows no build")
        try:
            source = await asyncio.to_thread(self._source, app, build_id, checks, bound)
        except Exception as exc:  # a store failing: the checks are not run, and say so
            log.warning("checks of app %s not run: %s", app.id, type(exc).__name__)
            return not_run(checks, "the build's output could not be read")
        if source is None:
            return not_run(checks, "the build's output is gone")
        run_id = new_build_id()
        variables = {
            "ZEROCODE_KIND": app.code_gen_type.value,
            "ZEROCODE_PREVIEW": "0",
            handoff.TASK_VARIABLE: handoff.TASK_CHECKS,
            "ZEROCODE_CHECKED_BUILD": build_id,
        }
        runner = await self.builder.launched(
            lambda: self.builder.launch(app.id, run_id, source, variables), app.id, run_id
        )
        outcome = await self._outcome(app.id, run_id, runner, checks, bound)
        if on_result is not None:
            for result in outcome.results:
                on_result(result)
        return outcome

    async def _outcome(
        self, app_id: str, run_id: str, runner: str, checks: Sequence[StoredCheck], bound: float
    ) -> RunOutcome:
        """The run waited for, stopped if it is not wanted any more, its verdicts read."""
        try:
            state = await self._wait(runner, bound + self.start_seconds)
        except BaseException:  # the turn stopped or went away: so does its checks run
            await asyncio.to_thread(self.builder.stop, runner, app_id, run_id)
            raise
        if state is None:
            await asyncio.to_thread(self.builder.stop, runner, app_id, run_id)
            waited = bound + self.start_seconds
            return not_run(checks, f"the checks run did not finish within {waited:.0f} s")
        status = str(state.get("buildStatus"))
        with tempfile.TemporaryDirectory(prefix="zerocode-checks-") as tmp:
            try:
                out = await asyncio.to_thread(self.builder.unpacked, app_id, run_id, Path(tmp))
            except OutputRefused as exc:
                log.warning("checks run %s of app %s refused: %s", run_id, app_id, exc)
                out = None
            finally:
                await asyncio.to_thread(self.builder.drop_output, app_id, run_id)
            if out is None:
                return not_run(checks, f"the checks run handed back no verdicts ({status})")
            return read_verdicts(out, checks)

    async def _wait(self, runner: str, seconds: float) -> dict[str, Any] | None:
        return await self.builder.waiter.settled(runner, time.monotonic() + seconds)

    def _source(
        self, app: App, build_id: str, checks: Sequence[StoredCheck], seconds: float
    ) -> dict[str, bytes] | None:
        """The checks run's source: the build's output under ``site/``, the checks and the
        data model; None when the output is gone (expired, or never written)."""
        site = self.builder.output_files(app.id, build_id, handoff.MAX_SOURCE_BYTES // 2)
        if site is None or "index.html" not in site:
            return None
        spec = {
            "checks": [
                {"id": c.id, "check": c.check.to_json()}
                for c in checks
                if not isinstance(c, PlatformCheck)
            ],
            "platform": [c.id for c in checks if isinstance(c, PlatformCheck)],
            "seconds": seconds,
        }
        files = {handoff.SITE_IN_SOURCE + name: data for name, data in site.items()}
        files[handoff.CHECKS_IN_SOURCE] = json.dumps(spec).encode()
        models = self.models()
        model = models.get(app.id, build_id) if models is not None else None
        if model is not None:
            files[handoff.DATA_MODEL_IN_SOURCE] = model
        return files


def not_run(checks: Sequence[StoredCheck], why: str) -> RunOutcome:
    return RunOutcome(tuple(CheckResult(check_id=c.id, status="not_run") for c in checks), why)


def read_verdicts(out: Path, checks: Sequence[StoredCheck]) -> RunOutcome:
    """The verdicts a checks run handed back, by the platform's rules: only the checks asked
    for, each once, with a known verdict and bounded evidence; a screenshot only when it is
    a PNG within MAX_SCREENSHOT. A check the box did not report is not run."""
    raw = _bounded(out / handoff.ACCEPTANCE_FILE, handoff.MAX_ACCEPTANCE_BYTES)
    try:
        body = json.loads(raw) if raw is not None else None
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        return not_run(checks, "the checks run's verdicts could not be read")
    wanted = {c.id for c in checks}
    found: dict[str, CheckResult] = {}
    for item in body["results"]:
        result = _verdict(item, out) if isinstance(item, dict) else None
        if result is not None and result.check_id in wanted and result.check_id not in found:
            found[result.check_id] = result
    why = body.get("whyNotRun")
    why = why.strip().splitlines()[0][:MAX_WHY] if isinstance(why, str) and why.strip() else None
    if why is None and len(found) < len(checks):
        why = "the checks run did not report every check"
    return RunOutcome(
        tuple(found.get(c.id) or CheckResult(check_id=c.id, status="not_run") for c in checks),
        why,
    )


def _verdict(item: dict[str, Any], out: Path) -> CheckResult | None:
    check_id, status = item.get("id"), item.get("status")
    if not isinstance(check_id, str) or len(check_id) > 80 or status not in VERDICTS:
        return None
    said = item.get("evidence")
    if status != "failed" or not isinstance(said, dict):
        return CheckResult(check_id=check_id, status=status)
    texts = [said.get(k) for k in ("where", "expected", "actual")]
    if not all(isinstance(t, str) for t in texts):
        return CheckResult(check_id=check_id, status=status)
    where, expected, actual = (str(t) for t in texts)
    shot = None
    if item.get("shot") is True and "/" not in check_id and check_id not in (".", ".."):
        shot = _bounded(out / handoff.SHOTS_DIR / f"{check_id}.png", MAX_SCREENSHOT)
        shot = shot if shot is not None and shot.startswith(handoff.PNG_MAGIC) else None
    evidence = Evidence(
        where=where[:MAX_WHERE],
        expected=expected[:MAX_EXPECTED],
        actual=actual[:MAX_ACTUAL],
        shot=shot is not None,
    )
    return CheckResult(check_id=check_id, status="failed", evidence=evidence, screenshot=shot)


def _bounded(path: Path, limit: int) -> bytes | None:
    """The file's bytes, if it is a regular file of at most ``limit`` bytes."""
    if path.is_symlink() or not path.is_file() or path.stat().st_size > limit:
        return None
    return path.read_bytes()
