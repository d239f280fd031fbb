"""A built site's routes read in a browser page, for prerendering (issue 44, point 3): from
``/``, each route the rendered pages link to, breadth first (publishing/prerender.py decides
which links are routes). Shared by the local prerender (:mod:`.prerender_browser`, the kept
browser) and the AWS build box (zerocode.buildbox.browser, its own browser); the page's
context is confined to the site's origin by the caller."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from zerocode.adapters.local.page_traffic import Traffic
from zerocode.publishing.prerender import (
    MAX_PAGE_BYTES,
    MAX_ROUTES,
    Prerendered,
    Rendered,
    route_of,
)

if TYPE_CHECKING:
    from playwright.async_api import Page

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


async def crawl(page: Page, origin: str, done: Prerendered, most: int = MAX_ROUTES) -> None:
    """Load ``origin``'s ``/`` in ``page`` (of a context confined to it), then every route
    the kept pages link to, breadth first, at most ``most``, into ``done``."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)[:200]))
    traffic = Traffic(page)
    queue, seen = ["/"], {"/"}
    while queue and len(done.pages) < most:
        route = queue.pop(0)
        errors.clear()
        read = await _load(page, traffic, origin + route)
        if read is None or errors or not read.get("filled") or not read.get("html"):
            why = errors[0] if errors else "it did not load, or rendered nothing"
            if route == "/":
                done.note = f"not prerendered: the home page failed ({why})"
                return
            continue
        done.pages.append(Rendered(route, str(read["html"])))
        for href in read.get("links") or []:
            found = route_of(str(href), origin)
            if found is not None and found not in seen:
                seen.add(found)
                queue.append(found)


async def _load(page: Page, traffic: Traffic, url: str) -> dict[str, Any] | None:
    from playwright.async_api import Error as PlaywrightError

    try:
        response = await page.goto(url, wait_until="load", timeout=LOAD_MS)
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
