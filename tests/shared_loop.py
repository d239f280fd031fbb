"""One event loop per test process for tests that check pages in the kept browser.

The kept browser is one per event loop (adapters/local/browser_pool.py), so a test that
calls ``asyncio.run`` for each check starts and closes a Playwright driver and a boxed
Chromium every time: about a CPU-second and two to four seconds of a loaded machine. On
this loop one browser serves them all, as one serves a server's turns (each check still
gets a fresh context of its own). Tests of the kept browser's own life keep their loops.

Tests that drive a check on a browser they hand over (``run_check(browser, …)``) take
:func:`browser`: one boxed Chromium on this loop for the whole process, launched as the
platform launches it (``chromium.launch``), each check still in a confined context of its
own."""

from __future__ import annotations

import asyncio
import atexit
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from playwright.async_api import Browser, Playwright

T = TypeVar("T")

_runner: asyncio.Runner | None = None
_driver: Playwright | None = None
_browser: Browser | None = None


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on the process's shared loop (made on first use, closed at exit)."""
    global _runner
    if _runner is None:
        _runner = asyncio.Runner()
        atexit.register(_runner.close)
    return _runner.run(coro)


async def browser(executable: str) -> Browser:
    """The process's boxed Chromium on the shared loop (call it inside :func:`run`): launched
    on first use, and again if it went away; closed at exit, before the loop."""
    global _driver, _browser
    if _browser is not None and _browser.is_connected():
        return _browser
    from playwright.async_api import async_playwright

    from zerocode.adapters.local.chromium import launch

    if _driver is None:
        _driver = await async_playwright().start()
        atexit.register(_stop)  # atexit runs last-registered first: before the loop closes
    _browser = await launch(_driver, executable)
    return _browser


def _stop() -> None:
    async def stop() -> None:
        if _browser is not None and _browser.is_connected():
            await _browser.close()
        if _driver is not None:
            await _driver.stop()

    if _runner is not None:
        run(stop())
