"""The checks of one suite run together (issue 40, point 3), in real Chromium in its box:
they overlap, each verdict is told as its check ends (before a slower one of the same suite
ends), the app's files are fetched once for the suite, and a suite never holds more contexts
than its user's share while another tenant's check runs beside it.

Overlap and order are proven by gates, never by timings: a check that waits for another to
start (or to be told) could only pass if both were under way at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest

from tests.integration.adapters.test_browser_confinement import boxed_or_skip
from tests.integration.adapters.test_browser_shares import Arrivals, Sites, _built, app, checks
from tests.integration.adapters.test_chromium_check import Site
from zerocode.adapters.local import chromium_acceptance
from zerocode.adapters.local.browser_pool import BrowserPool
from zerocode.adapters.local.chromium_acceptance import ChromiumAcceptance
from zerocode.engine.check_suite import CheckResult, RunOutcome, StoredCheck

FINE = '<body><h1>Fine</h1><script src="/app.js"></script></body>'
GATE_SECONDS = 60.0  # a gate that never opens fails its check (it is not a timing)


@pytest.fixture
def sites() -> Iterator[dict[str, Site]]:
    made = {
        name: Site({"/": FINE, "/app.js": "1;"}, requests=Arrivals(), host=f"{name}.localhost")
        for name in ("a", "b")
    }
    for site in made.values():
        site.start()
    yield made
    for site in made.values():
        site.stop()


def statuses(outcome: RunOutcome) -> list[str]:
    return [r.status for r in outcome.results]


class Gated:
    """``check_in_page`` recorded: who started and ended in which order, and a gate before
    (or after) each check that opens when the test says."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.order: list[str] = []
        self.before: dict[str, asyncio.Event] = {}
        self.after: dict[str, asyncio.Event] = {}
        self.started = 0
        self.all_started: asyncio.Event | None = None
        self.expected = 0
        self.held: list[int] = []  # contexts the user held as each check started
        self.count: Callable[[], int] | None = None
        real = chromium_acceptance.check_in_page

        async def recorded(page: Any, url: str, check: Any, **bounds: Any) -> Any:
            name = check.description
            self.order.append(f"start {name}")
            if self.count is not None:
                self.held.append(self.count())
            self.started += 1
            if self.all_started is not None and self.started >= self.expected:
                self.all_started.set()
            if name in self.before:
                await asyncio.wait_for(self.before[name].wait(), GATE_SECONDS)
            outcome = await real(page, url, check, **bounds)
            if name in self.after:
                await asyncio.wait_for(self.after[name].wait(), GATE_SECONDS)
            self.order.append(f"end {name}")
            return outcome

        monkeypatch.setattr(chromium_acceptance, "check_in_page", recorded)


def named(n: int) -> list[StoredCheck]:
    """``n`` passing checks, each described by its id (the gates name them)."""
    return [replace(c, check=replace(c.check, description=c.id)) for c in checks(n)]


def test_the_checks_of_a_suite_overlap(
    sites: dict[str, Site], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three checks, each held until all three have started: they pass only if they run at
    once; the app's page and script are fetched once for the suite, not once per check."""
    executable = boxed_or_skip()
    pool = BrowserPool(executable, pages=4)
    runner = ChromiumAcceptance(Sites(executable, pool, sites))
    gated = Gated(monkeypatch)

    async def run() -> RunOutcome:
        try:
            gated.all_started, gated.expected = asyncio.Event(), 3
            for name in ("c1", "c2", "c3"):
                gated.before[name] = gated.all_started
            return await runner.run(app("userA", "a"), None, named(3))
        finally:
            await pool.close()

    outcome = asyncio.run(run())
    assert statuses(outcome) == ["passed"] * 3 and outcome.why_not_run is None
    starts = [i for i, said in enumerate(gated.order) if said.startswith("start")]
    ends = [i for i, said in enumerate(gated.order) if said.startswith("end")]
    assert max(starts) < min(ends), gated.order  # all three under way at once
    assert sorted(sites["a"].requests) == ["/", "/app.js"]  # read once, then from memory


def test_a_verdict_is_told_before_a_slower_check_of_the_suite_ends(
    sites: dict[str, Site], monkeypatch: pytest.MonkeyPatch
) -> None:
    """c2 ends only once c1's verdict was told (``on_result``): the suite passes only if each
    verdict is told as its check ends, not when the suite ends; the outcome keeps the
    checks' order."""
    executable = boxed_or_skip()
    pool = BrowserPool(executable, pages=4)
    runner = ChromiumAcceptance(Sites(executable, pool, sites))
    gated = Gated(monkeypatch)
    told: list[str] = []

    async def run() -> RunOutcome:
        first = asyncio.Event()

        def on_result(result: CheckResult) -> None:
            told.append(result.check_id)
            if result.check_id == "c1":
                first.set()

        gated.after["c2"] = first
        try:
            return await runner.run(app("userA", "a"), None, named(2), on_result=on_result)
        finally:
            await pool.close()

    outcome = asyncio.run(run())
    assert statuses(outcome) == ["passed", "passed"]
    assert [r.check_id for r in outcome.results] == ["c1", "c2"]
    assert told == ["c1", "c2"]
    assert gated.order.index("end c1") < gated.order.index("end c2")


def test_a_suite_holds_no_more_than_its_share_while_another_tenant_checks(
    sites: dict[str, Site], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four contexts, a user's share three: user A's suite of six checks takes three at once
    (each held until user B's runtime check is done), never a fourth; B's check gets the
    context left and is done while A's suite waits on it; the rest of A's suite runs after."""
    executable = boxed_or_skip()
    pool = BrowserPool(executable, pages=4)
    check = Sites(executable, pool, sites)
    runner = ChromiumAcceptance(check)
    gated = Gated(monkeypatch)
    gated.count = lambda: pool._here().queue.shares.by_user["userA"]

    async def run() -> tuple[RunOutcome, Any]:
        b_done = asyncio.Event()
        gated.all_started, gated.expected = asyncio.Event(), pool.share
        for i in range(6):
            gated.before[f"c{i + 1}"] = b_done
        try:
            suite = asyncio.create_task(runner.run(app("userA", "a"), None, named(6)))
            await asyncio.wait_for(gated.all_started.wait(), GATE_SECONDS)
            found = await check.check(app("userB", "b"), _built())
            b_done.set()
            return await suite, found
        finally:
            await pool.close()

    outcome, found = asyncio.run(run())
    assert found == []  # B's check ran (and found nothing wrong) beside A's held suite
    assert statuses(outcome) == ["passed"] * 6
    assert max(gated.held) == pool.share == 3, gated.held  # as many as the share, never more
    assert gated.order.index(f"start c{pool.share + 1}") > 0  # the rest ran as contexts freed
