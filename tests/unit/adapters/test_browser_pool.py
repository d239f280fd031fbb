"""The kept browser's bounds without a browser (issue 28, point 2): a browser that never gives
a context is dropped after OPEN_SECONDS and the check is "not checked", never stuck; a browser
retires after MAX_SECONDS or MAX_CHECKS (on a clock and a launch the test drives), once no
check is using it."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from zerocode.adapters.local import browser_pool
from zerocode.adapters.local.browser_pool import BrowserPool, _Kept
from zerocode.adapters.local.chromium_check import ChromiumCheck
from zerocode.engine.runtime_check import NotChecked
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

    async def twice() -> list[list[str] | NotChecked | None]:
        return [await check.check_url("http://app1.localhost:9/", vue=False) for _ in range(2)]

    assert asyncio.run(twice()) == [None, None]
    assert time.monotonic() - started < 5
    assert len(opened) == 2 and len(dropped) >= 2  # each time dropped, tried anew next time


class Clock:
    """``time`` for browser_pool: a monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class FakeBox:
    def __init__(self) -> None:
        self.killed = False

    def kill(self) -> None:
        self.killed = True


class FakeContext:
    async def new_page(self) -> object:
        return object()

    async def close(self) -> None:
        pass


class FakeBrowser:
    def is_connected(self) -> bool:
        return True

    def on(self, event: str, handler: Any) -> None:
        pass

    async def new_context(self) -> FakeContext:
        return FakeContext()


class FakeConfinement:
    def aim(
        self, url: str, seen: list[str] | None = None, files: object = None, scratch: object = None
    ) -> None:
        pass

    def finish(self) -> None:
        pass


class FakeDriver:
    """Playwright's ``async_playwright()``: its start gives a driver whose stop does nothing."""

    async def start(self) -> FakeDriver:
        return self

    async def stop(self) -> None:
        pass


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> tuple[Clock, list[FakeBox]]:
    """browser_pool on a driven clock, launching fake browsers (their boxes listed)."""
    pytest.importorskip("playwright")
    clock, boxes = Clock(), []

    async def launch(pw: object, executable: str) -> tuple[FakeBrowser, FakeBox]:
        boxes.append(FakeBox())
        return FakeBrowser(), boxes[-1]

    async def context(browser: FakeBrowser) -> tuple[FakeContext, FakeConfinement]:
        return await browser.new_context(), FakeConfinement()

    monkeypatch.setattr("playwright.async_api.async_playwright", FakeDriver)
    monkeypatch.setattr(browser_pool, "launch_boxed", launch)
    monkeypatch.setattr(browser_pool, "confined_context", context)
    monkeypatch.setattr(browser_pool, "time", clock)
    return clock, boxes


def test_a_browser_retires_after_max_seconds_once_no_check_uses_it(
    fakes: tuple[Clock, list[FakeBox]],
) -> None:
    """Past MAX_SECONDS the next check starts a new browser, the old one's box killed; a
    check that starts while another still uses the old browser is served by it (the old one
    retires at the first check that finds it unused)."""
    clock, boxes = fakes
    pool = BrowserPool("/fake/chromium")

    async def check() -> None:
        async with pool.page("http://app1.localhost:9/"):
            await asyncio.sleep(0)

    async def run() -> list[int]:
        launches = []
        await check()
        launches.append(pool.launches())
        clock.now += browser_pool.MAX_SECONDS - 1  # still young: kept
        async with pool.page("http://app1.localhost:9/"):
            launches.append(pool.launches())
            clock.now += 2  # old now, but this check is using it
            await check()  # so it serves the next one too
            launches.append(pool.launches())
        await check()  # unused: retired, a new browser serves this check
        launches.append(pool.launches())
        clock.now += browser_pool.MAX_SECONDS / 2
        await check()
        launches.append(pool.launches())
        await pool.close()
        return launches

    assert asyncio.run(run()) == [1, 1, 1, 2, 2]
    assert [box.killed for box in boxes] == [True, True]  # the retired one, then at close


def test_a_browser_retires_after_max_checks(
    fakes: tuple[Clock, list[FakeBox]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(browser_pool, "MAX_CHECKS", 3)
    _, boxes = fakes
    pool = BrowserPool("/fake/chromium")

    async def run() -> list[int]:
        launches = []
        for _ in range(7):
            async with pool.page("http://app1.localhost:9/"):
                launches.append(pool.launches())
        await pool.close()
        return launches

    assert asyncio.run(run()) == [1, 1, 1, 2, 2, 2, 3]
    assert all(box.killed for box in boxes) and len(boxes) == 3
