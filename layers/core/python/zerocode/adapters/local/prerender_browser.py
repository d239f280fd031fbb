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
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from zerocode.adapters.local.browser_pool import BrowserDidNotStart, BrowserPool
from zerocode.adapters.local.browser_shares import BrowserBusy, Tenant
from zerocode.adapters.local.route_crawl import crawl
from zerocode.adapters.local.served_files import DATA_API, Served, ServedFiles
from zerocode.publishing.media_types import media_type
from zerocode.publishing.prerender import MAX_ROUTES, Prerendered

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from playwright.async_api import APIResponse

log = logging.getLogger(__name__)

ORIGIN = "http://prerender.localhost"  # never fetched: every request is answered from files
SECONDS = 30.0  # the whole prerender of one build, the wait for the browser excluded
WAIT_SECONDS = 60.0  # the wait for a context of the kept browser, behind other tenants


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
                        await crawl(page, ORIGIN, done, MAX_ROUTES)
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
