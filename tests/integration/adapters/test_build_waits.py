"""Builds finish by event (issue 42, point 6): build_events tells a run's end in the leases
table, a waiting turn hears it there and asks CodeBuild once; CodeBuild is asked on its own
only as a fallback, should an event be lost. DynamoDB on moto, CodeBuild the stand-in."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import boto3
import pytest

from tests.aws_standins import CodeBuildRun
from tests.integration.adapters.test_box_acceptance import aws  # noqa: F401 - a fixture
from tests.integration.adapters.test_buildbox import moto_url  # noqa: F401 - a fixture
from zerocode.adapters.aws.build_waits import RunWaiter
from zerocode.adapters.dynamodb.build_signals import DynamoBuildSignals
from zerocode.adapters.dynamodb.lease import create_leases_table
from zerocode.entrypoints import build_events


@pytest.fixture
def signals(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> DynamoBuildSignals:  # noqa: F811
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    client = boto3.client("dynamodb", endpoint_url=moto_url, region_name="us-east-1")
    table = f"leases-{time.monotonic_ns()}"
    create_leases_table(client, table)
    return DynamoBuildSignals(client, table)


def test_a_signal_is_heard_once_told_and_only_for_its_run(signals: DynamoBuildSignals) -> None:
    assert signals.heard("zc:1") is None
    signals.tell("zc:1", "SUCCEEDED")
    assert signals.heard("zc:1") == "SUCCEEDED" and signals.heard("zc:2") is None


def start(aws: dict[str, Any]) -> str:  # noqa: F811
    return str(aws["builder"].codebuild.start_build(projectName="zc-project")["build"]["id"])


def test_a_waiter_hears_the_end_and_asks_codebuild_once(
    aws: dict[str, Any],  # noqa: F811
    signals: DynamoBuildSignals,
) -> None:
    """CodeBuild ends the run after a while; build_events (here, its event handled as the
    function does) tells it; the waiter, reading the signal every 50 ms, asks CodeBuild once."""
    codebuild = aws["standins"].codebuild
    builder = aws["builder"]
    waiter = RunWaiter(builder.run_state, signals, hear_seconds=0.05, fallback_seconds=60)

    def finish_later(run: CodeBuildRun) -> None:
        time.sleep(0.5)
        event = codebuild.finish(run.id, "SUCCEEDED").event()
        event["detail"]["additional-information"]["environment"]["environment-variables"] = [
            {"name": "ZEROCODE_APP_ID", "value": "app1", "type": "PLAINTEXT"},
            {"name": "ZEROCODE_BUILD_ID", "value": "b1796516000000000000", "type": "PLAINTEXT"},
            {"name": "ZEROCODE_TASK", "value": "checks", "type": "PLAINTEXT"},
        ]
        build_events.handle(None, event, signals)  # type: ignore[arg-type]

    codebuild.on_start = lambda run: threading.Thread(target=finish_later, args=(run,)).start()
    runner = start(aws)
    state = asyncio.run(waiter.settled(runner, time.monotonic() + 30))
    assert state is not None and state["buildStatus"] == "SUCCEEDED"
    assert waiter.asked == 1  # not once every 50 ms for half a second


def test_a_lost_event_is_made_up_for_by_asking_codebuild_now_and_then(
    aws: dict[str, Any],  # noqa: F811
    signals: DynamoBuildSignals,
) -> None:
    codebuild = aws["standins"].codebuild
    waiter = RunWaiter(aws["builder"].run_state, signals, hear_seconds=0.05, fallback_seconds=0.3)
    codebuild.on_start = lambda run: threading.Timer(
        0.5, lambda: codebuild.finish(run.id, "FAILED")
    ).start()
    runner = start(aws)
    began = time.monotonic()
    state = asyncio.run(waiter.settled(runner, began + 30))
    assert state is not None and state["buildStatus"] == "FAILED"
    assert 1 <= waiter.asked <= 4  # every 0.3 s until it had ended: no event came
    # And a run that does not end by the deadline leaves the wait with nothing.
    codebuild.on_start = None
    assert asyncio.run(waiter.settled(start(aws), time.monotonic() + 0.3)) is None


def test_build_events_tells_only_a_zerocode_runs_final_state(signals: DynamoBuildSignals) -> None:
    def event(status: str, variables: dict[str, str]) -> dict[str, Any]:
        return {
            "detail-type": "CodeBuild Build State Change",
            "detail": {
                "build-status": status,
                "build-id": "arn:aws:codebuild:us-east-1:123456789012:build/zc-project:abc",
                "additional-information": {
                    "environment": {
                        "environment-variables": [
                            {"name": k, "value": v, "type": "PLAINTEXT"}
                            for k, v in variables.items()
                        ]
                    }
                },
            },
        }

    ours = {"ZEROCODE_APP_ID": "app1", "ZEROCODE_BUILD_ID": "b1796516000000000000"}
    build_events.handle(None, event("IN_PROGRESS", ours), signals)  # type: ignore[arg-type]
    build_events.handle(None, event("SUCCEEDED", {"OTHER": "x"}), signals)  # type: ignore[arg-type]
    assert signals.heard("zc-project:abc") is None
    checks = {**ours, "ZEROCODE_TASK": "checks"}
    said = build_events.handle(None, event("FAILED", checks), signals)  # type: ignore[arg-type]
    assert said["result"] == "ignored" and signals.heard("zc-project:abc") == "FAILED"
