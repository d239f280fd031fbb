"""The visits of the sites a server serves (issue 44, point 4; ``publishing/visits.py``): a
page view is noted on the event loop in no time (:meth:`SiteVisits.saw`: appended to a list)
and counted in a worker thread, in batches, by the :class:`VisitCounter`; the owner's reads
(:meth:`SiteVisits.report`) wait for what is noted to be counted, so they say every view
served before them.

A store that fails never fails or slows a page: the batch is logged and dropped; so are views
past :data:`MAX_PENDING` while a slow store holds a batch (counting is best effort, serving is
not). On AWS no server serves the sites: the same counter runs over CloudFront's logs
(``entrypoints/visit_logs.py``) and this object only reads.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from zerocode.errors import InvalidInput
from zerocode.publishing.pointers import SiteTarget, site_pointer
from zerocode.publishing.visits import (
    Seen,
    VisitCounter,
    VisitReport,
    VisitStore,
    day_of,
    day_range,
    report,
)

log = logging.getLogger(__name__)

MAX_PENDING = 10_000  # views waiting for a batch; past it they are dropped (and logged)


def site_app(target_of: Callable[[str], SiteTarget | None]) -> Callable[[str], str | None]:
    """A deployKey to the app whose site it is (the build its pointer names, by
    ``target_of``: a publisher's ``target``), None for none."""

    def app_of(site: str) -> str | None:
        try:
            target = target_of(site_pointer(site))
        except InvalidInput:  # no key a site can have
            return None
        return target.app_id if target is not None else None

    return app_of


class SiteVisits:
    """Visits counted and read: ``app_of`` (a deployKey to its app) where a server here
    serves the sites; without it, reads only."""

    def __init__(
        self,
        store: VisitStore,
        app_of: Callable[[str], str | None] | None = None,
        *,
        max_pending: int = MAX_PENDING,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.now, self.max_pending = store, now, max_pending
        self.counter = VisitCounter(store, app_of, now) if app_of is not None else None
        self._pending: list[Seen] = []
        self._flushing: asyncio.Task[None] | None = None
        self._waiters: list[asyncio.Future[None]] = []
        self._noted = self._done = 0  # views noted so far, and those counted (or dropped)
        self.dropped = 0  # views never counted: a full queue or a failing store

    def saw(self, site: str, address: str, agent: str) -> None:
        """A page view of the site ``site`` (a deployKey), now; on the event loop, at once."""
        if self.counter is None:
            return
        if len(self._pending) >= self.max_pending:
            self.dropped += 1
            if self.dropped % 1000 == 1:
                log.warning("visits: %d page views dropped (the store is behind)", self.dropped)
            return
        self._pending.append(Seen(site, address, agent, self.now()))
        self._noted += 1
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.get_running_loop().create_task(self._flush())
            self._flushing.add_done_callback(lambda _: self._wake())

    async def _flush(self) -> None:
        """Count what is noted, batch after batch, each in a worker thread."""
        counter = self.counter
        assert counter is not None
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                await asyncio.to_thread(counter.count, batch)
            except Exception as exc:  # the pages were served; their count is lost
                self.dropped += len(batch)
                log.warning("visits: %d page views not counted: %r", len(batch), exc)
            self._done += len(batch)
            self._wake()

    def _wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
        self._waiters.clear()

    async def settled(self) -> None:
        """Every view noted before this call is counted (or dropped); views noted while it
        waits are not waited for, so a busy site never holds a read. The API and the sites
        server share one event loop in ``zerocode serve``; views counted on another loop
        are not waited for."""
        target, loop = self._noted, asyncio.get_running_loop()
        while self._done < target:
            task = self._flushing
            if task is None or task.done() or task.get_loop() is not loop:
                return
            waiter: asyncio.Future[None] = loop.create_future()
            self._waiters.append(waiter)
            await waiter

    async def report(self, app_id: str, days: int) -> VisitReport:
        """The app's last ``days`` UTC days, today included, each one there."""
        await self.settled()
        first, last = day_range(days, day_of(self.now()))
        found = await asyncio.to_thread(self.store.days, app_id, first, last)
        return report(found, first, last)

    def delete_app(self, app_id: str) -> None:
        """The app's visits (M8: a deleted app's data goes with it)."""
        self.store.delete_app(app_id)
