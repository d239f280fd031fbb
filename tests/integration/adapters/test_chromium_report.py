"""The publish report's look at a published page (issue 44, point 5) in real headless
Chromium, in the kept confined browser: a clean page loads with nothing wrong; a faulty one
gives its console errors, its failed requests, the links its scripts made and axe-core's
serious violations; a page that spins or breaks axe-core is said so, never passed; a busy
browser, or one that does not start, is "not run". And the axe-core the platform ships is
the pinned one, with its licence beside it."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests import shared_loop
from tests.integration.adapters.test_chromium_check import Site
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.adapters.local.browser_pool import BrowserDidNotStart, kept_browser
from zerocode.adapters.local.browser_shares import BrowserBusy
from zerocode.adapters.local.chromium_report import AGENT, AXE_FILE, ChromiumReport
from zerocode.publishing.publish_report import PageLook
from zerocode.publishing.visits import PLATFORM_MARKER

CLEAN = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Otters</title>
</head><body><main><h1>Otters</h1><p>Otters swim.</p><img src="/otter.png" alt="An otter">
<a href="/about">About</a><button type="button">Like</button></main></body></html>"""
FAULTY = """<!doctype html><html><head><title>Bad</title></head><body><main><h1>Bad</h1>
<img src="/otter.png"><button type="button"></button><script src="/missing.js"></script>
<script>console.error("the list did not load");
document.querySelector("main").insertAdjacentHTML("beforeend", '<a href="/made.html">x</a>');
</script></main></body></html>"""


def look(page: str, files: dict[str, str] | None = None) -> tuple[PageLook, Site]:
    site = Site({"/": page, **(files or {})})
    site.start()
    try:
        report = ChromiumReport(kept_browser(chromium_or_skip()), timeout_ms=5000)
        return shared_loop.run(report.look(site.url, owner="u-1", app_id="app-1")), site
    finally:
        site.stop()


def test_a_clean_page_loads_with_nothing_wrong() -> None:
    seen, site = look(CLEAN, {"/otter.png": "png"})
    assert seen.loaded and seen.why is None and seen.a11y_why is None
    assert seen.problems == () and seen.failed == ()
    assert seen.violations is not None
    assert not [v for v in seen.violations if v.impact in ("serious", "critical")], seen.violations
    assert f"{site.url}about" in seen.links and f"{site.url}otter.png" in seen.links


def test_a_faulty_page_gives_its_errors_failed_requests_links_and_violations() -> None:
    seen, site = look(FAULTY, {"/otter.png": "png"})
    assert seen.loaded
    assert any("the list did not load" in p for p in seen.problems), seen.problems
    assert "/missing.js (HTTP 404)" in seen.failed
    assert f"{site.url}made.html" in seen.links  # made by its script
    assert seen.violations is not None
    serious = {v.rule: v for v in seen.violations if v.impact in ("serious", "critical")}
    assert {"image-alt", "button-name", "html-has-lang"} <= set(serious), serious
    assert serious["image-alt"].where == ("img",)
    assert all(site.url not in p for p in seen.problems)  # the origin is cut out


def test_a_page_that_breaks_axe_core_is_not_passed() -> None:
    hostile = CLEAN.replace(
        "</main>",
        "</main><script>Object.defineProperty(window, 'axe', {configurable: false, "
        "set() {}, get() { return {run() { throw new Error('no axe here'); }}; }});</script>",
    )
    seen, _ = look(hostile)
    assert seen.loaded and seen.violations is None
    assert seen.a11y_why is not None and seen.a11y_why.startswith("not run: axe-core failed")


def test_a_page_that_spins_is_said_so_and_not_passed() -> None:
    spinning = CLEAN.replace(
        "</main>", "</main><script>setTimeout(() => { for (;;) {} }, 0);</script>"
    )
    seen, _ = look(spinning)
    assert seen.violations is None and seen.a11y_why is not None
    # It stops the page loading, or answering once loaded: either is the page's, and said.
    said = ("did not answer", "did not finish loading")
    assert any(w in p for p in seen.problems for w in said), seen.problems


def test_the_looks_requests_say_they_are_the_platforms() -> None:
    """A site's visits count none of them (publishing/visits.py, PLATFORM_MARKER)."""
    agents: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            agents.append(self.headers.get("user-agent", ""))
            body = CLEAN.encode() if self.path == "/" else b"png"
            self.send_response(200)
            self.send_header("content-type", "text/html" if self.path == "/" else "image/png")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        report = ChromiumReport(kept_browser(chromium_or_skip()))
        url = f"http://app1.localhost:{server.server_address[1]}/"
        assert shared_loop.run(report.look(url, owner="u", app_id="a")).loaded
    finally:
        server.shutdown()
        server.server_close()
    assert len(agents) >= 2 and all(a == AGENT for a in agents), agents
    assert PLATFORM_MARKER in AGENT


class _Refusing:
    """A browser pool that gives no page: busy past its bound, or not starting."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    @contextlib.asynccontextmanager
    async def page(self, url: str, seen: Any = None, **how: Any) -> AsyncIterator[Any]:
        raise self.error
        yield


@pytest.mark.parametrize(
    ("error", "why"),
    [
        (BrowserBusy(90), "not run: the checking browser was busy"),
        (BrowserDidNotStart("no box"), "not run: the browser did not start (no box)"),
    ],
)
def test_a_busy_or_absent_browser_is_not_run(error: Exception, why: str) -> None:
    pytest.importorskip("playwright")
    report = ChromiumReport(_Refusing(error), axe="")  # type: ignore[arg-type]
    seen = shared_loop.run(report.look("http://k.localhost:8001/", owner="u", app_id="a"))
    assert seen == PageLook(why=why)


def test_the_shipped_axe_core_is_the_pinned_one_with_its_licence() -> None:
    head = AXE_FILE.read_text(encoding="utf-8")[:200]
    assert head.startswith("/*! axe v4.14.1") and "Mozilla Public" in head
    static = AXE_FILE.parent
    assert "Mozilla Public License" in (static / "axe-core.LICENSE").read_text()
    assert (static / "axe-core.LICENSE-3RD-PARTY.txt").is_file()
