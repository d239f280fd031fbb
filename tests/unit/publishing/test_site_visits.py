"""The sites server's side of visit counting (publishing/site_visits.py): a page view is only
noted on the event loop and counted later in a worker thread, in batches; a read waits for
the views noted before it and no others; a full queue and a failing store drop views, never
raise; without a way to resolve sites the object only reads."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

from tests.unit.publishing.test_visits import CHROME, NOON, MemoryStore
from zerocode.publishing.site_visits import SiteVisits
from zerocode.publishing.visits import DayVisits, Tally

APPS = {"sitekey01": "app-1"}


class Slow(MemoryStore):
    """A store whose writes wait for the test to let them through, on the worker thread."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.batches: list[int] = []

    def add(self, tallies: Sequence[Tally], now: float) -> None:
        self.gate.wait(timeout=30)
        self.batches.append(sum(t.views for t in tallies))
        super().add(tallies, now)


def test_views_are_noted_at_once_and_counted_in_batches_off_the_loop() -> None:
    store = Slow()
    visits = SiteVisits(store, APPS.get, now=lambda: NOON)

    async def run() -> list[DayVisits]:
        visits.saw("sitekey01", "192.0.2.1", CHROME)  # returns at once: the store waits
        await asyncio.sleep(0)
        for _ in range(4):
            visits.saw("sitekey01", "192.0.2.2", CHROME)
        store.gate.set()
        found = await visits.report("app-1", 1)
        return found.days

    assert asyncio.run(run()) == [DayVisits("2026-03-01", 5, 2, 0)]
    assert store.batches == [1, 4]  # the first view alone, then what came meanwhile


def test_a_read_waits_for_the_views_before_it_and_none_after() -> None:
    store = Slow()
    visits = SiteVisits(store, APPS.get, now=lambda: NOON)

    async def run() -> tuple[int, int]:
        visits.saw("sitekey01", "192.0.2.1", CHROME)
        read = asyncio.ensure_future(visits.settled())
        await asyncio.sleep(0)
        visits.saw("sitekey01", "192.0.2.3", CHROME)  # after the read began
        store.gate.set()
        await read
        first = sum(store.batches)
        await visits.settled()
        return first, sum(store.batches)

    first, then = asyncio.run(run())
    assert first >= 1 and then == 2


class Failing(MemoryStore):
    def add(self, tallies: Sequence[Tally], now: float) -> None:
        raise OSError("database is locked")


def test_a_failing_store_or_a_full_queue_drops_views_and_never_raises() -> None:
    visits = SiteVisits(Failing(), APPS.get, now=lambda: NOON)

    async def fail() -> None:
        for _ in range(3):
            visits.saw("sitekey01", "192.0.2.1", CHROME)
        await visits.settled()

    asyncio.run(fail())
    assert visits.dropped == 3
    full = SiteVisits(Slow(), APPS.get, max_pending=2, now=lambda: NOON)

    async def flood() -> None:
        full.saw("sitekey01", "192.0.2.1", CHROME)
        await asyncio.sleep(0)  # taken by the batch, which the store holds
        for _ in range(4):  # two wait for the next batch; two find the queue full
            full.saw("sitekey01", "192.0.2.1", CHROME)
        assert full.dropped == 2
        assert isinstance(full.store, Slow)
        full.store.gate.set()
        await full.settled()

    asyncio.run(flood())


def test_without_a_resolver_it_only_reads() -> None:
    store = MemoryStore()
    store.add([Tally("app-1", "2026-03-01", 2, 1, frozenset({"v"}))], NOON)
    visits = SiteVisits(store, now=lambda: NOON)

    async def run() -> DayVisits:
        visits.saw("sitekey01", "192.0.2.1", CHROME)  # nothing to count it with: ignored
        return (await visits.report("app-1", 30)).total

    assert asyncio.run(run()) == DayVisits("", 2, 1, 1)
    visits.delete_app("app-1")
    assert store.days("app-1", "2026-01-01", "2026-12-31") == []
