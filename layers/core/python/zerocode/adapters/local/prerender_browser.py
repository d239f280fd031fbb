"""A Vue site's routes rendered in the checking browser before the build is placed (issue 44,
point 3; the output's part is publishing/prerender.py).

The output is not served by anything yet: the context's confinement answers every request of
its origin from the output's directory (:class:`DirFiles`), so the app's code reaches nothing
but its own built files (no data API, no other origin: the confinement aborts those, as in
every check). The context is the kept browser's, taken in the app owner's turn among tenants
(:mod:`.browser_shares`), so a hostile app's prerender costs its owner's share, and it is held
at most :data:`SECONDS`. From ``/``, each route the rendered pages link to is loaded in turn,
breadth first, at most :data:`MAX_ROUTES`. A page that throws, does not load, or leaves the
mount point empty is not kept; a page is never worse than the app's own ``index.html``, which
every other path still gets.

Best effort: a busy or absent browser, or a failure of the browser's, means no page is
prerendered and the build goes on as built, which the build's log says.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from zerocode.adapters.local.browser_pool import BrowserDidNotStart, BrowserPool
from zerocode.adapters.local.browser_shares import BrowserBusy, Tenant
from zerocode.adapters.local.page_traffic import Traffic
from zerocode.adapters.local.served_files import DATA_API, Served, ServedFiles
from zerocode.publishing.media_types import media_type
from zerocode.publishing.prerender import (
    MAX_PAGE_BYTES,
    MAX_ROUTES,
    Prerendered,
    Rendered,
    route_of,
)

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from playwright.async_api import APIResponse, Page

log = logging.getLogger(__name__)

ORIGIN = "http://prerender.localhost"  # never fetched: every request is answered from files
SECONDS = 30.0  # the whole prerender of one build, the wait for the browser excluded
WAIT_SECONDS = 60.0  # the wait for a context of the kept browser, behind other tenants
LOAD_MS = 10_000  # one route's load event
SETTLE_MS = 2_000  # after load, until no request is in flight for QUIET_MS
QUIET_MS = 100

_READ = """(most) => {
  const mounted = document.querySelector("[data-v-app]") || document.querySelector("#app");
  const links = Array.from(document.querySelectorAll("a[href]")).slice(0, 500).map((a) => a.href);
  const html = document.documentElement.outerHTML;
  return { filled: !!(mounted && mounted.children.length), links,
           html: html.length <= most ? html : null };
}"""


class DirFiles(ServedFiles):
    """The output's own files, answered from its directory as the sites server would (a
    directory's or an extension-less path's ``index.html``); nothing else, never fetched."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root.resolve()

    async def get(
        self, method: str, target: str, fetch: Callable[[], Awaitable[APIResponse | None]]
    ) -> Served | APIResponse | None:
        path = unquote(urlsplit(target).path)
        if method != "GET" or path.startswith(DATA_API):
            return Served(404, {"content-type": "text/plain"}, b"not while prerendering")
        found = await asyncio.to_thread(self._read, path.lstrip("/"))
        if found is None:
            return Served(404, {"content-type": "text/plain"}, b"not found")
        name, body = found
        return Served(200, {"content-type": media_type(name)}, body)

    def _read(self, rel: str) -> tuple[str, bytes] | None:
        try:
            target = (self.root / rel).resolve() if rel else self.root
            if target != self.root and self.root not in target.parents:
                return None
            if target.is_dir():
                target = target / "index.html"
            elif not target.exists() and "." not in rel.rsplit("/", 1)[-1]:
                target = self.root / "index.html"
            if not target.is_file() or target.is_symlink():
                return None
            return target.name, target.read_bytes()
        except (OSError, ValueError):
            return None


class BrowserPrerender:
    """Prerender a built Vue output in the kept browser (see the module)."""

    def __init__(self, browsers: BrowserPool) -> None:
        self.browsers = browsers

    async def render(self, root: Path, owner: str, app_id: str) -> Prerendered:
        done = Prerendered()
        tenant = Tenant(owner, app_id)
        try:
            async with self.browsers.page(
                ORIGIN + "/", tenant=tenant, wait=WAIT_SECONDS, files=DirFiles(root)
            ) as page:
                try:
                    async with asyncio.timeout(SECONDS):
                        await _crawl(page, done)
                except TimeoutError:
                    done.note = f"stopped after {SECONDS:g} s"
        except BrowserBusy as exc:
            done.note = f"not prerendered: {exc}"
        except BrowserDidNotStart as exc:
            done.note = f"not prerendered: no browser ({exc})"
        except Exception as exc:  # the browser's trouble, never the build's failure
            log.warning("prerender abandoned: %s", type(exc).__name__)
            done.note = f"not prerendered: the browser failed ({type(exc).__name__})"
        return done


async def _crawl(page: Page, done: Prerendered) -> None:
    """Load ``/`` and then every route the kept pages link to, breadth first, into ``done``."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)[:200]))
    traffic = Traffic(page)
    queue, seen = ["/"], {"/"}
    while queue and len(done.pages) < MAX_ROUTES:
        route = queue.pop(0)
        errors.clear()
        read = await _load(page, traffic, route)
        if read is None or errors or not read.get("filled") or not read.get("html"):
            why = errors[0] if errors else "it did not load, or rendered nothing"
            if route == "/":
                done.note = f"not prerendered: the home page failed ({why})"
                return
            continue
        done.pages.append(Rendered(route, str(read["html"])))
        for href in read.get("links") or []:
            found = route_of(str(href), ORIGIN)
            if found is not None and found not in seen:
                seen.add(found)
                queue.append(found)


async def _load(page: Page, traffic: Traffic, route: str) -> dict[str, Any] | None:
    from playwright.async_api import Error as PlaywrightError

    try:
        response = await page.goto(ORIGIN + route, wait_until="load", timeout=LOAD_MS)
    except PlaywrightError:
        return None
    if response is None or not response.ok:
        return None
    await traffic.settled(QUIET_MS, SETTLE_MS)
    try:
        read = await asyncio.wait_for(page.evaluate(_READ, MAX_PAGE_BYTES // 2), 5.0)
    except (TimeoutError, PlaywrightError):
        return None
    return read if isinstance(read, dict) else None
