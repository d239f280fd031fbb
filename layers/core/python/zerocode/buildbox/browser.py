"""The runtime check and the cover, inside the build, on the build's own output.

The output is served on loopback by a small static server of this process and opened in
the image's Chromium exactly as the local runtime check opens a preview
(:func:`zerocode.adapters.local.chromium_check.inspect`): a context that fetches only that
origin on the driver's side and aborts everything else. What differs is the box around the
browser. Lambda compute has no user namespaces and no setuid helper, so there is no
bubblewrap and no Chromium sandbox (``--no-sandbox``); instead every request the browser
itself would send (prefetch, preconnect, DNS, a routing miss) goes to a proxy on a port
nothing listens on, loopback included, and WebRTC's UDP is held to that proxy too. What a
renderer that escaped would reach is this build: its own source and output, and the
CodeBuild service role, which may write this project's logs and pull its image, nothing
else (docs/builds.md, "Limitations of AWS Lambda compute").
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import tempfile
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zerocode.adapters.local.chromium import (
    VIEWPORT,
    Scratch,
    confined,
    confined_context,
    launch_args,
    origin_of,
    playwright_installed,
    scratch_spaces,
)
from zerocode.adapters.local.chromium_access import PROBE_SECONDS, access_problems
from zerocode.adapters.local.chromium_check import GIVE_UP_SECONDS, Findings, inspect
from zerocode.adapters.local.route_crawl import crawl
from zerocode.buildbox.box_data import BoxSite, served_with_data
from zerocode.data.model import DataModel
from zerocode.publishing.media_types import media_type
from zerocode.publishing.prerender import Prerendered, Rendered

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

PRERENDER = 30.0  # seconds a site's routes may take, as in a local build (prerender_browser)
DEAD_PROXY = "http://127.0.0.1:9"  # the discard port: nothing listens there in a build
BOX_ARGS = [
    "--no-sandbox",  # no user namespaces in Lambda compute: see the module's doc
    "--no-zygote",
    f"--proxy-server={DEAD_PROXY}",
    "--proxy-bypass-list=<-loopback>",  # loopback too goes to the dead proxy
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
]


@dataclass(frozen=True, kw_only=True)
class Checked:
    checked: bool  # False: the page could not be checked (the browser's trouble, not the page's)
    problems: list[str]
    blocked: int  # requests elsewhere the confinement aborted
    note: str = ""  # why it was not checked
    browser: str = ""  # the browser that looked, with its version ("Chromium 156.0…")
    pages: list[Rendered] = field(default_factory=list)  # a site's routes, prerendered
    prerender_note: str = ""  # why the prerender stopped short, if it did

    def as_json(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "problems": self.problems,
            "blocked": self.blocked,
            "note": self.note,
            "browser": self.browser,
        }


class _Site(SimpleHTTPRequestHandler):
    """The built site's own files: nothing the site links to elsewhere in the box is served
    (a link, or a path that resolves outside the site, is a 404), and nothing is logged.
    Types are the platform's table, as the sites serve them, not the image's."""

    def guess_type(self, path: str | os.PathLike[str]) -> str:
        return media_type(os.fspath(path))

    def send_head(self) -> Any:
        root = os.path.realpath(self.directory)
        path = self.translate_path(self.path)
        last = self.path.split("?", 1)[0].split("#", 1)[0].rsplit("/", 1)[-1]
        if not os.path.exists(path) and last and "." not in last:
            path = os.path.join(root, "index.html")  # a client-side route, as the sites serve it
            self.path = "/index.html"
        real = os.path.realpath(path)
        if os.path.islink(path) or (real != root and not real.startswith(root + os.sep)):
            self.send_error(404)
            return None
        return super().send_head()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def served(site: Path) -> Iterator[str]:
    """``site`` on a free loopback port, for as long as the block runs: its URL."""
    handler = functools.partial(_Site, directory=str(site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class DataOf:
    """A data app's build: its data model file, from the source the platform sent."""

    app_id: str
    build_id: str
    model: bytes


def check_site(
    site: Path,
    executable: str,
    *,
    vue: bool,
    cover: Path | None,
    data: DataOf | None = None,
    prerender: bool = False,
) -> Checked:
    """Check the built ``site`` and, if ``cover`` is given, save its screenshot there. A
    data app's page is served beside the box's own data API (box_data.py) and its data's
    access rules are probed as the platform probes a preview's. ``prerender``: a site's
    routes are then rendered too (issue 44; the caller places them)."""
    if not playwright_installed():
        return Checked(checked=False, problems=[], blocked=0, note="no Playwright in the image")
    try:
        if data is None:
            with served(site) as url:
                return _run(url, executable, vue=vue, cover=cover, box=None, pages=prerender)
        with served_with_data(site, data.app_id, data.build_id, data.model) as box:
            return _run(box.url, executable, vue=vue, cover=cover, box=box, pages=prerender)
    except Exception as exc:  # the browser's (or the box's server's) trouble, not the page's
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Checked(checked=False, problems=[], blocked=0, note=why[:300])


def _run(
    url: str,
    executable: str,
    *,
    vue: bool,
    cover: Path | None,
    box: BoxSite | None,
    pages: bool = False,
) -> Checked:
    bound = GIVE_UP_SECONDS + (2 * PROBE_SECONDS if box else 0) + (PRERENDER if pages else 0)
    return asyncio.run(
        asyncio.wait_for(_check(url, executable, vue=vue, cover=cover, box=box, pages=pages), bound)
    )


async def _check(
    url: str,
    executable: str,
    *,
    vue: bool,
    cover: Path | None,
    box: BoxSite | None = None,
    pages: bool = False,
) -> Checked:
    findings = Findings(origin=origin_of(url))
    access: list[str] = []
    async with box_browser(url, executable) as browser:
        looked = f"Chromium {browser.version}"
        page = await inspect(browser, url, findings, vue=vue)
        if page is not None and cover is not None:
            await page.set_viewport_size(VIEWPORT)  # type: ignore[arg-type]
            await page.screenshot(path=str(cover), type="png")
        if findings.checked and box is not None and box.model is not None:
            access = await _access(browser, url, box, box.model)
        rendered = await _prerender(browser, url) if pages and findings.checked else None
    note = "" if findings.checked else "the page could not be loaded from the build's server"
    return Checked(
        checked=findings.checked,
        problems=[*findings.result(), *access] if findings.checked else [],
        blocked=len(findings.blocked),
        note=note,
        browser=looked,
        pages=rendered.pages if rendered is not None else [],
        prerender_note=rendered.note if rendered is not None else "",
    )


async def _prerender(browser: Browser, url: str) -> Prerendered:
    """The site's routes rendered in a context of their own, confined as the check's is, at
    most :data:`PRERENDER` seconds (what was rendered by then is kept)."""
    done = Prerendered()
    context = await confined(browser, url)
    try:
        page = await context.new_page()
        async with asyncio.timeout(PRERENDER):
            await crawl(page, origin_of(url), done)
    except TimeoutError:
        done.note = f"stopped after {PRERENDER:g} s"
    except Exception as exc:  # the browser's trouble: the site is published unprerendered
        done.note = f"not prerendered: {type(exc).__name__}"
    finally:
        with contextlib.suppress(Exception):
            await context.close()
    return done


@contextlib.asynccontextmanager
async def box_browser(url: str, executable: str) -> AsyncIterator[Browser]:
    """The image's Chromium, launched as the box confines it (:data:`BOX_ARGS`), closed
    when the block ends."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=executable,
            headless=True,
            args=[*launch_args(url), *BOX_ARGS],
            chromium_sandbox=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tempfile.gettempdir()},
        )
        try:
            yield browser
        finally:
            with contextlib.suppress(Exception):
                await browser.close()


def page_opener(
    browser: Browser, url: str
) -> Callable[[Scratch | None], AbstractAsyncContextManager[Page]]:
    """What opens a page of ``url`` in a fresh context of ``browser``, confined as the
    runtime check's (its data API requests in the given scratch space), closed after."""

    @contextlib.asynccontextmanager
    async def open_page(shared: Scratch | None) -> AsyncIterator[Page]:
        context, confinement = await confined_context(browser)
        confinement.aim(url, scratch=shared)
        try:
            yield await context.new_page()
        finally:
            with contextlib.suppress(Exception):
                await context.close()

    return open_page


async def _access(browser: Browser, url: str, box: BoxSite, model: DataModel) -> list[str]:
    """The platform's access probe, each visitor in a fresh confined context of this
    browser, each probe in a scratch space of the box's store."""
    made = scratch_spaces(box.backend)
    return await access_problems(page_opener(browser, url), url, model, lambda: made(box.app_id))
