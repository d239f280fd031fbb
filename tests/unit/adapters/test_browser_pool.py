"""The kept browser's bounds without a browser (issue 28, point 2): a browser that never gives
a context is dropped after OPEN_SECONDS and the check is "not checked", never stuck."""

from __future__ import annotations

import asyncio
import time

import pytest

from zerocode.adapters.local import browser_pool
from zerocode.adapters.local.browser_pool import BrowserPool, _Kept
from zerocode.adapters.local.chromium_check import ChromiumCheck
from zerocode.publishing.pointers import SiteUrls


def test_a_browser_that_gives_no_context_is_dropped_and_the_check_not_stuck(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(browser_pool, "OPEN_SECONDS", 0.3)
    opened, dropped = [], []

    async def hangs(self: _Kept) -> None:
        opened.append(1)
        await asyncio.sleep(3600)

    async def drop(self: _Kept) -> None:
        dropped.append(1)

    monkeypatch.setattr(_Kept, "open", hangs)
    monkeypatch.setattr(_Kept, "drop", drop)
    check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), "/nonexistent/chromium")
    check.browsers = BrowserPool(check.executable)
    pytest.importorskip("playwright")
    started = time.monotonic()

    async def twice() -> list[list[str] | None]:
        return [await check.check_url("http://app1.localhost:9/", vue=False) for _ in range(2)]

    assert asyncio.run(twice()) == [None, None]
    assert time.monotonic() - started < 5
    assert len(opened) == 2 and len(dropped) >= 2  # each time dropped, tried anew next time
