"""The new preview checked in a browser: its runtime check and its acceptance suite at once
(issue 40, point 3; docs/engine.md, "Acceptance checks").

The two used to run one after the other: the suite waited for the runtime check's verdict
(about 0.2 s of a 0.7 s wait after ``build: succeeded``). Now the suite starts with the
runtime check, in contexts of its own, and is held at one gate: nothing of it is told (no
``check`` event, no step line, no stored run) until the runtime check has passed. A page
that fails the runtime check is repaired for that alone, as before: its suite is stopped
and forgotten (never recorded, never shown), since a page that fails to load says nothing
about what its checks would find. The runtime check that could not run (no browser, the
browser busy) leaves the suite as before: told, then run to its end.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Generic, TypeVar

from zerocode.apps.records import App
from zerocode.engine import repair
from zerocode.engine.events import CheckEvent
from zerocode.engine.parts import EngineParts
from zerocode.engine.runtime_check import NotChecked
from zerocode.engine.suite_step import SuiteVerdict, run_suite
from zerocode.engine.turn_state import TurnState
from zerocode.publishing.builds import Build

log = logging.getLogger("zerocode.engine.turn")

T = TypeVar("T")
_END = object()


async def checked(
    engine: EngineParts, app: App, st: TurnState, build: Build
) -> AsyncIterator[CheckEvent | SuiteVerdict]:
    """The runtime check's verdict and the suite's events, the suite run meanwhile; last, the
    verdict of the whole (the runtime check's failure, else the suite's)."""
    check = engine.runtime_check
    if check is None:
        async for item in run_suite(engine, app, st, build):
            yield item
        return
    st.phase = "checking the page in a browser"
    go = asyncio.Event()
    suite = Pumped(run_suite(engine, app, st, build, go=go))
    try:
        problems = await check.check(app, build)
        if problems is None:  # the check could not run (no browser): say so
            st.steps.append("– the page was not checked in a browser")
        elif isinstance(problems, NotChecked):  # the platform's trouble: told, not repaired
            why = problems.why.removeprefix("not checked: ")
            st.steps.append(f"– the page was not checked in a browser: {why}")
        elif problems:
            await suite.stop()  # before a word of it is told: it never ran, as far as anyone knows
            st.steps.append("✗ the page fails in the browser: " + problems[0])
            why = f"the page fails in the browser: {problems[0]}"
            yield SuiteVerdict(repair.Failure("runtime", why, tuple(problems)))
            return
        else:
            st.steps.append("✓ the page loads in a browser without errors")
        go.set()
        async for item in suite.items():
            yield item
    finally:
        await suite.stop()  # the turn went away (stopped) or the check raised: so does the suite


class Pumped(Generic[T]):
    """An async iterator run to its end in a task of its own, its items kept until read:
    what lets the suite go on while the turn waits for the runtime check."""

    def __init__(self, source: AsyncIterator[T]) -> None:
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._task = asyncio.ensure_future(self._pump(source))

    async def _pump(self, source: AsyncIterator[T]) -> None:
        try:
            async for item in source:
                self._queue.put_nowait(item)
        finally:
            self._queue.put_nowait(_END)

    async def items(self) -> AsyncIterator[T]:
        """Its items in order; the source's exception, if it raised, after the last."""
        while (item := await self._queue.get()) is not _END:
            yield item  # type: ignore[misc]
        self._task.result()

    async def stop(self) -> None:
        """Cancel it where it is (nothing when it has ended), and wait until it has."""
        if not self._task.done():
            self._task.cancel()
            await asyncio.wait([self._task])  # the caller's own cancellation still reaches it
        if not self._task.cancelled() and self._task.exception() is not None:
            log.debug("the acceptance suite ended in an error", exc_info=self._task.exception())
