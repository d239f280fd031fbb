"""The runtime check's page passed on to its suite's last check (issue 40, point 3;
adapters/local/handover.py), in real Chromium in its box, as the engine runs the two: the
suite's task made first, then the runtime check awaited (engine/page_checks.py).

Every page load of the app fetches ``/loaded?<random>`` (never kept in the suite's memory of
files), so the site's requests count the loads: a suite of the user's whole share (3 of 4)
beside a passing runtime check loads the page three times, not four. A runtime check that
finds a problem passes nothing on, nor one that held its page past PASS_SECONDS (a
context is held at most HOLD_SECONDS in all); a suite stopped while its check waits for the
page leaves no context or slot held. The runtime check's own time is left out of these
tests by a PASS_SECONDS far above it (a loaded machine stretches it), except in the test of
that bound.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from tests.integration.adapters.test_browser_confinement import boxed_or_skip
from tests.integration.adapters.test_browser_shares import Arrivals, Sites, _built, app, checks
from tests.integration.adapters.test_checks_together import named
from tests.integration.adapters.test_chromium_check import Site
from zerocode.adapters.local import browser_pool, chromium_acceptance
from zerocode.adapters.local.browser_pool import BrowserPool
from zerocode.adapters.local.chromium_acceptance import ChromiumAcceptance
from zerocode.adapters.local.handover import Following
from zerocode.engine.check_suite import RunOutcome, StoredCheck
from zerocode.engine.runtime_check import NotChecked

COUNTED = "<script>fetch('/loaded?' + Math.random())</script>"
FINE = f"<body><h1>Fine</h1>{COUNTED}</body>"
BROKEN = f"<body><h1>Fine</h1>{COUNTED}<script>console.error('broken')</script></body>"
BUILD = replace(_built(), app_id="a")


def site(page: str) -> Site:
    return Site({"/": page, "/loaded": "ok"}, requests=Arrivals(), host="a.localhost")


@pytest.fixture(autouse=True)
def _any_runtime_check_passes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser_pool, "PASS_SECONDS", 600.0)


@pytest.fixture
def fine() -> Iterator[Site]:
    made = site(FINE)
    made.start()
    yield made
    made.stop()


def loads(site: Site) -> int:
    return sum(1 for path in site.requests if path.startswith("/loaded"))


class Recorded:
    """Each check of the suite: whether it ran on a page loaded already (passed on), and
    how many contexts its user held as it started."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, pool: BrowserPool) -> None:
        self.loaded: dict[str, bool] = {}
        self.held: list[int] = []
        real = chromium_acceptance.check_in_page

        async def recorded(page: Any, url: str, check: Any, **bounds: Any) -> Any:
            self.loaded[check.description] = bool(bounds.get("loaded"))
            self.held.append(pool._here().queue.shares.by_user["userA"])
            return await real(page, url, check, **bounds)

        monkeypatch.setattr(chromium_acceptance, "check_in_page", recorded)


def together(
    pool: BrowserPool, found: Site, checks: int | list[StoredCheck] = 3
) -> tuple[list[str] | NotChecked | None, RunOutcome, dict[str, int]]:
    """The runtime check and the suite, as the engine runs them; then what the browser still
    holds (contexts in use, slots held), once both are done."""
    check = Sites(pool.executable, pool, {"a": found})
    runner = ChromiumAcceptance(check)
    who = app("userA", "a")

    async def run() -> tuple[list[str] | NotChecked | None, RunOutcome, dict[str, int]]:
        try:
            suite_checks = named(checks) if isinstance(checks, int) else checks
            suite = asyncio.ensure_future(runner.run(who, BUILD, suite_checks))
            problems = await check.check(who, BUILD)
            outcome = await suite
            kept = pool._here()
            await asyncio.sleep(0)  # contexts given back close in the background
            return problems, outcome, {"out": kept.out, "held": kept.queue.shares.held}
        finally:
            await pool.close()

    return asyncio.run(run())


def test_a_passing_runtime_check_passes_its_page_to_the_last_check(
    fine: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = BrowserPool(boxed_or_skip(), pages=4)
    recorded = Recorded(monkeypatch, pool)
    problems, outcome, left = together(pool, fine)
    assert problems == []
    assert [r.status for r in outcome.results] == ["passed"] * 3
    assert recorded.loaded == {"c1": False, "c2": False, "c3": True}  # c3 on the check's page
    assert loads(fine) == 3  # the runtime check's, c1's and c2's: not a fourth
    assert max(recorded.held) <= pool.share == 3, recorded.held
    assert left == {"out": 0, "held": 0}


def test_the_page_goes_to_the_check_with_the_fewest_steps(
    fine: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check on the passed page starts last: of c1, c2 (no step) and c3 (a wait), the
    last of the lightest takes it; the verdicts keep the suite's order."""
    pool = BrowserPool(boxed_or_skip(), pages=4)
    recorded = Recorded(monkeypatch, pool)
    slow = replace(named(1)[0], id="c3")
    slow = replace(slow, check=replace(checks(1, waits=1)[0].check, description="c3"))
    problems, outcome, left = together(pool, fine, [*named(2), slow])
    assert problems == [] and [r.status for r in outcome.results] == ["passed"] * 3
    assert [r.check_id for r in outcome.results] == ["c1", "c2", "c3"]
    assert recorded.loaded == {"c1": False, "c2": True, "c3": False}
    assert loads(fine) == 3
    assert left == {"out": 0, "held": 0}


def test_a_suite_smaller_than_the_share_loads_its_own_pages(
    fine: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two checks beside the runtime check fit the share at once: nothing waits, so nothing
    is passed on (a check waiting for the runtime check's verdict would end later)."""
    pool = BrowserPool(boxed_or_skip(), pages=4)
    recorded = Recorded(monkeypatch, pool)
    problems, outcome, left = together(pool, fine, checks=2)
    assert problems == [] and [r.status for r in outcome.results] == ["passed"] * 2
    assert recorded.loaded == {"c1": False, "c2": False}
    assert loads(fine) == 3
    assert left == {"out": 0, "held": 0}


def test_a_page_held_past_pass_seconds_is_not_passed_on(
    fine: Site, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past PASS_SECONDS the next check's own bound would not fit in HOLD_SECONDS: the
    runtime check's page is closed and its slot freed, and the last check loads its own."""
    monkeypatch.setattr(browser_pool, "PASS_SECONDS", 0.0)
    pool = BrowserPool(boxed_or_skip(), pages=4)
    recorded = Recorded(monkeypatch, pool)
    problems, outcome, left = together(pool, fine)
    assert problems == [] and [r.status for r in outcome.results] == ["passed"] * 3
    assert recorded.loaded == {"c1": False, "c2": False, "c3": False}
    assert loads(fine) == 4
    assert max(recorded.held) <= pool.share == 3, recorded.held
    assert left == {"out": 0, "held": 0}


def test_a_page_with_a_problem_is_never_passed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    broken = site(BROKEN)
    broken.start()
    try:
        pool = BrowserPool(boxed_or_skip(), pages=4)
        recorded = Recorded(monkeypatch, pool)
        problems, outcome, left = together(pool, broken)
    finally:
        broken.stop()
    assert isinstance(problems, list) and any("broken" in p for p in problems), problems
    assert recorded.loaded == {"c1": False, "c2": False, "c3": False}  # c3 loaded its own
    assert loads(broken) == 4
    assert len(outcome.results) == 3  # run to its end here (the engine drops it: page_checks)
    assert left == {"out": 0, "held": 0}


def test_a_suite_stopped_while_its_check_waits_for_the_page_holds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runtime check's page is slow to settle (its counted request answers after 1.5 s):
    the suite is stopped while its last check waits for that page; the runtime check still
    ends with its verdict, and its page is closed, not passed to a check that is gone."""
    slow = site(FINE)
    slow.delays["/loaded"] = 1.5
    slow.start()
    pool = BrowserPool(boxed_or_skip(), pages=4)
    Recorded(monkeypatch, pool)
    check = Sites(pool.executable, pool, {"a": slow})
    runner = ChromiumAcceptance(check)
    who = app("userA", "a")

    async def run() -> tuple[list[str] | NotChecked | None, dict[str, int]]:
        try:
            waiting = asyncio.Event()
            real = Following.take

            async def take(self: Following, browsers: BrowserPool) -> Any:
                waiting.set()
                return await real(self, browsers)

            monkeypatch.setattr(Following, "take", take)
            suite = asyncio.ensure_future(runner.run(who, BUILD, named(3)))
            verdict = asyncio.ensure_future(check.check(who, BUILD))
            await asyncio.wait_for(waiting.wait(), 60)  # c3 waits for the page
            assert not verdict.done()  # the runtime check still waits for its page to settle
            suite.cancel()
            await asyncio.wait([suite])
            problems = await verdict
            kept = pool._here()
            await asyncio.sleep(0)
            return problems, {"out": kept.out, "held": kept.queue.shares.held}
        finally:
            await pool.close()
            slow.stop()

    problems, left = asyncio.run(run())
    assert problems == []
    assert left == {"out": 0, "held": 0}
