"""The runtime check's page passed on to a check of the same build's suite (issue 40,
point 3; docs/engine.md, "When the suite runs").

A build's runtime check and its suite run at once in the kept browser, within the user's
share of its contexts (:mod:`.browser_shares`). A suite of as many checks as that share has
one check that would wait for a context while the runtime check holds one, then load the
page again: on two cores, a fourth Vue page load after three at once was most of a round's
time past 0.5 s (docs/benchmarks.md, "Preview in a second"). That check takes the runtime
check's page instead, once it has passed (loaded as any check's page is, settled, no problem
found), with its context and the user's slot: the user never holds more than the share,
and the page is one load fewer. A page with a problem is never passed on (the suite is
dropped then anyway: engine/page_checks.py), nor one that could not be checked: the check
then opens a page of its own, as any other does.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from zerocode.adapters.local.browser_pool import BrowserPool, Handed

if TYPE_CHECKING:
    from playwright.async_api import Page


class Following:
    """One runtime check's page, which a check of its suite may want (see the module)."""

    def __init__(self) -> None:
        self.wanted = False
        self.taken = False
        self.page: asyncio.Future[Handed | None] = asyncio.get_running_loop().create_future()

    def pass_on(self, browsers: BrowserPool, page: Page) -> None:
        """The runtime check's page, passed: inside :meth:`BrowserPool.page`, when wanted."""
        if self.wanted and not self.page.done():
            self.page.set_result(browsers.pass_on(page))  # None: held too long to pass on

    def end(self) -> None:
        """The runtime check is over: nothing will be passed on after this."""
        if not self.page.done():
            self.page.set_result(None)

    async def take(self, browsers: BrowserPool) -> Handed | None:
        """The page passed on once the runtime check is over, or None; given back if the
        waiting check is stopped meanwhile."""
        try:
            handed = await asyncio.shield(self.page)
        except asyncio.CancelledError:
            self.drop(browsers)
            raise
        self.taken = True
        return handed

    def drop(self, browsers: BrowserPool) -> None:
        """Not wanted any more: a page passed on and not taken is given back."""
        if not self.page.done():
            self.page.cancel()
        elif not self.page.cancelled() and not self.taken:
            handed = self.page.result()
            self.taken = True
            if handed is not None:
                browsers.release(handed)
