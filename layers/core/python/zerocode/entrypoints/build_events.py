"""EventBridge "CodeBuild Build State Change" → the build record, and publishing.

The event names the CodeBuild build; which app and which of our builds it was comes from
the environment variables the builder set when it started it. Anything else (another
project's build, a phase change, a malformed event) is ignored and says why, because an
EventBridge rule retries a function that raises.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from zerocode.adapters.aws.build_handoff import TASK_CHECKS, TASK_VARIABLE
from zerocode.publishing.build_signals import BuildSignals, runner_of
from zerocode.publishing.builds import is_build_id
from zerocode.publishing.service import Publishing

log = logging.getLogger(__name__)
FINAL = {"SUCCEEDED", "FAILED", "FAULT", "STOPPED", "TIMED_OUT"}


def handle(
    publishing: Publishing, event: Mapping[str, Any], signals: BuildSignals | None = None
) -> dict[str, str]:
    """``signals``: where a run's end is told to whoever waits for it (a turn's preview
    build, a suite's checks run), before anything else is done with it."""
    detail = event.get("detail") if isinstance(event, Mapping) else None
    if (
        not isinstance(detail, Mapping)
        or event.get("detail-type") != "CodeBuild Build State Change"
    ):
        return {"result": "ignored", "reason": "not a CodeBuild build state change"}
    status = str(detail.get("build-status", ""))
    if status not in FINAL:
        return {"result": "ignored", "reason": f"build is {status or 'in an unknown state'}"}
    env = _variables(detail)
    app_id, build_id = env.get("ZEROCODE_APP_ID", ""), env.get("ZEROCODE_BUILD_ID", "")
    if not app_id or not is_build_id(build_id):
        return {"result": "ignored", "reason": "not a zerocode build"}
    if signals is not None:
        signals.tell(runner_of(str(detail.get("build-id", ""))), status)
    if env.get(TASK_VARIABLE) == TASK_CHECKS:  # its waiter reads it (adapters/aws/build_acceptance)
        return {"result": "ignored", "reason": "a checks run: the suite that started it reads it"}
    build = publishing.finish(app_id, build_id)
    if build is None:
        log.warning("build event for unknown build %s of app %s", build_id, app_id)
        return {"result": "ignored", "reason": "no such build (its app was deleted?)"}
    log.info(
        "build %s of app %s is %s",
        build_id,
        app_id,
        build.state.value,
        extra={"app_id": app_id, "build_id": build_id},
    )
    return {"result": build.state.value, "buildId": build_id}


def _variables(detail: Mapping[str, Any]) -> dict[str, str]:
    info = detail.get("additional-information")
    environment = info.get("environment") if isinstance(info, Mapping) else None
    variables = (
        environment.get("environment-variables") if isinstance(environment, Mapping) else None
    )
    if not isinstance(variables, list):
        return {}
    return {
        str(v.get("name")): str(v.get("value"))
        for v in variables
        if isinstance(v, Mapping) and v.get("name")
    }
