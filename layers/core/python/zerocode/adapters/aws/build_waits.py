"""Waiting for a CodeBuild run to end: by build_events' word, CodeBuild asked as a fallback.

With :class:`~zerocode.publishing.build_signals.BuildSignals` (the AWS wiring's), a waiter
reads the run's signal every ``hear_seconds`` and asks CodeBuild (BatchGetBuilds) once it is
there, or every ``fallback_seconds`` should the event be lost; without signals it asks
CodeBuild every ``hear_seconds`` (tests, and a deployment without build_events).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from zerocode.publishing.build_signals import FALLBACK_SECONDS, BuildSignals

FINAL = frozenset({"SUCCEEDED", "FAILED", "FAULT", "STOPPED", "TIMED_OUT"})


class RunWaiter:
    def __init__(
        self,
        run_state: Callable[[str], dict[str, Any] | None],
        signals: BuildSignals | None = None,
        *,
        hear_seconds: float = 2.0,
        fallback_seconds: float = FALLBACK_SECONDS,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.run_state, self.signals = run_state, signals
        self.hear_seconds, self.fallback_seconds, self.sleep = (
            hear_seconds,
            fallback_seconds,
            sleep,
        )
        self.asked = 0  # BatchGetBuilds calls made while waiting (bench, tests)

    async def settled(self, runner_id: str, deadline: float) -> dict[str, Any] | None:
        """CodeBuild's record of the run once it has ended (a run CodeBuild has no record
        of: FAULT); None if it has not by ``deadline`` (``time.monotonic``)."""
        asked = time.monotonic()
        while time.monotonic() < deadline:
            await self.sleep(self.hear_seconds)
            due = self.signals is None or time.monotonic() - asked >= self.fallback_seconds
            if not due:
                assert self.signals is not None
                due = await asyncio.to_thread(self.signals.heard, runner_id) is not None
            if not due:
                continue
            asked = time.monotonic()
            self.asked += 1
            state = await asyncio.to_thread(self.run_state, runner_id)
            if state is None:
                return {"buildStatus": "FAULT"}
            if str(state.get("buildStatus")) in FINAL:
                return state
        return None
