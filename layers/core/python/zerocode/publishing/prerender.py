"""A Vue site's routes as static HTML (issue 44, point 3): what a crawler without JavaScript
sees, and what a visitor sees before the app's script has run.

The browser's part (loading each route of the built output in the confined checking browser
and reading its DOM) is the adapter's (adapters/local/prerender_browser.py). This module is
the output's part, with no browser and no I/O beyond the build's own directory:

- :func:`with_base`: a Vue build's page gets a ``<base>`` naming the site's root, so its
  relative asset URLs (Vite's ``base: './'``) and the history router's base hold at every
  depth (``/about``, ``/about/``, ``/notes/5``). On a site of its own origin that is
  ``<base href="/">``; under the shared-origin path scheme (``/sites/{key}/``) a one-line
  script computes it from the address, since the key is not the build's to know.
- :func:`route_of`: which link of a rendered page is a route worth prerendering: the site's
  own paths, no extension, no reserved or climbing segment, bounded in length and depth.
- :func:`place`: the rendered pages written as ``{route}/index.html`` (the home page over
  ``index.html``), the app's unrendered page kept as :data:`SHELL` for every other path.

What a page holds is the app's own DOM as its own code made it (untrusted, like the rest of
the output): it is written as the site's file and never read by the platform again, except
by the sitemap's listing of names and the compression of its bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit

SHELL = ".shell.html"  # the app's page as built: what a path with no prerendered page gets
MAX_ROUTES = 30  # pages rendered per build, the home page included
MAX_PAGE_BYTES = 2 << 20  # a rendered page larger than this is not kept
MAX_DEPTH = 6  # segments of a route
_SEGMENT = re.compile(r"^[A-Za-z0-9_~\-\u00a0-\uffff]+$")  # no dot: a dot names a file
_RESERVED = {"_api", "assets", ".encoded"}
_BASE = re.compile(rb"<base\b", re.IGNORECASE)
_HEAD = re.compile(rb"<head\b[^<>]*>", re.IGNORECASE)
# Under the path scheme the root is the address's first two segments.
_PATH_SCHEME_BASE = (
    b"<script>(function(){var m=/^\\/(?:sites|preview)\\/[^\\/]+\\//.exec(location.pathname);"
    b"var b=document.createElement('base');b.href=m?m[0]:'/';"
    b"document.head.insertBefore(b,document.head.firstChild)})()</script>"
)


@dataclass(frozen=True)
class Rendered:
    """One route as the browser rendered it: its path (``/``, ``/about``) and document."""

    route: str
    html: str


@dataclass
class Prerendered:
    """What a prerender gave: the pages, and why it stopped short if it did (for the log)."""

    pages: list[Rendered] = field(default_factory=list)
    note: str = ""


class Prerenderer(Protocol):
    """Renders a built output's routes in a browser (adapters/local/prerender_browser.py),
    in the turn of the app's owner among the browser's tenants."""

    async def render(self, root: Path, owner: str, app_id: str) -> Prerendered: ...


def with_base(root: Path, *, own_origin: bool = True) -> bool:
    """Give ``root``'s ``index.html`` a ``<base>`` naming the site's root, unless it has one;
    whether it was added."""
    index = root / "index.html"
    if not index.is_file() or index.is_symlink():
        return False
    page = index.read_bytes()
    head = _HEAD.search(page[:65536])
    if head is None or _BASE.search(page[:65536]):
        return False
    tag = b'<base href="/">' if own_origin else _PATH_SCHEME_BASE
    index.write_bytes(page[: head.end()] + tag + page[head.end() :])
    return True


def route_of(href: str, origin: str) -> str | None:
    """The route a link of a rendered page names, if it is one of the site's to prerender:
    same origin, a path (no query or hash of its own), every segment a plain name, the last
    without an extension; None otherwise."""
    try:
        parts = urlsplit(href)
    except ValueError:
        return None
    if f"{parts.scheme}://{parts.netloc}" != origin:
        return None
    if "%2f" in parts.path.lower() or "%5c" in parts.path.lower():
        return None  # a separator in a name: not the path it would be written as
    path = unquote(parts.path or "/")
    if path == "/":
        return "/"
    segments = path.strip("/").split("/")
    if len(path) > 200 or len(segments) > MAX_DEPTH or segments[0] in _RESERVED:
        return None
    if not all(_SEGMENT.match(s) for s in segments):
        return None  # a file, a climbing or an empty segment: not a route
    return "/" + "/".join(segments)


def file_of(route: str) -> str:
    """The output file a route's page is written to."""
    return "index.html" if route == "/" else f"{route.strip('/')}/index.html"


def place(root: Path, pages: list[Rendered]) -> list[str]:
    """Write the rendered ``pages`` into the output at ``root``: the built page is kept as
    :data:`SHELL` first, then each page as its route's ``index.html`` where no file of the
    app's is there already (the app's own file wins). The routes written, home first."""
    index = root / "index.html"
    if not pages or not index.is_file() or index.is_symlink():
        return []
    shell = root / SHELL
    if not shell.exists():
        shell.write_bytes(index.read_bytes())
    written: list[str] = []
    for page in pages:
        data = ("<!DOCTYPE html>\n" + page.html).encode("utf-8", "replace")
        if len(data) > MAX_PAGE_BYTES:
            continue
        target = root / file_of(page.route)
        if page.route != "/" and (target.exists() or _blocked(root, target)):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(page.route)
    return written


def _blocked(root: Path, target: Path) -> bool:
    """Whether writing ``target`` would go through something of the app's other than a
    directory (a file named like the route's folder, a link): then the route is not
    prerendered, and the app's file stays."""
    base = root.resolve()
    here = target.parent
    while here != root and here != here.parent:
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            return True
        here = here.parent
    return base not in target.parent.resolve().parents and target.parent.resolve() != base


def rendered_pages(root: Path) -> list[Path]:
    """A prerendered output's pages other than ``index.html``: its shell and its routes'
    pages, at most as many as a prerender writes (an app's own nested pages may be among
    them: they are pages of the site all the same)."""
    found = [root / SHELL] if (root / SHELL).is_file() else []
    for page in sorted(root.glob("**/index.html")):
        if len(found) > MAX_ROUTES:
            break
        if page.parent != root and not page.is_symlink():
            found.append(page)
    return found


ROUTES_BYTES = 1000  # a deploy's routes as the sites' router reads them: one 1 KB value


def routes_value(routes: list[str]) -> str:
    """A deploy's prerendered routes as the sites' routers read them (site_router.js from
    the KeyValueStore, the edge router from the pointer table): names without their leading
    "/", space-separated, as many as fit in :data:`ROUTES_BYTES` (a route left out gets the
    shell, as any path with no page); "" when there is none."""
    kept, size = [], 0
    for route in routes:
        name = route.strip("/")
        if not name or " " in name:
            continue
        size += len(name.encode()) + 1
        if size > ROUTES_BYTES:
            break
        kept.append(name)
    return " ".join(kept)
