"""The publish report's look at a published home page (zerocode/publishing/report_runner.py):
the site loaded in the kept, confined browser (:mod:`.browser_pool`), in its owner's fair
share (:mod:`.browser_shares`), as the runtime check loads a preview: what its console says
(uncaught errors, ``console.error``), which requests of its own origin failed, the links of
the rendered page (a Vue app's are made by its scripts), and axe-core's violations.

axe-core is Lighthouse's own accessibility engine: the platform ships it, pinned
(``publishing/static/axe.min.js``, axe-core 4.14.1, the version Lighthouse 12.8.2 runs, under
its MPL-2.0 licence beside it), and evaluates it in the loaded page over the DevTools
protocol, so a page's CSP does not keep it out. A small probe of the platform's own could
check image alts, names and labels, but not what users trip on most, the colour contrast of
text (which needs each text's real colours, layered backgrounds and sizes): that is axe's.
The page is the app's: it can only mislead its own report, and every answer it gives is
bounded and checked here.

Best effort: a busy browser, one that failed (twice), or a site that did not answer leaves
the checks "not run" with why; a page that does not load in time, or throws, is the page's.
Each step is bounded, and the whole within the pool's hold (:data:`PAGE_SECONDS`).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from zerocode import publishing
from zerocode.adapters.local.browser_pool import BrowserDidNotStart, BrowserPool, went_away
from zerocode.adapters.local.browser_shares import BUSY, BrowserBusy, Tenant
from zerocode.adapters.local.chromium import origin_of, playwright_installed
from zerocode.adapters.local.chromium_check import (
    ANSWER_SECONDS,
    BROWSER_FAILED,
    LOAD_TIMEOUT_MS,
    PAGE_SECONDS,
    QUIET_MS,
    SETTLE_MS,
    Findings,
    _console,
    _page_error,
    not_answering,
)
from zerocode.adapters.local.page_traffic import Traffic
from zerocode.publishing.publish_report import PageLook, Violation

if TYPE_CHECKING:
    from playwright.async_api import Page, Response

log = logging.getLogger(__name__)

AXE_FILE = Path(publishing.__file__).parent / "static" / "axe.min.js"
AXE_SECONDS = 15.0  # axe-core read and run in the page
MAX_LINKS = 2_000
MAX_FAILED = 20
MAX_VIOLATIONS = 50
MAX_NODES = 8
API_PATH = "/_api/"  # the app's data API: its answers are the app's logic, not files
# The page's requests say they are the platform's (publishing/visits.py counts no visit for
# them: PLATFORM_MARKER), the rest as a headless Chromium's.
AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome "
    "Safari/537.36 zerocode-publish-report/1"
)

# The URLs the rendered page names (resolved by the browser), at most MAX_LINKS.
_LINKS = f"""() => {{
  const out = [];
  const add = (v) => {{ if (typeof v === "string" && v && out.length < {MAX_LINKS})
    out.push(v.slice(0, 2048)); }};
  for (const a of document.querySelectorAll("a[href], area[href]")) add(a.href);
  for (const e of document.querySelectorAll(
      "img[src], script[src], iframe[src], source[src], video[src], audio[src], embed[src]"))
    add(e.src);
  for (const l of document.querySelectorAll("link[href]")) {{
    if (!/preconnect|dns-prefetch/i.test(l.rel || "")) add(l.href);
  }}
  return out;
}}"""
# axe-core read and run in one evaluation (the page cannot swap it between the two).
_AXE_RUN = """async () => {
%s
;const found = window.axe;
const r = await found.run(document, { iframes: false, resultTypes: ["violations"] });
return r.violations.slice(0, %d).map((v) => ({ id: String(v.id), impact: String(v.impact || ""),
  help: String(v.help || "").slice(0, 300),
  nodes: v.nodes.slice(0, %d).map((n) => [].concat(n.target || []).join(" ").slice(0, 200)) }));
}"""


class ChromiumReport:
    """:class:`zerocode.publishing.publish_report.PageInspector` in the kept browser."""

    def __init__(
        self,
        browsers: BrowserPool,
        *,
        timeout_ms: float = LOAD_TIMEOUT_MS,
        settle_ms: float = SETTLE_MS,
        axe: str | None = None,
    ) -> None:
        self.browsers, self.timeout_ms, self.settle_ms = browsers, timeout_ms, settle_ms
        self._axe = axe

    @property
    def axe(self) -> str:
        if self._axe is None:
            self._axe = AXE_FILE.read_text(encoding="utf-8")
        return self._axe

    async def look(self, url: str, *, owner: str, app_id: str) -> PageLook:
        if not playwright_installed():
            return PageLook(why="not run: Playwright's package is not installed")
        for _ in range(2):
            seen = Seen(Findings(origin=origin_of(url)))
            try:
                async with self.browsers.page(
                    url, seen.findings.blocked, tenant=Tenant(owner, app_id)
                ) as page:
                    try:
                        async with asyncio.timeout(PAGE_SECONDS):
                            await look_in(
                                page,
                                url,
                                seen,
                                axe=self.axe,
                                timeout_ms=self.timeout_ms,
                                settle_ms=self.settle_ms,
                            )
                    except Exception as exc:
                        if await went_away(page):
                            continue  # the browser's failure: once more, on a fresh one
                        if not isinstance(exc, TimeoutError):
                            raise
                        seen.cut(f"not run: the look took longer than {PAGE_SECONDS:g} s")
            except BrowserBusy:
                return PageLook(why=BUSY.replace("not checked", "not run"))
            except BrowserDidNotStart as exc:
                return PageLook(why=f"not run: the browser did not start ({exc})")
            return seen.look()
        return PageLook(why=BROWSER_FAILED.replace("not checked", "not run"))


async def look_in(
    page: Page, url: str, seen: Seen, *, axe: str, timeout_ms: float, settle_ms: float
) -> None:
    """Load ``url`` in ``page`` (of a context confined to its origin) and note in ``seen``
    what its console says, which of its requests failed, its rendered links and axe-core's
    violations (``axe``: its script). No browser pool: the AWS build box calls it too, with
    a browser of its own (zerocode/buildbox/box_report.py)."""
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    findings = seen.findings
    page.on("pageerror", lambda error: _page_error(findings, error))
    page.on("console", lambda message: _console(findings, message))
    page.on("response", seen.answered)
    traffic = Traffic(page)
    await page.set_extra_http_headers({"User-Agent": AGENT})
    try:
        response = await page.goto(url, wait_until="load", timeout=timeout_ms)
    except PlaywrightTimeout:
        findings.add(f"the page did not finish loading within {timeout_ms / 1000:g} s")
        seen.a11y_why = "not run: the page did not finish loading"
        return
    except PlaywrightError as exc:  # the sites server, not the page
        seen.why = "not run: the site did not answer the browser"
        log.warning("publish report: the site did not answer: %s", str(exc).splitlines()[0])
        return
    if response is None or not response.ok:
        status = response.status if response is not None else "nothing"
        seen.why = f"not run: the site answered HTTP {status}"
        return
    seen.loaded = True
    await traffic.settled(QUIET_MS, settle_ms)
    try:
        seen.links = _strings(
            await asyncio.wait_for(page.evaluate(_LINKS), ANSWER_SECONDS), MAX_LINKS
        )
    except TimeoutError:
        findings.add(not_answering(url))
        seen.a11y_why = "not run: the page did not answer"
        return
    script = _AXE_RUN % (axe, MAX_VIOLATIONS, MAX_NODES)
    try:
        found = await asyncio.wait_for(page.evaluate(script), AXE_SECONDS)
    except TimeoutError:
        seen.a11y_why = f"not run: axe-core did not finish within {AXE_SECONDS:g} s"
        return
    except PlaywrightError as exc:  # the page broke axe (it can: the page is the app's)
        seen.a11y_why = f"not run: axe-core failed in the page ({str(exc).splitlines()[0][:200]})"
        return
    seen.violations = _violations(found)


class Seen:
    """What one look found so far (kept when a later step is cut short)."""

    def __init__(self, findings: Findings) -> None:
        self.findings = findings
        self.loaded = False
        self.failed: list[str] = []
        self.links: tuple[str, ...] = ()
        self.violations: tuple[Violation, ...] | None = None
        self.why: str | None = None
        self.a11y_why: str | None = None

    def answered(self, response: Response) -> None:
        """A request of the page's own origin that failed (not the data API's answers)."""
        if response.status < 400 or len(self.failed) >= MAX_FAILED:
            return
        try:
            mine = origin_of(response.url) == self.findings.origin
        except ValueError:
            return
        path = urlsplit(response.url).path or "/"
        if mine and not path.startswith(API_PATH):
            self.failed.append(f"{path[:300]} (HTTP {response.status})")

    def cut(self, why: str) -> None:
        if not self.loaded:
            self.findings.discard()
            self.why = why
        elif self.violations is None:
            self.a11y_why = why

    def look(self) -> PageLook:
        checked = self.findings.checked and self.why is None
        return PageLook(
            loaded=self.loaded and checked,
            problems=tuple(self.findings.result()) if checked else (),
            failed=tuple(self.failed),
            links=self.links,
            violations=self.violations,
            why=self.why,
            a11y_why=self.a11y_why,
        )


def _strings(value: Any, most: int) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v[:2048] for v in value[:most] if isinstance(v, str))


def _violations(value: Any) -> tuple[Violation, ...]:
    """axe-core's answer, as the page gave it: only what has the expected shape, bounded."""
    found = []
    for v in value[:MAX_VIOLATIONS] if isinstance(value, list) else ():
        if not isinstance(v, dict):
            continue
        nodes = v.get("nodes")
        found.append(
            Violation(
                rule=str(v.get("id", ""))[:80],
                impact=str(v.get("impact", ""))[:20],
                help=str(v.get("help", ""))[:300],
                where=_strings(nodes, MAX_NODES),
            )
        )
    return tuple(found)
