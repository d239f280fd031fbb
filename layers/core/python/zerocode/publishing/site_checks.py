"""The publish report's checks that read the placed output's files (issue 44, point 5): its
pages' tags, its icons and manifest, its compressed copies, its robots.txt, and the links of
its pages. Lighthouse's SEO and best-practices audits, as far as files tell them. Bounded by
publishing/site_files.py; what was not looked at is said in the check's note.
"""

from __future__ import annotations

import json
import posixpath
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from zerocode.publishing.encodings import COMPRESSIBLE, MAX_FILE_BYTES, MIN_BYTES
from zerocode.publishing.media_types import media_type
from zerocode.publishing.publish_report import ReportCheck, failed, passed
from zerocode.publishing.site_files import (
    HEAD_CHARS,
    MAX_ENTRIES,
    MAX_LINKS,
    PAGE_BYTES,
    Page,
    SiteFiles,
    inner_text,
    link_targets,
    own_path,
    page_urls,
    read_start,
    tags,
)

ESTIMATE_BYTES = 64 * 1024  # of a file with no compressed copy, compressed to see if it would gain
ESTIMATE_TOTAL = 4 << 20
MANIFEST_BYTES = 256 * 1024

META_FIX = (
    'Add what is missing to the page\'s <head>: <title>, <meta name="description" '
    'content="…">, <html lang="…">, <meta name="viewport" content="width=device-width, '
    'initial-scale=1">, <meta charset="utf-8">, <meta property="og:title"> and '
    '<meta property="og:description">. The platform adds these to the site\'s index.html '
    "where it lacks them; other pages keep what they have."
)
ICONS_FIX = (
    'Link a favicon (<link rel="icon" href="favicon.svg">), a touch icon (<link '
    'rel="apple-touch-icon" href="apple-touch-icon.png">, 180×180) and a web manifest '
    '(<link rel="manifest" href="site.webmanifest"> naming the app and 192 and 512 pixel '
    "icons) from index.html, each to a file the site has. The platform makes them where the "
    "app has none of its own; a link of the app's to a file it lacks is left as it is."
)
COMPRESSION_FIX = (
    "Keep text files small: a script, style or page over 4 MiB, or a build with more than "
    "16 MiB of text, is sent uncompressed. Split large files, drop what the site does not "
    "use, and keep data out of scripts."
)
CRAWL_FIX = (
    'Let search engines in: remove <meta name="robots" content="noindex"> from the pages '
    "and a robots.txt line 'Disallow: /' for all user agents (the platform writes a robots.txt "
    "that allows everything where the app has none)."
)
LINKS_FIX = (
    "Point each link at a file the site has, or add that file. A path without an extension "
    "(/about) is a route the app's index.html serves, never a broken link."
)


@dataclass(frozen=True)
class Pages:
    """The pages read, and how many were not (past the bound)."""

    read: list[Page]
    unread: int

    def note(self) -> str | None:
        said = []
        if self.unread:
            said.append(
                f"{len(self.read)} page(s) looked at, {self.unread} more not (past the bound)"
            )
        cut = [p.path for p in self.read if p.cut]
        if cut:
            said.append(
                f"{', '.join(cut[:3])}{' …' if len(cut) > 3 else ''} read in its first "
                f"{PAGE_BYTES >> 20} MiB only"
            )
        return "; ".join(said) or None


def check_meta(pages: Pages) -> ReportCheck:
    wrong, seen = [], 0
    for page in pages.read:
        head = page.text[:HEAD_CHARS]
        metas = tags(head, "meta")
        named = {(m.get("name") or m.get("property") or "").lower(): m for m in metas}
        missing = []
        if not (inner_text(head, "title") or ""):
            missing.append("<title>")
        if not (named.get("description", {}).get("content") or "").strip():
            missing.append('<meta name="description">')
        root = tags(head, "html", 1)
        if not (root and (root[0].get("lang") or "").strip()):
            missing.append('<html lang="…">')
        if "width=device-width" not in (named.get("viewport", {}).get("content") or "").lower():
            missing.append('<meta name="viewport" content="width=device-width, …">')
        charset = any("charset" in m for m in metas) or any(
            "charset=" in (m.get("content") or "").lower() for m in metas
        )
        if not charset:
            missing.append("<meta charset>")
        for prop in ("og:title", "og:description"):
            if not (named.get(prop, {}).get("content") or "").strip():
                missing.append(f'<meta property="{prop}">')
        seen += 1
        if missing:
            wrong.append(f"{page.path} lacks {', '.join(missing)}")
    if not seen:
        return failed("meta", ["the site has no HTML page"], META_FIX)
    if wrong:
        return failed("meta", wrong, META_FIX, pages.note())
    return passed(
        "meta",
        f"{seen} page(s) have a title, a description, a language, a "
        "viewport, a charset and Open Graph tags",
        note=pages.note(),
    )


def check_icons(site: SiteFiles, home: Page | None) -> ReportCheck:
    if home is None:
        return failed("icons", ["the site has no index.html"], ICONS_FIX)
    links = tags(home.text[:HEAD_CHARS], "link")

    def linked(*rels: str) -> list[str]:
        return [
            link.get("href", "")
            for link in links
            if set((link.get("rel") or "").lower().split()) & set(rels) and link.get("href")
        ]

    wrong, seen = [], []
    for what, rels, default in (
        ("favicon", ("icon",), "favicon.ico"),
        (
            "touch icon",
            ("apple-touch-icon", "apple-touch-icon-precomposed"),
            "apple-touch-icon.png",
        ),
    ):
        hrefs = linked(*rels)
        if not hrefs:
            if default in site.files:  # browsers ask for it there by themselves
                seen.append(f"{what}: {default}")
            else:
                wrong.append(f"index.html: no {what} linked, and no {default} in the site")
            continue
        target = own_path("/", hrefs[0])
        if target is not None and not site.serves(target):
            wrong.append(f"index.html: the {what} {hrefs[0]} is not in the site")
        else:
            seen.append(f"{what}: {hrefs[0]}")
    manifests = linked("manifest")
    if not manifests:
        wrong.append('index.html: no web manifest linked (<link rel="manifest">)')
    else:
        problem = _manifest(site, manifests[0])
        if problem:
            wrong.append(f"index.html: the manifest {manifests[0]} {problem}")
        else:
            seen.append(f"manifest: {manifests[0]}")
    return failed("icons", wrong, ICONS_FIX) if wrong else passed("icons", *seen)


def _manifest(site: SiteFiles, href: str) -> str | None:
    """What is wrong with the linked manifest, or None."""
    path = own_path("/", href)
    if path is None:
        return None  # another origin's: not the site's to check
    rel = posixpath.normpath(path).lstrip("/")
    if rel not in site.files:
        return "is not in the site"
    data = read_start(site, rel, MANIFEST_BYTES)
    try:
        manifest = json.loads(data or b"")
    except ValueError:
        return "is not JSON"
    if not isinstance(manifest, dict):
        return "is not a JSON object"
    if not (manifest.get("name") or manifest.get("short_name")):
        return "names no app (name, short_name)"
    listed = manifest.get("icons")
    icons: list[Any] = listed[:100] if isinstance(listed, list) else []
    sizes = {s for i in icons if isinstance(i, dict) for s in str(i.get("sizes", "")).split()}
    lacking = [s for s in ("192x192", "512x512") if s not in sizes]
    if lacking:
        return f"has no icon of {' or '.join(lacking)} pixels"
    for icon in icons:
        src = icon.get("src") if isinstance(icon, dict) else None
        target = own_path("/" + rel, str(src)) if src else None
        if target is not None and not site.serves(target):
            return f"names an icon the site does not have ({src})"
    return None


def check_compression(site: SiteFiles) -> ReportCheck:
    """Each text file of the site has a brotli or gzip copy to send (publishing/encodings.py),
    or would gain nothing from one."""
    wrong, copied, budget = [], 0, ESTIMATE_TOTAL
    for path, size in sorted(site.files.items()):
        if media_type(path) not in COMPRESSIBLE or size < MIN_BYTES:
            continue
        if f"{path}.br" in site.encoded or f"{path}.gz" in site.encoded:
            copied += 1
        elif size > MAX_FILE_BYTES:
            wrong.append(f"{path} ({_size(size)}) is over the 4 MiB a file is compressed up to")
        elif budget > 0:
            start = read_start(site, path, min(ESTIMATE_BYTES, budget)) or b""
            budget -= len(start)
            if start and len(zlib.compress(start, 1)) < 0.9 * len(start):
                wrong.append(
                    f"{path} ({_size(size)}) has no compressed copy: the build's text "
                    "is past the 16 MiB compressed per build"
                )
    if wrong:
        return failed("compression", wrong, COMPRESSION_FIX)
    return passed("compression", f"{copied} text file(s) have a brotli or gzip copy")


def _size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"


def check_crawl(site: SiteFiles, pages: Pages) -> ReportCheck:
    wrong = []
    for page in pages.read:
        for meta in tags(page.text[:HEAD_CHARS], "meta"):
            if (meta.get("name") or "").lower() in ("robots", "googlebot") and "noindex" in (
                meta.get("content") or ""
            ).lower():
                wrong.append(f'{page.path}: <meta name="{meta["name"]}"> says noindex')
    if "robots.txt" not in site.files:
        wrong.append("no robots.txt")
    elif _blocks_all((read_start(site, "robots.txt", 64 * 1024) or b"").decode("utf-8", "replace")):
        wrong.append("robots.txt disallows every page to every crawler (Disallow: /)")
    if wrong:
        return failed("crawl", wrong, CRAWL_FIX, pages.note())
    return passed("crawl", "robots.txt lets crawlers in; no page says noindex", note=pages.note())


def _blocks_all(robots: str) -> bool:
    """Whether robots.txt has ``Disallow: /`` in a group for every user agent (``*``)."""
    agents: list[str] = []
    in_rules = False
    for raw in robots.splitlines()[:2000]:
        line = raw.split("#", 1)[0].strip()
        key, _, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if key == "user-agent":
            if in_rules:
                agents, in_rules = [], False
            agents.append(value)
        elif key in ("allow", "disallow"):
            in_rules = True
            if key == "disallow" and value == "/" and "*" in agents:
                return True
    return False


@dataclass(frozen=True)
class Link:
    """A link of the site's own: where it was first seen (its page → as written) and the
    paths it may lead to (a page reached at /about/ and at /about resolves a relative link
    two ways: reachable either way is not broken, never a false failure)."""

    where: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class Links:
    """The site's own links by their first path, and how many more were not looked up."""

    found: dict[str, Link]
    unchecked: int = 0


def page_links(pages: Pages, origin: str | None) -> Links:
    found: dict[str, Link] = {}
    unchecked = 0
    for page in pages.read:
        for written in link_targets(page):
            paths = tuple(
                dict.fromkeys(
                    p for url in page_urls(page.path) if (p := own_path(url, written, origin))
                )
            )
            if not paths or paths[0] in found:
                continue
            if len(found) >= MAX_LINKS:
                unchecked += 1
                continue
            found[paths[0]] = Link(f"{page.path} → {written.strip()[:200]}", paths)
    return Links(found, unchecked)


def broken_links(site: SiteFiles, links: Links) -> list[str]:
    """Where each link that reaches nothing the site serves is (its page → as written)."""
    return [
        f"{link.where} (not in the site)"
        for link in links.found.values()
        if not any(site.serves(path) for path in link.paths)
    ]


def check_links(
    site: SiteFiles,
    pages: Pages,
    origin: str | None,
    rendered: tuple[str, ...] = (),
    failed_requests: tuple[str, ...] = (),
) -> ReportCheck:
    """The links of the pages' files, then (the browser's part) those of the rendered home
    page (URLs) and its requests that failed ("path (HTTP 404)"), each broken one named
    once."""
    links = page_links(pages, origin)
    wrong = broken_links(site, links)
    known = {path for link in links.found.values() for path in link.paths}
    for url in rendered:
        path = own_path("/", url, origin)
        if path is None or path in known:
            continue
        known.add(path)
        if not site.serves(path):
            wrong.append(f"home page (rendered) → {path} (not in the site)")
    for request in failed_requests:
        path = unquote(request.rsplit(" (HTTP ", 1)[0])
        if not (path in known and not site.serves(path)):  # else named above already
            wrong.append(f"home page requested {request}")
    notes = [n for n in (pages.note(), _unchecked(links.unchecked), _unwalked(site)) if n]
    note = "; ".join(notes) or None
    if wrong:
        return failed("links", list(dict.fromkeys(wrong)), LINKS_FIX, note)
    return passed("links", f"{len(known)} link(s) reach the site's files", note=note)


def _unchecked(n: int) -> str | None:
    return f"{n} more link(s) not looked up (past {MAX_LINKS})" if n else None


def _unwalked(site: SiteFiles) -> str | None:
    said = []
    if site.unwalked:
        said.append(f"{site.unwalked} file(s) past the first {MAX_ENTRIES} not looked at")
    if site.linked:
        said.append(f"{len(site.linked)} symbolic link(s) in the output, served to no visitor")
    return "; ".join(said) or None
