"""One kept Chromium for every browser check (issue 28): a fresh confined context per check.

Starting Playwright's driver and a boxed Chromium took ~1 s of every runtime check, and a new
context and page ~0.7 s more. So per event loop (Playwright's objects belong to the loop that
made them) one driver and one Chromium in its box (:mod:`.browser_box`) are started on first
need and then kept; every check (runtime, acceptance, covers) gets a context of its own
(contexts share no cookies, storage, cache or service workers), opened ahead of need after
each use (as many as a build's checks take at once: its runtime check, then its suite of a
user's share) and aimed at that one app's origin only when the check takes it
(:class:`.chromium.Confinement`: until then it fetches nothing), then closed. A context
serves one check of one app and is never used again.

A page hurts only its own check (issue 37): its check bounds every step that runs page code,
and a page that does not answer has its context closed, which ends its renderer too (Chromium
disposes a context from the browser process, whatever the renderer's main thread is doing:
tests/integration/adapters/test_browser_pool.py). The browser is replaced only when it is
broken: it went away (a crash), gives no context within :data:`OPEN_SECONDS`, or a context
that did not close within :data:`CLOSE_SECONDS` is followed by a fresh context that fails a
trivial probe. A broken browser still serving other checks is killed only once they are done
(new checks wait for that, then get a new browser); a check whose browser went away under it
is the platform's failure, never the page's (:func:`went_away`: its caller re-runs it).

At most :data:`PAGES` contexts are open per loop, shared fairly between users and apps
(:mod:`.browser_shares`): a wait for one is bounded by :data:`WAIT_SECONDS`. When the loop ends
(``asyncio.run``, ``asyncio.Runner``: the server's stop) its browser's box is killed and the
driver stopped; if the process dies instead, the driver sees its pipe close and ends the
browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zerocode.adapters.local.browser_box import BoxProcess
from zerocode.adapters.local.browser_shares import PLATFORM, FairQueue, Tenant, Ticket
from zerocode.adapters.local.chromium import Confinement, Scratch, confined_context, launch_boxed
from zerocode.adapters.local.served_files import ServedFiles

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Page, Playwright

log = logging.getLogger(__name__)

# Contexts open at once per event loop: two per core (a page that spins takes a core of its
# own until its check's bound; 4 on the 2-core machine this was sized on), 2 to 8. A context
# renderer is tens of MB and the machine has GBs: the CPU bounds them (docs/security.md).
PAGES = max(2, min(8, 2 * (os.cpu_count() or 1)))
USER_MOST = PAGES - 1  # contexts one user holds at once: one is always left for another
# The longest one check holds a context (runtime: PAGE_SECONDS; acceptance: CHECK_SECONDS
# and its evidence), the context's close included: what the fair queue's bound rests on.
HOLD_SECONDS = 40.0
# A page held longer than this is not passed on (:meth:`BrowserPool.pass_on`): the next
# check's own bound (CHECK_SECONDS and its evidence) must still fit in HOLD_SECONDS.
PASS_SECONDS = 5.0
WAIT_SECONDS = 90.0  # a wait for a context; past it the check is "not checked: busy"
CLOSE_SECONDS = 5.0  # a context that does not close within this: the browser is probed
PROBE_SECONDS = 5.0  # a fresh context and a trivial script in it: or the browser is broken
STOP_SECONDS = 5.0  # Playwright's driver, stopped
OPEN_SECONDS = 30.0  # a context for a check (the browser started first, if need be)
# A browser serves at most this many checks, or this long, then the next check starts a new
# one (once none is in use): what a page that took over the shared browser process could see
# of other apps' checks is bounded (docs/security.md).
MAX_CHECKS = 50
MAX_SECONDS = 600.0


def user_share(pages: int) -> int:
    """Contexts one user may hold at once of ``pages``: one is always left for another."""
    return max(1, min(USER_MOST, pages - 1))


class BrowserDidNotStart(RuntimeError):
    """The driver or Chromium could not be started (the browser's trouble, not the page's)."""


@dataclass(frozen=True)
class Lease:
    browser: Browser
    context: BrowserContext
    page: Page
    confinement: Confinement


@dataclass(frozen=True)
class Handed:
    """A page one check loaded, passed on with its context and its tenant's slot to the next
    check of the same app and build (:meth:`BrowserPool.pass_on`): held until that check
    gives it back (:meth:`BrowserPool.adopt`, :meth:`BrowserPool.release`)."""

    kept: _Kept
    lease: Lease
    ticket: Ticket
    since: float  # when the check it is passed from took it (monotonic)


class _Kept:
    """One loop's driver and browser, and the context opened ahead for the next check."""

    def __init__(self, executable: str, loop: asyncio.AbstractEventLoop, pages: int) -> None:
        self.executable, self.loop = executable, loop
        self.pw: Playwright | None = None
        self.browser: Browser | None = None
        self.box: BoxProcess | None = None
        self.driver: asyncio.subprocess.Process | None = None
        self.starting = asyncio.Lock()
        self.queue = FairQueue(pages, user_share(pages))
        self.broken: Browser | None = None  # found broken while others used it: killed after
        self.idle = asyncio.Event()  # no context in use
        self.idle.set()
        # Contexts opened ahead, as many as a build's checks take at once: its runtime check
        # and then its suite (the user's share), so the suite finds its own ready too.
        self.spares: list[asyncio.Task[Lease]] = []
        self.most_spares = min(pages, user_share(pages) + 1)
        self.tasks: set[asyncio.Task[object]] = set()  # contexts closing, kept referenced
        self.launches = 0
        self.served = 0  # checks given a context of the current browser
        self.born = 0.0  # when the current browser started (monotonic)
        self.out = 0  # contexts in use now
        self.in_use: dict[int, Handed] = {}  # by id(page): what pass_on may pass

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

    async def mend(self) -> None:
        """A broken browser is killed once the checks still in it are done (each is bounded
        by HOLD_SECONDS), so the next check gets a new one; never under a running check."""
        if self.broken is None or self.broken is not self.browser:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.idle.wait(), HOLD_SECONDS)
        if self.broken is self.browser:
            log.warning("the kept browser is broken: a new one starts")
            await self.drop()

    async def take(self) -> Lease:
        """The context opened ahead if it is still good, else a new one; a retired browser
        is replaced first when no check is using it (else it serves this one too)."""
        if self.retired() and self.out == 0:
            log.info("the kept browser served %d checks: a new one starts", self.served)
            await self.drop()
        while self.spares:  # one opened already if any is, else the oldest
            ready = [t for t in self.spares if t.done()]
            spare = (ready or self.spares)[0]
            self.spares.remove(spare)
            if spare.cancelled():
                continue
            with contextlib.suppress(Exception):
                lease = await spare
                if lease.browser is self.browser and self.alive():
                    return lease
                self._spawn(_close(lease.context))
        return await self.open()

    def ahead(self) -> None:
        """Open the next checks' contexts now (a runtime check's and its suite's), while
        nothing waits for them."""
        while len(self.spares) < self.most_spares and self.browser is not None:
            spare = self.loop.create_task(self.open())
            spare.add_done_callback(_retrieve)
            self.spares.append(spare)

    def done_with(self, lease: Lease) -> None:
        """A check's context is done with: closed in the background, and the browser mended
        once no check is in it."""
        self.in_use.pop(id(lease.page), None)
        self.out -= 1
        self.give_back(lease)
        if self.out == 0:
            self.idle.set()
            if self.broken is not None and self.broken is self.browser:
                self._spawn(self.drop())  # the last check in it is done

    def give_back(self, lease: Lease) -> None:
        """Close a used context (never reused), in the background; a context that does not
        close in time means a stuck browser: it is replaced."""

        async def close() -> None:
            closed = await _close(lease.context)
            try:
                await asyncio.to_thread(lease.confinement.finish)  # its scratch data, if any
            except RuntimeError:  # the loop is closing and its threads are gone: finish here
                lease.confinement.finish()
            if closed or lease.browser is not self.browser:
                return
            if await self.answers(lease.browser):
                log.warning("a browser context did not close; the browser still answers")
                return
            log.warning("a browser context did not close and the browser fails a probe")
            self.broken = lease.browser
            if self.out == 0:
                await self.drop()

        self._spawn(close())
        if self.out == 0:  # opened once no check runs: never competing with one for the CPU
            self.ahead()

    async def answers(self, browser: Browser) -> bool:
        """Whether ``browser`` opens a fresh context and runs a trivial script in it in time."""
        try:
            async with asyncio.timeout(PROBE_SECONDS):
                context = await browser.new_context()
                try:
                    page = await context.new_page()
                    return bool(await page.evaluate("1 + 1") == 2)
                finally:
                    await context.close()
        except Exception:
            return False

    def _spawn(self, work: Coroutine[Any, Any, object]) -> None:
        task = self.loop.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def drop(self) -> None:
        """Kill the browser's box (everything in it) and stop the driver: nothing is reused."""
        pw, box, spares, driver = self.pw, self.box, self.spares, self.driver
        self.pw = self.browser = self.box = self.driver = self.broken = None
        self.spares = []
        for spare in spares:
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

    def __init__(self, executable: str, pages: int = PAGES) -> None:
        self.executable, self.pages = executable, pages
        self._loops: dict[asyncio.AbstractEventLoop, _Kept] = {}

    def _here(self) -> _Kept:
        loop = asyncio.get_running_loop()
        kept = self._loops.get(loop)
        if kept is None:
            kept = self._loops[loop] = _Kept(self.executable, loop, self.pages)
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
    async def page(
        self,
        url: str,
        seen: list[str] | None = None,
        *,
        tenant: Tenant = PLATFORM,
        wait: float | None = None,
        files: ServedFiles | None = None,
        handed: Handed | None = None,
        scratch: Callable[[], Scratch | None] | None = None,
    ) -> AsyncIterator[Page]:
        """A page in a fresh context of the kept browser, confined to ``url``'s origin (what
        it aborts is appended to ``seen``), closed afterwards. It waits its turn behind other
        tenants (:mod:`.browser_shares`) at most ``wait`` seconds (WAIT_SECONDS), then
        BrowserBusy;
        BrowserDidNotStart when there is no browser. The caller holds it at most
        HOLD_SECONDS. ``files``: the app's files read once for a suite (:mod:`.served_files`).
        ``handed``: a page passed on (:meth:`pass_on`), used instead, loaded as it is."""
        if handed is not None:
            async with self.adopt(handed) as page:
                yield page
            return
        kept = self._here()
        async with kept.queue.turn(tenant, WAIT_SECONDS if wait is None else wait) as ticket:
            await kept.mend()
            try:
                lease = await asyncio.wait_for(kept.take(), OPEN_SECONDS)
            except TimeoutError:  # a browser that hangs: broken, killed once no check is in it
                kept.broken = kept.browser
                if kept.out == 0:
                    await kept.drop()
                raise BrowserDidNotStart(f"no browser context within {OPEN_SECONDS:g} s") from None
            lease.confinement.aim(url, seen, files, scratch() if scratch is not None else None)
            kept.out += 1
            kept.idle.clear()
            kept.served += 1
            kept.in_use[id(lease.page)] = Handed(kept, lease, ticket, time.monotonic())
            try:
                yield lease.page
            finally:
                if not ticket.passed:
                    kept.done_with(lease)

    def pass_on(self, page: Page) -> Handed | None:
        """``page`` (yielded by :meth:`page`, still inside it) passed on as it is, loaded,
        with its context and its tenant's slot: leaving :meth:`page` then keeps them, and
        the check it is passed to gives them back. None when it was held longer than
        PASS_SECONDS: a context is held at most HOLD_SECONDS in all (docs/security.md)."""
        kept = self._here()
        handed = kept.in_use.get(id(page))
        if handed is None or time.monotonic() - handed.since > PASS_SECONDS:
            return None
        del kept.in_use[id(page)]
        handed.ticket.passed = True
        return handed

    @contextlib.asynccontextmanager
    async def adopt(self, handed: Handed) -> AsyncIterator[Page]:
        """The page passed on, used by the next check (counted as one more check of its
        browser), then given back as :meth:`page` would."""
        handed.kept.served += 1
        try:
            yield handed.lease.page
        finally:
            self.release(handed)

    def release(self, handed: Handed) -> None:
        """A passed page given back: its context closed, its tenant's slot freed."""
        handed.kept.done_with(handed.lease)
        handed.kept.queue.give_back(handed.ticket)

    async def warm(self) -> None:
        """Start this loop's browser and open a context ahead, if not done yet."""
        kept = self._here()
        await kept.current()
        kept.ahead()

    async def close(self) -> None:
        """End this loop's browser and driver now."""
        kept = self._loops.pop(asyncio.get_running_loop(), None)
        if kept is not None:
            await kept.drop()

    @property
    def share(self) -> int:
        """Contexts one user may hold at once: how many checks of one suite run together."""
        return user_share(self.pages)

    def launches(self) -> int:
        """How many browsers this loop has started (tests: one for many checks)."""
        kept = self._loops.get(asyncio.get_running_loop())
        return kept.launches if kept is not None else 0


_POOLS: dict[str, BrowserPool] = {}


def kept_browser(executable: str) -> BrowserPool:
    """The process's kept browser for ``executable``: covers, runtime and acceptance checks
    share it."""
    return _POOLS.setdefault(executable, BrowserPool(executable))


async def went_away(page: Page) -> bool:
    """Whether ``page``'s context or browser went away under its check: the platform's
    failure (a crash, a broken browser killed), which the check re-runs, never the page's.
    Asked of the browser process (the context's cookies), never of the page's renderer; the
    news of a crash may trail the error it caused, so the browser is asked, not trusted."""
    browser = page.context.browser
    if page.is_closed() or browser is None or not browser.is_connected():
        return True
    try:
        await asyncio.wait_for(page.context.cookies(), PROBE_SECONDS)
    except Exception:
        return True
    return False


def _first_line(value: object) -> str:
    text = str(value).strip()
    return text.splitlines()[0] if text else type(value).__name__
