"""A published build's output read for its report (issue 44, point 5): which files it has,
its HTML pages, their tags and links, and whether a link reaches something the site serves.

The output is the app's, perhaps a hostile one's, so the work is bounded whatever it holds:
at most :data:`MAX_ENTRIES` entries walked (never through a symbolic link: a link is no file
of the site, and nothing outside the output is opened), :data:`MAX_PAGES` pages read, each
only in its first :data:`PAGE_BYTES`, and :data:`MAX_LINKS` distinct targets looked up. The
lookups are in the walk's own index, never on the file system, and follow the sites server's
rules (``http/sites.py``): a directory serves its ``index.html``, a path whose last segment
has no extension is a route the app's ``index.html`` serves (never broken), ``/_api/`` is the
platform's own, and ``.encoded/`` is nothing a visitor can fetch.
"""

from __future__ import annotations

import html
import os
import posixpath
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from zerocode.publishing.encodings import ENCODED_DIR

MAX_ENTRIES = 6_000  # files and directories walked (a build holds at most 5,000)
MAX_DEPTH = 24
MAX_PAGES = 50  # HTML pages read
PAGE_BYTES = 1 << 20  # read of each page
PAGES_BYTES = 8 << 20  # read of all pages together
HEAD_CHARS = 64 * 1024  # where a page's head tags are looked for (as site_head does)
MAX_LINKS = 2_000  # distinct link targets looked up
API_DIR = "_api"  # the platform's data API on every app's origin (http/app_api.py)
_BASE = "http://site.invalid/"  # links are resolved as URLs against this stand-in origin

_LINKED = re.compile(
    r"<(a|area|link|script|img|source|iframe|video|audio|embed|track|image|use)\b([^<>]*)>",
    re.I,
)
_ATTR = re.compile(
    r"""([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'<>`]+)))?""",
)
_URL_ATTRS = ("href", "src", "srcset", "xlink:href", "poster")
_INERT = ("script", "style", "template", "textarea")  # their text holds no links of the page


@dataclass
class SiteFiles:
    """The output's regular files (path → bytes), its directories and the compressed copies
    under ``.encoded/``, as far as the walk went."""

    root: Path
    files: dict[str, int] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=lambda: {""})
    encoded: set[str] = field(default_factory=set)  # paths under .encoded/, without it
    linked: set[str] = field(default_factory=set)  # symbolic links (never followed, never read)
    unwalked: int = 0  # entries past the bound, not looked at

    def serves(self, path: str) -> bool:
        """Whether the site answers ``path`` (a URL path, decoded) with a file, as the sites
        server does: a directory's index.html, a route's index.html, the platform's API."""
        rel = posixpath.normpath("/" + path).lstrip("/")
        first = rel.split("/", 1)[0]
        if first == API_DIR:
            return True  # the platform answers /_api/ on every app's origin
        if first == ENCODED_DIR or self._through_link(rel):
            return False  # the sites server resolves a link, and refuses what leaves the root
        if rel in self.dirs:
            return posixpath.join(rel, "index.html").lstrip("/") in self.files
        if rel in self.files:
            return True
        return "." not in rel.rsplit("/", 1)[-1] and "index.html" in self.files

    def _through_link(self, rel: str) -> bool:
        parts = rel.split("/")
        return any("/".join(parts[: n + 1]) in self.linked for n in range(len(parts)))

    def pages(self) -> list[str]:
        """The HTML pages, the home page first, then by path."""
        found = [p for p in self.files if p.lower().endswith((".html", ".htm"))]
        return sorted(found, key=lambda p: (p != "index.html", p.count("/"), p))


def walk(root: Path) -> SiteFiles:
    """The output at ``root``, walked without following any link, within the bounds."""
    site = SiteFiles(root)
    todo: list[tuple[str, int]] = [("", 0)]
    seen = 0
    while todo:
        rel, depth = todo.pop()
        try:
            entries = list(os.scandir(root / rel if rel else root))
        except OSError:
            continue
        for entry in sorted(entries, key=lambda e: e.name):
            seen += 1
            if seen > MAX_ENTRIES:
                site.unwalked += 1
                continue
            path = f"{rel}/{entry.name}" if rel else entry.name
            try:
                if entry.is_symlink():
                    site.linked.add(path)
                elif entry.is_dir(follow_symlinks=False):
                    if depth < MAX_DEPTH:
                        site.dirs.add(path)
                        todo.append((path, depth + 1))
                elif entry.is_file(follow_symlinks=False):
                    size = entry.stat(follow_symlinks=False).st_size
                    if path.startswith(ENCODED_DIR + "/"):
                        site.encoded.add(path[len(ENCODED_DIR) + 1 :])
                    else:
                        site.files[path] = size
            except OSError:
                continue
    return site


def read_start(site: SiteFiles, rel: str, most: int) -> bytes | None:
    """The first ``most`` bytes of a regular file of the walk, never through a link."""
    if rel not in site.files and rel.split("/", 1)[0] != ENCODED_DIR:
        return None
    try:
        fd = os.open(site.root / rel, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], most
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Page:
    path: str  # in the output
    text: str  # its first PAGE_BYTES, decoded
    cut: bool  # it is longer than what was read


def read_pages(site: SiteFiles) -> tuple[list[Page], int]:
    """The pages read (at most MAX_PAGES, PAGES_BYTES in all), and how many were not."""
    pages, budget = [], PAGES_BYTES
    names = site.pages()
    for rel in names[:MAX_PAGES]:
        if budget <= 0:
            break
        data = read_start(site, rel, min(PAGE_BYTES, budget))
        if data is None:
            continue
        budget -= len(data)
        pages.append(Page(rel, data.decode("utf-8", "replace"), site.files[rel] > len(data)))
    return pages, len(names) - len(pages)


def attributes(inside: str) -> dict[str, str]:
    """A tag's attributes (names lower-cased, values unescaped); the first of a name wins."""
    found: dict[str, str] = {}
    for match in _ATTR.finditer(inside):
        name = match.group(1).lower()
        value = next((g for g in match.groups()[1:] if g is not None), "")
        found.setdefault(name, html.unescape(value))
    return found


def tags(text: str, name: str, limit: int = 200) -> list[dict[str, str]]:
    """The attributes of the first ``limit`` ``<name …>`` tags of ``text``."""
    pattern = re.compile(rf"<{re.escape(name)}\b([^<>]*)>", re.I)
    found = []
    for n, match in enumerate(pattern.finditer(text)):
        if n >= limit:
            break
        found.append(attributes(match.group(1)))
    return found


def inner_text(text: str, name: str) -> str | None:
    """The text of the first ``<name>`` element (tags dropped), None when there is none."""
    opening = re.search(rf"<{re.escape(name)}\b[^<>]*>", text, re.I)
    if opening is None:
        return None
    end = text.lower().find(f"</{name}", opening.end(), opening.end() + 8192)
    inner = text[opening.end() : end if end >= 0 else opening.end()]
    return " ".join(html.unescape(re.sub(r"<[^<>]*>", " ", inner)).split())


def markup(text: str) -> str:
    """The page without its comments and the text of its scripts, styles and templates
    (what they hold is no link of the page), in one pass."""
    out, at, low = [], 0, text.lower()
    while at < len(text):
        start = low.find("<", at)
        if start < 0:
            out.append(text[at:])
            break
        out.append(text[at:start])
        if low.startswith("<!--", start):
            end = low.find("-->", start + 4)
            at = len(text) if end < 0 else end + 3
            continue
        inert = next((n for n in _INERT if re.match(rf"<{n}\b", low[start : start + 12])), None)
        if inert is None:
            out.append("<")
            at = start + 1
            continue
        # Each search either moves past what it found or ends the pass: linear in the page.
        opened = low.find(">", start)
        if opened < 0:
            out.append(text[start:])
            break
        out.append(text[start : opened + 1])
        end = low.find(f"</{inert}", opened + 1)
        at = len(text) if end < 0 else end
    return "".join(out)


def link_targets(page: Page) -> Iterator[str]:
    """The URLs the page's tags name (href, src, each srcset candidate), as written."""
    for match in _LINKED.finditer(markup(page.text)):
        found = attributes(match.group(2))
        for name in _URL_ATTRS:
            value = found.get(name)
            if not value:
                continue
            if name == "srcset":
                yield from (c.split()[0] for c in value.split(",") if c.split())
            else:
                yield value


def own_path(page_url: str, written: str, origin: str | None = None) -> str | None:
    """The path (decoded) a link written on the page at ``page_url`` (a path of the site)
    leads to when it stays on the site; None for another origin, a fragment of the same
    page, or a scheme that is no request of the site (mailto:, data:, javascript:, tel:)."""
    written = written.strip()
    if not written or written.startswith("#") or len(written) > 2048:
        return None
    try:
        parts = urlsplit(written)
        if parts.scheme and parts.scheme.lower() not in ("http", "https"):
            return None
        if parts.netloc:
            mine = origin is not None and _origin(written) == origin
            if not mine:
                return None
            written = parts._replace(scheme="", netloc="").geturl() or "/"
        return unquote(urlsplit(urljoin(_BASE + page_url.lstrip("/"), written)).path)
    except ValueError:
        return None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port}"


def origin_of(url: str) -> str | None:
    """``scheme://host:port`` of the site's address, or None when not known."""
    try:
        return _origin(url) if url and urlsplit(url).hostname else None
    except ValueError:
        return None


def page_urls(path: str) -> list[str]:
    """Where visitors reach a page of the output: ``about/index.html`` at ``/about/`` and at
    ``/about`` (a router's link, served the same page), ``x.html`` at ``/x.html``."""
    if path == "index.html":
        return ["/"]
    if path.endswith("/index.html"):
        folder = "/" + path[: -len("index.html")]
        return [folder, folder.rstrip("/")]
    return ["/" + path]
