"""Runtime check: a successful preview build loaded in headless Chromium, as a visitor would.

A build can succeed and the page still fail in the browser. Right after a preview build
succeeded (the preview pointer already names it), the engine asks this adapter what fails
there, and shows the model (engine/repair.py). It loads the build's preview URL from the sites
server in a browser confined to that one origin, exactly as covers are (:mod:`.chromium`):
nothing elsewhere is reached, and a page that tries is not at fault for it.

Problems, in the order they happened:

- uncaught exceptions (``pageerror``), unhandled promise rejections included;
- ``console.error`` messages: Vue reports errors of setup, render and watchers there in a
  production build (``[Vue warn]`` lines are ``console.warn``, and only in development builds:
  warnings are not problems); resources of the app's own origin that fail to load (a 404
  script) show up here too;
- an empty mount point: for a Vue project, the mounted element (``[data-v-app]``, else
  ``#app``) has no child element after load, or there is none; for html / multi_file, a
  ``<body>`` with neither text nor an element other than script, style and the like;
- a load that does not finish within the timeout (10 s), itself a problem;
- a page that does not answer a trivial script within :data:`ANSWER_SECONDS` after load (a
  script that never ends): its check stops there and its context is closed, which ends its
  renderer; other checks in the browser go on (issue 37: a page hurts only its own check).

What the confinement caused is not a problem: a request to another origin is aborted
(``ERR_BLOCKED_BY_CLIENT``), and neither its console message nor the failed ``fetch`` that
follows is reported. The page's origin is cut out of every message (it holds the preview key,
the preview's only secret, and the model needs only the path). Bounded: at most
:data:`MAX_PROBLEMS` problems of at most :data:`MAX_PROBLEM_CHARS` characters each.

Best effort: the check never raises for anything the page does. When Chromium cannot start,
the sites server does not answer, or the preview does not point at the build any more, it
logs why and reports no problems: a turn is never failed by the check's own trouble. When the
browser was busy past the fair queue's bound (:mod:`.browser_shares`), or went away under the
check twice (it is re-run once on a fresh browser), it reports :class:`NotChecked` with why.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from zerocode.adapters.local.browser_pool import (
    BrowserDidNotStart,
    BrowserPool,
    kept_browser,
    went_away,
)
from zerocode.adapters.local.browser_shares import BUSY, PLATFORM, BrowserBusy, Tenant
from zerocode.adapters.local.chromium import (
    Scratch,
    confined,
    find_chromium,
    for_app,
    origin_of,
    playwright_installed,
    usable,
)
from zerocode.adapters.local.handover import Following
from zerocode.adapters.local.page_traffic import Traffic
from zerocode.apps.records import App, AppStore, CodeGenType
from zerocode.engine.runtime_check import NotChecked
from zerocode.publishing.builds import Build, BuildState
from zerocode.publishing.pointers import Publisher, SiteTarget, SiteUrls, preview_pointer

if TYPE_CHECKING:
    from playwright.async_api import Browser, ConsoleMessage, Page

log = logging.getLogger(__name__)

MAX_PROBLEMS = 10
MAX_PROBLEM_CHARS = 300
LOAD_TIMEOUT_MS = 10_000  # the page's load event; past it the page is reported as hanging
SETTLE_MS = 2_000  # after load: until no request is in flight for QUIET_MS, at most this long
QUIET_MS = 100  # no request in flight this long: settled (a router's first view has loaded)
ANSWER_SECONDS = 5.0  # a trivial script evaluated in the loaded page; past it: not answering
# Past this the check of a page in the kept browser is abandoned, not checked (each step
# has its bound: this is the whole's); within the pool's HOLD_SECONDS, its close included.
PAGE_SECONDS = 30.0
GIVE_UP_SECONDS = 45.0  # the AWS build box's whole check, its own browser's start included
BROWSER_FAILED = "not checked: the checking browser failed (twice)"
_KEY = re.compile(r"[A-Za-z0-9_-]{20,}")  # a preview key, in a URL written to the log
# What a request aborted by the confinement looks like to the page.
_BLOCKED = ("ERR_BLOCKED_BY_CLIENT", "Failed to fetch", "NetworkError", "Load failed")

# Evaluated in the page after load: why it shows nothing, or null.
_EMPTY = """(vue) => {
  if (vue) {
    const mounted = document.querySelector("[data-v-app]");
    const root = mounted || document.querySelector("#app");
    if (!root) return "empty mount point: there is no #app element and no Vue app mounted";
    if (root.children.length) return null;
    const name = mounted ? "the element the app mounted on" : "#app";
    return "empty mount point: " + name + " has no content after load " +
      "(the app did not mount, or rendered nothing)";
  }
  const body = document.body;
  if (!body) return "empty page: the page has no <body>";
  const hidden = ["SCRIPT", "STYLE", "LINK", "META", "TEMPLATE", "NOSCRIPT", "TITLE"];
  const shown = Array.from(body.children).filter((e) => !hidden.includes(e.tagName));
  if (shown.length || (body.innerText || "").trim()) return null;
  return "empty page: <body> has no content after load";
}"""


@dataclass(kw_only=True)
class Findings:
    """Problems as they happen: cleaned, deduplicated, bounded."""

    origin: str
    blocked: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dropped: int = 0
    checked: bool = True  # False when the page could not be loaded for a reason not its own
    why: str | None = None  # said to the user and the model when it was not checked

    def add(self, text: str) -> None:
        text = _clean(text, self.origin)
        if not text or text in self.problems:
            return
        if len(self.problems) >= MAX_PROBLEMS:
            self.dropped += 1
            return
        self.problems.append(text)

    def discard(self, why: str | None = None) -> None:
        """Forget what was found: the page was never properly loaded (not the page's fault),
        so the page was not checked (``why``: what the user and the model are told)."""
        self.problems.clear()
        self.dropped = 0
        self.checked = False
        self.why = why

    def by_confinement(self, text: str) -> bool:
        """Whether a failure is the confinement's doing (a request elsewhere was aborted)."""
        return bool(self.blocked) and any(mark in text for mark in _BLOCKED)

    def result(self) -> list[str]:
        if not self.dropped:
            return list(self.problems)
        hidden = self.dropped + len(self.problems) - (MAX_PROBLEMS - 1)  # the last line says so
        more = f"(and {hidden} more problem{'s' if hidden != 1 else ''})"
        return [*self.problems[: MAX_PROBLEMS - 1], more]


class ChromiumCheck:
    """:class:`zerocode.engine.runtime_check.RuntimeCheck` in a confined headless Chromium."""

    def __init__(
        self,
        urls: SiteUrls,
        executable: str,
        *,
        apps: AppStore | None = None,
        publisher: Publisher | None = None,
        timeout_ms: float = LOAD_TIMEOUT_MS,
        settle_ms: float = SETTLE_MS,
        browsers: BrowserPool | None = None,
        scratch: Callable[[str], Scratch] | None = None,
    ) -> None:
        self.urls, self.executable = urls, executable
        self.scratch = scratch  # each context's own data space (data/check_spaces.py)
        self.browsers = browsers or kept_browser(executable)
        self.apps, self.publisher = apps, publisher
        self.timeout_ms, self.settle_ms = timeout_ms, settle_ms
        self.following: dict[tuple[str, str], Following] = {}  # checks running, by app, build

    async def check(self, app: App, build: Build) -> list[str] | NotChecked | None:
        """The problems of ``build``'s preview page (the one the preview shows); meanwhile
        the suite of that build may ask for the page (:meth:`follow`)."""
        if build.state is not BuildState.SUCCEEDED:
            return None
        key = (app.id, build.id)  # before the first await: the suite's task waits for that
        following = self.following[key] = Following()
        try:
            try:
                url = await asyncio.to_thread(self.preview_url, app, build)
            except Exception as exc:  # a store failing: the check is best effort
                log.warning("runtime check of app %s skipped: %s", app.id, type(exc).__name__)
                return None
            if url is None:
                return None
            vue = build.kind is CodeGenType.VUE_PROJECT
            tenant = Tenant(app.owner, app.id)
            # The data's rules are the suite's platform checks (engine/platform_checks.py).
            return await self.check_url(url, vue=vue, tenant=tenant, following=following)
        finally:
            if self.following.get(key) is following:
                del self.following[key]
            following.end()

    def follow(self, app_id: str, build_id: str) -> Following | None:
        """The page of this build's runtime check, for a check of its suite (the module
        :mod:`.handover`); None when no such check runs, or another has it."""
        following = self.following.get((app_id, build_id))
        if following is None or following.wanted:
            return None
        following.wanted = True
        return following

    def preview_url(self, app: App, build: Build | None) -> str | None:
        """The preview's URL, if the preview shows ``build`` (when given; the key in ``app``
        may be one the preview build just replaced: the stored app has the current one)."""
        key = app.preview_key
        if not self.urls.usable(key) and self.apps is not None:
            current = self.apps.get(app.id)
            key = current.preview_key if current is not None else key
        if not self.urls.usable(key):
            log.warning("runtime check of app %s skipped: no usable preview key", app.id)
            return None
        if self.publisher is not None and build is not None:
            target = self.publisher.target(preview_pointer(key))
            if target != SiteTarget(app.id, build.id):
                log.info(
                    "runtime check of app %s skipped: the preview shows %s, not build %s",
                    app.id,
                    target.build_id if target else "nothing",
                    build.id,
                )
                return None
        return self.urls.preview(key)

    async def check_url(
        self, url: str, *, vue: bool, tenant: Tenant = PLATFORM, following: Following | None = None
    ) -> list[str] | NotChecked | None:
        """The problems of the page at ``url`` (see the module's docstring), None when it
        could not be checked for a reason of the preview's, :class:`NotChecked` for one of
        the browser's. It waits its turn for a context of the kept browser among tenants
        (:mod:`.browser_shares`); a check whose browser went away under it is run once more
        (on a fresh browser), never reported as the page's."""
        for _ in range(2):
            findings = Findings(origin=origin_of(url))
            try:
                again = await self._load(url, findings, vue=vue, tenant=tenant, to=following)
            except BrowserBusy as exc:
                log.warning("runtime check of %s: %s", _public(url), exc)
                return NotChecked(BUSY)
            except Exception as exc:  # never a turn's failure
                log.warning("runtime check of %s abandoned: %s", _public(url), _first_line(exc))
                return None
            if not again:
                if findings.why is not None:
                    return NotChecked(findings.why)
                return findings.result() if findings.checked else None
            log.warning("runtime check of %s: the browser went away; run again", _public(url))
        return NotChecked(BROWSER_FAILED)

    async def _load(
        self, url: str, findings: Findings, *, vue: bool, tenant: Tenant, to: Following | None
    ) -> bool:
        """Check the page into ``findings`` (a page that passed is passed on ``to`` the suite,
        if it wants it); whether the browser went away under it."""
        if not playwright_installed():
            log.warning("runtime check skipped: Playwright's package is not installed")
            findings.discard()
            return False
        try:
            async with self.browsers.page(
                url, findings.blocked, tenant=tenant, scratch=for_app(self.scratch, tenant.app)
            ) as page:
                try:
                    async with asyncio.timeout(PAGE_SECONDS):
                        loaded = await inspect_page(
                            page,
                            url,
                            findings,
                            vue=vue,
                            timeout_ms=self.timeout_ms,
                            settle_ms=self.settle_ms,
                        )
                except Exception as exc:
                    if await went_away(page):
                        return True
                    if not isinstance(exc, TimeoutError):
                        raise
                    log.warning("runtime check of %s abandoned: past its bound", _public(url))
                    took = f"the check took longer than {PAGE_SECONDS:g} s"
                    findings.discard(f"not checked: {took}")
                    return False
                # A page that loaded and answered, nothing wrong, had its browser to the end:
                # it is asked only what problems may owe to it (a round trip less).
                clean = loaded and not findings.problems
                if not clean and await went_away(page):
                    return True
                if clean and to is not None:
                    to.pass_on(self.browsers, page)
        except BrowserDidNotStart as exc:
            log.warning("runtime check skipped: Chromium did not start (%s)", exc)
            findings.discard()
            return False
        if findings.blocked:
            log.info(
                "runtime check of %s: %d request(s) elsewhere aborted",
                _public(url),
                len(findings.blocked),
            )
        return False


async def inspect(browser: Browser, url: str, findings: Findings, **how: Any) -> Page | None:
    """Load ``url`` in a context of ``browser`` confined to its origin and record what fails
    there in ``findings`` (``how``: :func:`inspect_page`'s); the page, still open, when it
    loaded (for a cover), else None. The AWS build's in-box check (zerocode.buildbox), with
    a browser of its own."""
    context = await confined(browser, url, seen=findings.blocked)
    page = await context.new_page()
    return page if await inspect_page(page, url, findings, **how) else None


async def inspect_page(
    page: Page,
    url: str,
    findings: Findings,
    *,
    vue: bool,
    timeout_ms: float = LOAD_TIMEOUT_MS,
    settle_ms: float = SETTLE_MS,
) -> bool:
    """Load ``url`` in ``page`` (of a context confined to its origin) and record what fails
    there in ``findings``; whether it loaded."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    page.on("pageerror", lambda error: _page_error(findings, error))
    page.on("console", lambda message: _console(findings, message))
    traffic = Traffic(page)
    try:
        response = await page.goto(url, wait_until="load", timeout=timeout_ms)
    except PlaywrightTimeout:
        findings.add(f"the page {_path(url)} did not finish loading within {timeout_ms / 1000:g} s")
        return False
    except PlaywrightError as exc:  # the sites server, not the page
        log.warning("runtime check of %s skipped: %s", _public(url), _first_line(exc))
        findings.discard()
        return False
    if response is None or not response.ok:
        log.warning(
            "runtime check of %s skipped: the preview answered HTTP %s",
            _public(url),
            response.status if response is not None else "nothing",
        )
        findings.discard()
        return False
    await traffic.settled(QUIET_MS, settle_ms)
    try:
        empty = await asyncio.wait_for(page.evaluate(_EMPTY, vue), ANSWER_SECONDS)
    except TimeoutError:
        findings.add(not_answering(url))
        return False
    if isinstance(empty, str):
        findings.add(empty)
    return True


def not_answering(url: str) -> str:
    """The problem of a page that does not answer (its path named: the origin holds the key)."""
    return (
        f"the page {_path(url)} did not answer within {ANSWER_SECONDS:g} s after load: a script "
        "that never ends (a loop, say) keeps it busy; its check stopped and it was closed"
    )


def _path(url: str) -> str:
    return urlsplit(url).path or "/"


def _page_error(findings: Findings, error: Any) -> None:
    name = str(getattr(error, "name", "") or "Error")
    message = str(getattr(error, "message", "") or error)
    text = f"{name}: {message}" if not message.startswith(name) else message
    if findings.by_confinement(text):
        return
    stack = str(getattr(error, "stack", "") or "")
    findings.add(f"uncaught {text}{_where(stack)}")


def _console(findings: Findings, message: ConsoleMessage) -> None:
    if message.type != "error":
        return
    text = message.text
    location = message.location or {}
    source = str(location.get("url") or "")
    if findings.by_confinement(text) or (source and source in findings.blocked):
        return
    at = _where(text)
    if not at and source:
        line, column = location.get("lineNumber", 0) + 1, location.get("columnNumber", 0) + 1
        at = f" (at {source}:{line}:{column})"  # Playwright counts from 0, stacks from 1
    findings.add(f"console.error: {_first_line(text)}{at}")


def _where(stack: str) -> str:
    """`` (at file:line:col)`` from the first frame of a stack, or ""."""
    for line in stack.splitlines()[1:]:
        line = line.strip()
        if line.startswith("at "):
            frame = line[3:]
            if frame.endswith(")") and "(" in frame:
                frame = frame[frame.rindex("(") + 1 : -1]
            return f" (at {frame})"
    return ""


def _clean(text: str, origin: str) -> str:
    """One line, the page's origin cut out (it holds the preview key), at most
    :data:`MAX_PROBLEM_CHARS` characters."""
    host = origin.rsplit(":", 1)[0]  # scheme://host, as a URL writes it without the port
    for written in (origin, host):
        text = text.replace(written, "")
    text = " ".join(text.split())
    if len(text) > MAX_PROBLEM_CHARS:
        text = text[: MAX_PROBLEM_CHARS - 1] + "…"
    return text


def _first_line(value: object) -> str:
    text = str(value).strip()
    return text.splitlines()[0] if text else type(value).__name__


def _public(url: str) -> str:
    """A preview URL for logs: its key is the preview's only secret."""
    return _KEY.sub("{key}", url)


def chromium_check(
    urls: SiteUrls,
    executable: str | None,
    *,
    apps: AppStore | None = None,
    publisher: Publisher | None = None,
    scratch: Callable[[str], Scratch] | None = None,
) -> ChromiumCheck | None:
    """The runtime check if Playwright, a Chromium and the browser's box are there, else None
    (no check: never an unconfined browser; :func:`.chromium.availability` says why)."""
    if not usable():
        return None
    found = find_chromium(executable)
    if not found:
        return None
    return ChromiumCheck(urls, found, apps=apps, publisher=publisher, scratch=scratch)
