"""A finished build's word, where whoever waits for the build hears it (issue 42, point 6).

A chat turn waits for its preview build, a suite for its checks run. CodeBuild says a build
is over in an EventBridge event, which ``functions/build_events`` receives; it tells the
build's signal here, and the waiter reads it (a cheap read) instead of asking CodeBuild's
BatchGetBuilds every 2 s: at 10,000 builders building at once that was about 5,000 calls a
second to an API with a low rate limit. The waiter asks CodeBuild once the signal is there,
and every :data:`FALLBACK_SECONDS` should an event be lost (docs/builds.md, "Completion").
"""

from __future__ import annotations

from typing import Protocol

FALLBACK_SECONDS = 30.0  # a waiter asks CodeBuild itself this often, should an event be lost
HEAR_SECONDS = 1.0  # how often a waiter reads the signal


class BuildSignals(Protocol):
    def tell(self, runner_id: str, status: str) -> None:
        """The run ``runner_id`` (CodeBuild's build id) ended with ``status``."""
        ...

    def heard(self, runner_id: str) -> str | None:
        """The status the run ended with, once told; None before."""
        ...


def runner_of(build_arn: str) -> str:
    """CodeBuild's build id (``project:uuid``) from the ARN its events carry."""
    return build_arn.rsplit(":build/", 1)[-1]
