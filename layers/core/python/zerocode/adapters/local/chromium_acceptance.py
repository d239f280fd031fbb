"""Run an acceptance check (engine/acceptance.py) in the confined browser (issue 25, part 2):
the same confinement as the runtime check (only the app's own origin is fetched, on the
platform's side), a fresh context per check, every action and expectation bounded.

The check starts at the app's root; its steps act as a user would (by role and name, label,
text, or CSS: the first match), then each expectation is looked at until it holds or its time
is up: again as soon as the page's document changes (a navigation included), at the latest
every :data:`LOOK_SECONDS` (issue 40: a 100 ms poll cost up to 100 ms per expectation). The
first step or expectation that fails ends the check, with evidence: where, what was
expected, what was found, and a screenshot. :class:`ChromiumAcceptance` runs an app's
suite this way: a fresh context per check in the kept browser (:mod:`.browser_pool`), as
many checks at once as the user's share allows and the rest as those end (issue 40: each
context still taken in turn with other tenants' checks, :mod:`.browser_shares`), each verdict
told as its check ends, the app's files read once for the suite (:mod:`.served_files`), and
every call into the page bounded: a page that does not answer fails its own check, naming it.
A check whose browser went away under it is run once more on a fresh one; a browser busy
past the queue's bound, or failing twice, leaves the checks not yet done not run,
saying so: never failed, so never a repair round (issue 37).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

from zerocode.adapters.local.browser_pool import Handed, went_away
from zerocode.adapters.local.browser_shares import Tenant
from zerocode.adapters.local.check_targets import (
    MAX_ACTUAL,
    first_line,
    locator,
    probe,
    said,
)
from zerocode.adapters.local.chromium import Scratch, confined, for_app, playwright_installed
from zerocode.adapters.local.chromium_access import probe_problems
from zerocode.adapters.local.chromium_check import ANSWER_SECONDS, BROWSER_FAILED, ChromiumCheck
from zerocode.adapters.local.handover import Following
from zerocode.adapters.local.served_files import ServedFiles
from zerocode.adapters.local.suite_workers import SuiteBroke, together
from zerocode.apps.records import App
from zerocode.engine import check_suite
from zerocode.engine.acceptance import Check, Expectation, Step
from zerocode.engine.check_suite import CheckResult, RunOutcome, StoredCheck
from zerocode.engine.platform_checks import WHERE, PlatformCheck
from zerocode.publishing.builds import Build

if TYPE_CHECKING:
    from playwright.async_api import Browser, Frame, Page

log = logging.getLogger(__name__)

ACTION_MS = 3_000  # one step's action
EXPECT_MS = 3_000  # one expectation, looked at again as the page changes
LOOK_SECONDS = 0.1  # at the latest, an expectation not yet holding is looked at again
SOONEST_MS = 15  # at the soonest, after the last look (a page that changes all the time)
ANSWER_SLACK = 0.05  # past LOOK_SECONDS, our bound on the page's (a late timer, a busy page)
# A whole check, however its steps add up; with its evidence (SHOT_MS) and its context's
# close, within the pool's HOLD_SECONDS, which the fair queue's bound rests on.
CHECK_SECONDS = 30.0
SHOT_MS = 3_000  # the failure's screenshot
SUITE_SECONDS = 180.0  # a whole suite's run: checks past it are not run, saying so
KEY_NAMES = {"Space": " "}


@dataclass(frozen=True)
class Evidence:
    where: str  # "steps[2]" or "expect[0]"
    expected: str
    actual: str
    screenshot: bytes | None  # PNG of the page when it failed


@dataclass(frozen=True)
class CheckOutcome:
    status: Literal["passed", "failed"]
    evidence: Evidence | None = None


# What a new visitor does not have: the page's storage (its cookies are the context's).
FORGET_STORAGE = "() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }"
MAX_ACCESS_ACTUAL = 1_500  # what the platform's access check found, every problem named


class ChromiumAcceptance:
    """:class:`zerocode.engine.check_suite.AcceptanceRunner` in the runtime check's confined
    Chromium, sharing its kept browser's contexts fairly (:mod:`.browser_shares`)."""

    def __init__(self, check: ChromiumCheck) -> None:
        self.check = check

    async def run(
        self,
        app: App,
        build: Build | None,
        checks: Sequence[StoredCheck],
        seconds: float | None = None,
        on_result: Callable[[CheckResult], None] | None = None,
    ) -> RunOutcome:
        """The checks together, as many at once as the user's share of the browser allows,
        each in a context of its own (``seconds``: the turn's browser time left, which bounds
        the run with SUITE_SECONDS; ``on_result``: told each verdict as its check ends)."""

        def outcome(done: dict[str, CheckResult], why: str | None = None) -> RunOutcome:
            rest = CheckResult  # a check not done when the run stopped: not run, saying why
            found = [done.get(c.id) or rest(check_id=c.id, status="not_run") for c in checks]
            return RunOutcome(tuple(found), why)

        try:
            url = await asyncio.to_thread(self.check.preview_url, app, build)
        except Exception as exc:  # a store failing: the checks are not run, and say so
            log.warning("acceptance checks of app %s not run: %s", app.id, type(exc).__name__)
            return outcome({}, "the preview could not be found")
        if url is None:
            return outcome({}, "the preview does not show this build")
        if not playwright_installed():
            return outcome({}, "no browser is installed here")
        bound = SUITE_SECONDS if seconds is None else min(SUITE_SECONDS, seconds)
        done: dict[str, CheckResult] = {}
        # A suite of the user's whole share takes the runtime check's page (.handover).
        wants = build is not None and len(checks) >= self.check.browsers.share > 1
        following = self.check.follow(app.id, build.id) if build is not None and wants else None
        try:
            tenant = Tenant(app.owner, app.id)
            why = await self._all(url, tenant, checks, bound, done, on_result, following)
        finally:
            if following is not None:
                following.drop(self.check.browsers)  # a page passed on and not taken
        return outcome(done, why)

    async def _all(
        self,
        url: str,
        tenant: Tenant,
        checks: Sequence[StoredCheck],
        bound: float,
        done: dict[str, CheckResult],
        on_result: Callable[[CheckResult], None] | None,
        following: Following | None = None,
    ) -> str | None:
        """Run the checks into ``done``; why the others were not run, if any were not. With
        ``following``, the check with the fewest steps (it starts last) runs on the runtime
        check's page when it is passed on (else on its own); its worker then does the rest."""
        files = ServedFiles()  # the app's files, read once for the suite's life
        left = list(reversed(checks))
        steps = [
            c for c in left if not isinstance(c, PlatformCheck)
        ]  # the platform's: pages of their own
        last = min(steps, key=lambda c: len(c.check.steps)) if following and steps else None
        if last is not None:
            left.remove(last)

        async def verdict(stored: StoredCheck, handed: Handed | None = None) -> None:
            result = await self._one(url, stored, tenant, files, handed)
            if result is None:
                raise SuiteBroke
            done[stored.id] = result
            if on_result is not None:
                on_result(result)

        async def worker() -> None:
            while left:
                await verdict(left.pop())

        async def follower() -> None:
            assert following is not None and last is not None
            await verdict(last, await following.take(self.check.browsers))
            await worker()

        # A worker per context the user's share allows: the rest run as they free.
        share = self.check.browsers.share
        work = []
        if last is not None:
            work.append(follower())
            share -= 1  # the runtime check's context, which the follower takes
        work += [worker() for _ in range(min(len(left), share))]
        why = await together(work, bound, tenant)
        if why is None and len(done) < len(checks):
            why = BROWSER_FAILED  # never expected: every worker ran until none was left
        return why

    async def _access(self, url: str, one: PlatformCheck, tenant: Tenant) -> CheckResult:
        return await _access_result(self.check, url, one, tenant)

    async def _one(
        self, url: str, one: StoredCheck, tenant: Tenant, files: ServedFiles, given: Handed | None
    ) -> CheckResult | None:
        """One check's verdict (on the ``given`` page first, if any); run once more on a page
        of its own if its browser went away under it (the platform's failure); else None."""
        if isinstance(one, PlatformCheck):
            return await self._access(url, one, tenant)
        scratch = for_app(self.check.scratch, tenant.app)  # its own data space
        page_of = partial(self.check.browsers.page, tenant=tenant, files=files, scratch=scratch)
        for _ in range(2):
            handed, given = given, None
            async with page_of(url, handed=handed) as page:
                try:
                    loaded = handed is not None
                    outcome = await check_in_page(page, url, one.check, loaded=loaded)
                except Exception:
                    if not await went_away(page):
                        raise
                    outcome = None
                # A check that passed had its page answer to the end: the browser is asked
                # only what a failure may owe to it (a round trip less before the verdict).
                if outcome is not None and (
                    outcome.status == "passed" or not await went_away(page)
                ):
                    return _result(one, outcome)
            log.warning("acceptance check %s: the browser went away under it", one.id)
        return None


async def _access_result(
    check: ChromiumCheck, url: str, one: PlatformCheck, tenant: Tenant
) -> CheckResult:
    """The platform's access check of one collection (chromium_access.py): its visitors in
    contexts of the user's share, in a scratch space of their own."""
    made, pool = check.scratch, check.browsers
    if made is None:
        return CheckResult(check_id=one.id, status="not_run")

    def open_page(shared: Scratch) -> AbstractAsyncContextManager[Page]:
        return pool.page(url, tenant=tenant, scratch=lambda: shared)

    found = await probe_problems(open_page, url, one.probe, one.rules, lambda: made(tenant.app))
    if found is None:
        return CheckResult(check_id=one.id, status="not_run")
    if not found:
        return CheckResult(check_id=one.id, status="passed")
    evidence = check_suite.Evidence(
        where=WHERE,
        expected="each visitor refused as the rules say",
        actual="; ".join(found)[:MAX_ACCESS_ACTUAL],
    )
    return CheckResult(check_id=one.id, status="failed", evidence=evidence)


def _result(stored: StoredCheck, outcome: CheckOutcome) -> CheckResult:
    found = outcome.evidence
    if found is None:
        return CheckResult(check_id=stored.id, status=outcome.status)
    shot = found.screenshot
    evidence = check_suite.Evidence(
        where=found.where,
        expected=found.expected,
        actual=found.actual,
        shot=shot is not None and len(shot) <= check_suite.MAX_SCREENSHOT,
    )
    return CheckResult(
        check_id=stored.id, status=outcome.status, evidence=evidence, screenshot=shot
    )


class _Failed(Exception):
    def __init__(self, where: str, expected: str, actual: str) -> None:
        super().__init__(actual)
        self.where, self.expected, self.actual = where, expected, actual[:MAX_ACTUAL]


async def run_check(
    browser: Browser,
    url: str,
    check: Check,
    action_ms: float = ACTION_MS,
    expect_ms: float = EXPECT_MS,
) -> CheckOutcome:
    """Run ``check`` against the app at ``url`` (its root) in a fresh confined context of
    ``browser`` (the bounds: :func:`check_in_page`'s)."""
    context = await confined(browser, url)
    try:
        page = await context.new_page()
        return await check_in_page(page, url, check, action_ms=action_ms, expect_ms=expect_ms)
    finally:
        with contextlib.suppress(Exception):
            await context.close()


async def check_in_page(
    page: Page,
    url: str,
    check: Check,
    *,
    action_ms: float = ACTION_MS,
    expect_ms: float = EXPECT_MS,
    loaded: bool = False,
) -> CheckOutcome:
    """Run ``check`` against the app at ``url`` (its root) in ``page``, of a fresh context
    confined to that origin (``loaded``: the runtime check loaded it there and found no
    problem: .handover)."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        async with asyncio.timeout(CHECK_SECONDS):
            try:
                async with asyncio.timeout(action_ms * 3 / 1000 + ANSWER_SECONDS):
                    if not loaded:
                        await page.goto(url, wait_until="load", timeout=action_ms * 3)
            except TimeoutError:
                raise _Failed("the check", "the page loaded", _silent(page)) from None
            except PlaywrightTimeout as exc:  # the page's load never ended (others: ours)
                raise _Failed("the check", "the page loaded", first_line(exc)) from None
            for i, step in enumerate(check.steps):
                await _step(page, url, step, f"steps[{i}]", action_ms)
            for i, expectation in enumerate(check.expect):
                await _expect(page, expectation, f"expect[{i}]", expect_ms, errors)
        return CheckOutcome("passed")
    except _Failed as failed:
        return CheckOutcome("failed", await _evidence(page, failed))
    except TimeoutError:
        return CheckOutcome(
            "failed",
            await _evidence(page, _Failed("the check", f"done within {CHECK_SECONDS:g} s", "")),
        )


async def _evidence(page: Page, failed: _Failed) -> Evidence:
    shot = None
    with contextlib.suppress(Exception):
        shot = await asyncio.wait_for(
            page.screenshot(type="png", timeout=SHOT_MS), SHOT_MS / 1000 + 1
        )
    return Evidence(failed.where, failed.expected, failed.actual, shot)


async def _step(page: Page, url: str, step: Step, where: str, ms: float) -> None:
    from playwright.async_api import Error as PlaywrightError

    what = {
        "goto": f"go to {step.path}",
        "click": f"click {said(step.target)}",
        "fill": f"fill {said(step.target)} with {step.value!r}",
        "press": f"press {step.value} in {said(step.target)}",
        "select": f"select {step.value!r} in {said(step.target)}",
        "wait": f"wait {step.ms} ms",
        "reload": "reload the page",
        "newVisitor": "come back as a new visitor (no cookies, no storage)",
    }[step.action]
    try:
        if step.action == "goto":
            assert step.path is not None
            origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
            async with asyncio.timeout(ms * 3 / 1000 + ANSWER_SECONDS):  # as actions, below
                await page.goto(origin + step.path, wait_until="load", timeout=ms * 3)
        elif step.action == "wait":
            await asyncio.sleep((step.ms or 0) / 1000)  # the platform's clock, not the page's
        elif step.action in ("reload", "newVisitor"):
            async with asyncio.timeout(ms * 3 / 1000 + ANSWER_SECONDS):
                if step.action == "newVisitor":
                    await page.context.clear_cookies()
                    await page.evaluate(FORGET_STORAGE)
                await page.reload(wait_until="load", timeout=ms * 3)
        else:
            assert step.target is not None
            found = locator(page, step.target)
            # Playwright's own timeout, and ours over it: a hung renderer answers neither.
            async with asyncio.timeout(ms / 1000 + ANSWER_SECONDS):
                if step.action == "click":
                    await found.click(timeout=ms)
                elif step.action == "fill":
                    await found.fill(step.value or "", timeout=ms)
                elif step.action == "press":
                    key = step.value or ""
                    await found.press(KEY_NAMES.get(key, key), timeout=ms)
                else:
                    await found.select_option(label=step.value, timeout=ms)
    except PlaywrightError as exc:
        raise _Failed(where, what, first_line(exc)) from None
    except TimeoutError:
        raise _Failed(where, what, _silent(page)) from None


def _silent(page: Page) -> str:
    """What a page that does not answer is told (its path: the origin holds the key)."""
    path = urlsplit(page.url).path or "/"
    return f"the page {path} did not answer within {ANSWER_SECONDS:g} s (a script that never ends?)"


async def _expect(
    page: Page, expectation: Expectation, where: str, ms: float, errors: list[str]
) -> None:
    """Look until the expectation holds or ``ms`` is up, again as soon as the page's document
    changes (:func:`_changed`); _Failed with what was found."""
    expected, look_at = probe(page, expectation, errors)
    deadline = time.monotonic() + ms / 1000
    while True:
        try:  # each look into the page bounded: a busy renderer never answers
            held, actual = await asyncio.wait_for(look_at(), ANSWER_SECONDS)
        except TimeoutError:
            raise _Failed(where, expected, _silent(page)) from None
        if held:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Failed(where, expected, actual)
        await _changed(page, min(left, LOOK_SECONDS))


# Resolves once the document changes (at the earliest ``soonest`` ms after the call: a page
# that changes all the time is looked at ~60 times a second, not as fast as it changes), or
# after ``ms`` (what no mutation shows: a transition's end, a style's effect on visibility).
# A page that broke what it uses (the page's own globals) gets the timer alone, or our bound.
_CHANGED = """([ms, soonest]) => new Promise((done) => {
  const start = performance.now();
  let seen = null;
  const end = (changed) => { if (seen) seen.disconnect(); done(changed); };
  let timer = setTimeout(end, ms, false);
  try {
    seen = new MutationObserver(() => {
      seen.disconnect();
      clearTimeout(timer);
      timer = setTimeout(end, Math.max(0, start + soonest - performance.now()), true);
    });
    seen.observe(document, {subtree: true, childList: true, attributes: true,
                            characterData: true});
  } catch (e) {}
})"""


async def _changed(page: Page, seconds: float) -> bool:
    """Until the page's document changes or ``seconds`` pass, whichever is first (whether it
    changed): what a click makes true a moment later is seen as it does, not at the next
    tick of a clock. A navigation is a change, seen once the next document has its content.
    Our bound holds whatever the page does; a page that does not answer is told by the next
    look."""
    from playwright.async_api import Error as PlaywrightError

    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds + ANSWER_SLACK
    moved: asyncio.Future[None] = loop.create_future()

    def navigated(frame: Frame) -> None:
        if frame == page.main_frame and not moved.done():
            moved.set_result(None)

    page.on("framenavigated", navigated)
    look = asyncio.ensure_future(page.evaluate(_CHANGED, [seconds * 1000, SOONEST_MS]))
    look.add_done_callback(lambda done: done.cancelled() or done.exception())
    try:
        await asyncio.wait(
            (look, moved), timeout=seconds + ANSWER_SLACK, return_when="FIRST_COMPLETED"
        )
        if look.done() and not look.exception():
            return look.result() is True
        if page.is_closed():  # nothing will change: the expectation's bound ends the looks
            await asyncio.sleep(max(0.0, deadline - loop.time()))
            return False
        # The document is being replaced (its scripts' world went with it): the next one's
        # address is known once it is committed, and its content once it has loaded.
        async with asyncio.timeout_at(deadline):
            await moved
            await page.wait_for_load_state("domcontentloaded")
        return True
    except (TimeoutError, PlaywrightError):
        return False
    finally:
        look.cancel()
        page.remove_listener("framenavigated", navigated)
