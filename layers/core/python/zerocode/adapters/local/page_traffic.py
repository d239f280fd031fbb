"""A page's requests in flight, so a check knows when the page has settled (the runtime
check's and the covers' wait after load: :mod:`.chromium_check`, :mod:`.chromium_covers`)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.async_api import Page


class Traffic:
    """The page's requests in flight (its own origin's and those the confinement aborts): the
    page has settled once none has been for a while."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.loop = asyncio.get_running_loop()
        self.changes = 0  # requests started or ended so far
        self.flying: set[object] = set()
        self.changed = asyncio.Event()
        page.on("request", self._started)
        page.on("requestfinished", self._ended)
        page.on("requestfailed", self._ended)

    def _started(self, request: object) -> None:
        self.flying.add(request)
        self._change()

    def _ended(self, request: object) -> None:
        self.flying.discard(request)
        self._change()

    def _change(self) -> None:
        self.changes += 1
        self.changed.set()

    async def settled(self, quiet_ms: float, bound_ms: float) -> None:
        """Until no request has been in flight for ``quiet_ms`` of the page's own clock
        (counted from now at the earliest), at most ``bound_ms``.

        Why the page's clock: a timer the page set before load (a router fetching its first
        view's chunk 30 ms in) fires before a timer of ``quiet_ms`` set after load, however
        late a loaded machine runs either; counted on this loop's clock, the renderer's
        lateness looked like quiet and the request went unseen."""
        deadline = self.loop.time() + bound_ms / 1000
        while (now := self.loop.time()) < deadline:
            if not self.flying:
                if await self._quiet_in_page(quiet_ms, deadline - now):
                    return
                continue
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), deadline - now)

    async def _quiet_in_page(self, quiet_ms: float, seconds: float) -> bool:
        """Whether ``quiet_ms`` of the page's clock passed with no request starting or
        ending. A page that does not run the timer (busy, or gone) is left to the bound and
        to the steps after, which say so."""
        from playwright.async_api import Error as PlaywrightError

        mark = self.changes
        try:
            await asyncio.wait_for(self.page.evaluate(_PAGE_QUIET, quiet_ms), max(seconds, 0.001))
        except (TimeoutError, PlaywrightError):
            return True  # the bound is spent, or the page is gone: nothing more to wait for
        return not self.flying and self.changes == mark


# A timer on the page's clock, set after load: it fires after every timer the page set
# before it that is due sooner.
_PAGE_QUIET = "(ms) => new Promise((done) => setTimeout(done, ms))"
