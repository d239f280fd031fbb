"""One kept Chromium for every browser check (issue 28): a fresh confined context per check.

Starting Playwright's driver and a boxed Chromium took ~1 s of every runtime check, and a new
context and page ~0.7 s more. So per event loop (Playwright's objects belong to the loop that
made them) one driver and one Chromium in its box (:mod:`.browser_box`) are started on first
need and then kept; every check (runtime, acceptance, covers) gets a context of its own
(contexts share no cookies, storage, cache or service workers), opened ahead of need after
each use and aimed at that one app's origin only when the check takes it
(:class:`.chromium.Confinement`: until then it fetches nothing), then closed. A context serves
one check of one app and is never used again.

Replaced, never trusted again: a browser that went away (a crash) is started anew on the next
need; one that gives no context within :data:`OPEN_SECONDS`, whose context does not close
within :data:`CLOSE_SECONDS`, or whose check ran past its bound (:meth:`BrowserPool.replace`),
has its box killed (every process in it) first. At
most :data:`PAGES` contexts are open per loop. When the loop ends (``asyncio.run``,
``asyncio.Runner``: the server's stop) its browser's box is killed and the driver stopped; if
the process dies instead, the driver sees its pipe close and ends the browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zerocode.adapters.local.browser_box import BoxProcess
from zerocode.adapters.local.chromium import Confinement, confined_context, launch_boxed

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

log = logging.getLogger(__name__)

PAGES = 4  # contexts open at once per event loop (the runtime check's slots are within)
CLOSE_SECONDS = 5.0  # a context that does not close within this: the browser is replaced
STOP_SECONDS = 5.0  # Playwright's driver, stopped
OPEN_SECONDS = 30.0  # a context for a check (the browser started first, if need be)
# A browser serves at most this many checks, or this long, then the next check starts a new
# one (once none is in use): what a page that took over the shared browser process could see
# of other apps' checks is bounded (docs/security.md).
MAX_CHECKS = 50
MAX_SECONDS = 600.0


class BrowserDidNotStart(RuntimeError):
    """The driver or Chromium could not be started (the browser's trouble, not the page's)."""


@dataclass(frozen=True)
class Lease:
    browser: Browser
    context: BrowserContext
    page: Page
    confinement: Confinement


class _Kept:
    """One loop's driver and browser, and the context opened ahead for the next check."""

    def __init__(self, executable: str, loop: asyncio.AbstractEventLoop) -> None:
        self.executable, self.loop = executable, loop
        self.pw: Playwright | None = None
        self.browser: Browser | None = None
        self.box: BoxProcess | None = None
        self.driver: asyncio.subprocess.Process | None = None
        self.starting = asyncio.Lock()
        self.pages = asyncio.Semaphore(PAGES)
        self.spare: asyncio.Task[Lease] | None = None
        self.tasks: set[asyncio.Task[object]] = set()  # contexts closing, kept referenced
        self.launches = 0
        self.served = 0  # checks given a context of the current browser
        self.born = 0.0  # when the current browser started (monotonic)
        self.out = 0  # contexts in use now

    async def current(self) -> Browser:
        """The kept browser, started (again) if there is none or it went away."""
        if self.alive():
            assert self.browser is not None
            return self.browser
        async with self.starting:
            if self.alive():
                assert self.browser is not None
                return self.browser
            await self.drop()
            from playwright.async_api import async_playwright

            driver = async_playwright()
            try:
                pw = await driver.start()
            except Exception as exc:
                raise BrowserDidNotStart(_first_line(exc)) from exc
            try:
                browser, box = await launch_boxed(pw, self.executable)
            except Exception as exc:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(pw.stop(), STOP_SECONDS)
                raise BrowserDidNotStart(_first_line(exc)) from exc
            self.pw, self.browser, self.box = pw, browser, box
            self.driver = _driver_process(driver)
            self.launches += 1
            self.served, self.born = 0, time.monotonic()
            browser.on("disconnected", lambda gone: self._lost(gone))
            return browser

    def alive(self) -> bool:
        """Whether the kept browser and its driver are both still there."""
        driver_gone = self.driver is not None and self.driver.returncode is not None
        return self.browser is not None and self.browser.is_connected() and not driver_gone

    def _lost(self, browser: Browser) -> None:
        if browser is self.browser:
            log.warning("the kept browser went away: a new one starts on the next need")
            self._spawn(self.drop())

    async def open(self) -> Lease:
        """A fresh confined context (not yet aimed at any app) and its page."""
        browser = await self.current()
        context, confinement = await confined_context(browser)
        try:
            page = await context.new_page()
        except BaseException:
            with contextlib.suppress(Exception):
                await context.close()
            raise
        return Lease(browser, context, page, confinement)

    def retired(self) -> bool:
        """Whether the browser has served its share (MAX_CHECKS, MAX_SECONDS)."""
        old = time.monotonic() - self.born > MAX_SECONDS
        return self.browser is not None and (self.served >= MAX_CHECKS or old)

    async def take(self) -> Lease:
        """The context opened ahead if it is still good, else a new one; a retired browser
        is replaced first when no check is using it (else it serves this one too)."""
        if self.retired() and self.out == 0:
            log.info("the kept browser served %d checks: a new one starts", self.served)
            await self.drop()
        spare, self.spare = self.spare, None
        if spare is not None and not spare.cancelled():
            with contextlib.suppress(Exception):
                lease = await spare
                if lease.browser is self.browser and self.alive():
                    return lease
                self._spawn(_close(lease.context))
        return await self.open()

    def ahead(self) -> None:
        """Open the next check's context now, while nothing waits for it."""
        if self.spare is None and self.browser is not None:
            self.spare = self.loop.create_task(self.open())
            self.spare.add_done_callback(_retrieve)

    def give_back(self, lease: Lease) -> None:
        """Close a used context (never reused), in the background; a context that does not
        close in time means a stuck browser: it is replaced."""

        async def close() -> None:
            if not await _close(lease.context) and lease.browser is self.browser:
                log.warning("a browser context did not close: the kept browser is replaced")
                await self.drop()

        self._spawn(close())
        self.ahead()

    def _spawn(self, work: Coroutine[Any, Any, object]) -> None:
        task = self.loop.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def drop(self) -> None:
        """Kill the browser's box (everything in it) and stop the driver: nothing is reused."""
        pw, box, spare, driver = self.pw, self.box, self.spare, self.driver
        self.pw = self.browser = self.box = self.spare = self.driver = None
        if spare is not None:
            spare.cancel()
        if box is not None:
            box.kill()
        if pw is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(pw.stop(), STOP_SECONDS)
        if driver is not None:  # Playwright's reader may be cancelled (the loop's end): then
            if driver.stdin is not None:  # stop() leaves the pipe open, and the driver with it
                driver.stdin.close()
            try:
                await asyncio.wait_for(driver.wait(), STOP_SECONDS)
            except Exception:
                with contextlib.suppress(ProcessLookupError):
                    driver.kill()


async def _close(context: BrowserContext) -> bool:
    try:
        await asyncio.wait_for(context.close(), CLOSE_SECONDS)
    except Exception:
        return False
    return True


def _driver_process(driver: object) -> asyncio.subprocess.Process | None:
    """Playwright's driver process, to wait for its end when the loop ends (Playwright's
    reader, which would, is cancelled then with every other task). Not a public attribute:
    None if it moved, and the driver still ends when its pipe closes. A driver that dies
    leaves an error in a future nobody reads: it is read here, not logged as never read."""
    transport = getattr(getattr(driver, "_client", None), "_transport", None)
    failed = getattr(transport, "on_error_future", None)
    if isinstance(failed, asyncio.Future):
        failed.add_done_callback(lambda done: done.cancelled() or done.exception())
    found = getattr(transport, "_proc", None)
    return found if isinstance(found, asyncio.subprocess.Process) else None


def _retrieve(task: asyncio.Task[Lease]) -> None:
    if not task.cancelled():
        task.exception()  # a spare that failed is opened anew when needed; never logged


class BrowserPool:
    """The kept browser of one Chromium executable, one per event loop (see the module)."""

    def __init__(self, executable: str) -> None:
        self.executable = executable
        self._loops: dict[asyncio.AbstractEventLoop, _Kept] = {}

    def _here(self) -> _Kept:
        loop = asyncio.get_running_loop()
        kept = self._loops.get(loop)
        if kept is None:
            kept = self._loops[loop] = _Kept(self.executable, loop)
            kept.tasks.add(loop.create_task(self._keep(loop, kept)))
        return kept

    async def _keep(self, loop: asyncio.AbstractEventLoop, kept: _Kept) -> None:
        """Waits for the loop's end (its remaining tasks are cancelled), then ends its browser."""
        try:
            await asyncio.Event().wait()
        finally:
            if self._loops.get(loop) is kept:
                del self._loops[loop]
            await kept.drop()

    @contextlib.asynccontextmanager
    async def page(self, url: str, seen: list[str] | None = None) -> AsyncIterator[Page]:
        """A page in a fresh context of the kept browser, confined to ``url``'s origin (what
        it aborts is appended to ``seen``), closed afterwards; BrowserDidNotStart when there
        is no browser."""
        kept = self._here()
        async with kept.pages:
            try:
                lease = await asyncio.wait_for(kept.take(), OPEN_SECONDS)
            except TimeoutError:  # a browser that hangs: never waited for again
                await kept.drop()
                raise BrowserDidNotStart(f"no browser context within {OPEN_SECONDS:g} s") from None
            lease.confinement.aim(url, seen)
            kept.out += 1
            kept.served += 1
            try:
                yield lease.page
            finally:
                kept.out -= 1
                kept.give_back(lease)

    async def warm(self) -> None:
        """Start this loop's browser and open a context ahead, if not done yet."""
        kept = self._here()
        await kept.current()
        kept.ahead()

    async def replace(self) -> None:
        """Kill this loop's browser (a check ran past its bound): the next need starts one."""
        kept = self._loops.get(asyncio.get_running_loop())
        if kept is not None:
            await kept.drop()

    async def close(self) -> None:
        """End this loop's browser and driver now."""
        kept = self._loops.pop(asyncio.get_running_loop(), None)
        if kept is not None:
            await kept.drop()

    def launches(self) -> int:
        """How many browsers this loop has started (tests: one for many checks)."""
        kept = self._loops.get(asyncio.get_running_loop())
        return kept.launches if kept is not None else 0


_POOLS: dict[str, BrowserPool] = {}


def kept_browser(executable: str) -> BrowserPool:
    """The process's kept browser for ``executable``: covers, runtime and acceptance checks
    share it."""
    return _POOLS.setdefault(executable, BrowserPool(executable))


def _first_line(value: object) -> str:
    text = str(value).strip()
    return text.splitlines()[0] if text else type(value).__name__
