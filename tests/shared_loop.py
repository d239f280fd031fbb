"""One event loop per test process for tests that check pages in the kept browser.

The kept browser is one per event loop (adapters/local/browser_pool.py), so a test that
calls ``asyncio.run`` for each check starts and closes a Playwright driver and a boxed
Chromium every time: about a CPU-second and two to four seconds of a loaded machine. On
this loop one browser serves them all, as one serves a server's turns (each check still
gets a fresh context of its own). Tests of the kept browser's own life keep their loops."""

from __future__ import annotations

import asyncio
import atexit
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_runner: asyncio.Runner | None = None


def run(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on the process's shared loop (made on first use, closed at exit)."""
    global _runner
    if _runner is None:
        _runner = asyncio.Runner()
        atexit.register(_runner.close)
    return _runner.run(coro)
