"""What a published page needs that its app may have left out (issue 44, point 1), added when
a build's output is placed: ``<html lang>``, a charset, a viewport, a ``<title>``, a meta
description (the app's request, or its own first paragraph), Open Graph and Twitter tags, a
theme colour, a favicon (SVG and ICO), a touch icon and a web manifest, the icons drawn from
the app's name and its own colour. Never over what the app set itself: a tag or a file the
app has is left as it is. The HTML is the app's (perhaps a hostile one's): it is only read
with bounded patterns, and what is written into it is escaped.

(``SiteMeta``, what the platform knows of the app, is in publishing/builds.py with the job
that carries it: the build box imports that module and has no Pillow.)
"""

from __future__ import annotations

import colorsys
import hashlib
import html
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from zerocode.publishing.builds import SiteMeta

MAX_PAGE_BYTES = 2 * 1024 * 1024  # a larger page is left as it is
# What is read of a page to see what it has: its head, and the start of its body (a
# hostile page's unclosed tags cost the patterns at most this much each).
SCAN_CHARS = 64 * 1024
MAX_CSS_BYTES = 512 * 1024  # of CSS read for the app's colour
DESCRIPTION_CHARS = 155
_TRIGGER = re.compile(r"\[\[[^\]\n]*\]\]")
_HEAD = re.compile(r"<head\b[^<>]*>", re.I)
_HTML = re.compile(r"<html\b[^<>]*>", re.I)
_CHARSET = re.compile(r"<meta\b[^<>]*\bcharset\s*=[^<>]*>", re.I)
# Every pattern stops at the next "<" or ">": linear in the page, however it is written.
_TAG = re.compile(r"<[^<>]*>")
WINDOW = 8192  # how far an element's closing tag is looked for
_HEX = re.compile(r"#([0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
ICONS = {  # file → size in pixels (the SVG scales)
    "apple-touch-icon.png": 180,
    "icon-192.png": 192,
    "icon-512.png": 512,
}


def _has(page: str, pattern: str) -> bool:
    return re.search(pattern, page, re.I) is not None


def _attr(name: str) -> str:
    """A pattern for a tag carrying ``name="..."`` / ``property="..."`` with that value."""
    return rf"<meta\b[^<>]*\b(?:name|property)\s*=\s*[\"']?{re.escape(name)}[\"'\s/>]"


def complete(root: Path, meta: SiteMeta) -> list[str]:
    """Add what ``root``'s ``index.html`` lacks, and the icon files it lacks; what was added,
    for the build's log (empty: nothing was missing, or the page is not one to touch)."""
    index = root / "index.html"
    page = _readable(index)
    if page is None:
        return []
    colour = app_colour(root, page[:SCAN_CHARS], meta.name)
    added = _icon_files(root, meta, colour)
    return added + _fill(index, page, meta, colour)


def complete_pages(root: Path, meta: SiteMeta, pages: list[Path]) -> int:
    """Give other pages of the site the tags :func:`complete` gives ``index.html`` where they
    lack them (a Vue site's prerendered routes and shell, when they were rendered before the
    page was completed: on AWS, in the build box), never the icon files again; how many
    pages were changed. The same bounds as :func:`complete`."""
    changed = 0
    for file in pages:
        page = _readable(file)
        if page is not None:
            colour = app_colour(root, page[:SCAN_CHARS], meta.name)
            changed += bool(_fill(file, page, meta, colour))
    return changed


def _readable(file: Path) -> str | None:
    """The page's text, if it is one to touch: a file of its own, within the bound, UTF-8."""
    if not file.is_file() or file.is_symlink() or file.stat().st_size > MAX_PAGE_BYTES:
        return None
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def _fill(file: Path, page: str, meta: SiteMeta, colour: str) -> list[str]:
    """Write into ``file`` (whose text is ``page``) the tags it lacks; what was added."""
    scan = page[:SCAN_CHARS]
    missing = [(what, tag) for what, present, tag in _wanted(scan, meta, colour) if not present]
    said = [what for what, _ in missing]
    page = _with_lang(page, _visible(scan), said)
    if missing:
        page = _into_head(page, "\n".join(tag for _, tag in missing))
    if said:
        file.write_text(page, encoding="utf-8")
    return said


def relist(root: Path, meta: SiteMeta) -> bool:
    """List ``root``'s pages in its sitemap again (pages were added after :func:`complete`
    wrote it: a Vue site's prerendered routes); only call it for a sitemap that
    :func:`complete` wrote. Whether one was written."""
    sitemap = _crawl_files(root, meta).get("sitemap.xml")
    if sitemap is None:
        return False
    (root / "sitemap.xml").write_bytes(sitemap)
    return True


def _wanted(page: str, meta: SiteMeta, colour: str) -> list[tuple[str, bool, str]]:
    """Each tag a page should have: what it is, whether the page has it, and the tag."""
    title = next(_inner(page, "title", 1), "")
    shown = _plain(title)
    description = _description(page, meta)
    image = meta.image or (f"{meta.url}icon-512.png" if meta.url else "")
    rel = r"<link\b[^<>]*\brel\s*=\s*[\"']?"
    wanted = [
        ("charset", _has(page, r"<meta\b[^<>]*\bcharset\s*="), '<meta charset="utf-8">'),
        (
            "viewport",
            _has(page, _attr("viewport")),
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
        ),
        ("title", bool(shown), f"<title>{_esc(meta.name)}</title>"),
        (
            "description",
            _has(page, _attr("description")) or not description,
            f'<meta name="description" content="{_esc(description)}">',
        ),
        (
            "theme colour",
            _has(page, _attr("theme-color")),
            f'<meta name="theme-color" content="{colour}">',
        ),
    ]
    for prop, value in (
        ("og:type", "website"),
        ("og:title", shown or meta.name),
        ("og:description", description),
        ("og:url", meta.url),
        ("og:image", image),  # absolute, as Open Graph wants it, or none
    ):
        tag = f'<meta property="{prop}" content="{_esc(value)}">'
        wanted.append((prop, _has(page, _attr(prop)) or not value, tag))
    return [
        *wanted,
        (
            "twitter:card",
            _has(page, _attr("twitter:card")),
            '<meta name="twitter:card" content="summary">',
        ),
        (
            "favicon",
            _has(page, rel + r"(?:shortcut\s+)?icon[\"'\s>]"),
            '<link rel="icon" href="favicon.svg" type="image/svg+xml">',
        ),
        (
            "touch icon",
            _has(page, rel + "apple-touch-icon"),
            '<link rel="apple-touch-icon" href="apple-touch-icon.png">',
        ),
        (
            "manifest",
            _has(page, rel + "manifest"),
            '<link rel="manifest" href="site.webmanifest">',
        ),
    ]


def _into_head(page: str, tags: str) -> str:
    head = _HEAD.search(page, 0, SCAN_CHARS)
    if head is not None:
        # After the page's own charset when its head declares one: a browser looks for it in
        # the first 1024 bytes only, and S3 sends pages as text/html with no charset to fall
        # back on (Lighthouse's "charset" audit fails a page whose declaration comes later).
        at = head.end()
        charset = _CHARSET.search(page, at, SCAN_CHARS)
        low = page[:SCAN_CHARS].lower()
        ends = [i for i in (low.find("</head", at), low.find("<body", at)) if i >= 0]
        if charset is not None and charset.end() <= min(ends, default=SCAN_CHARS):
            at = charset.end()
        return f"{page[:at]}\n{tags}\n{page[at:]}"
    root = _HTML.search(page, 0, SCAN_CHARS)
    at = root.end() if root is not None else 0
    return f"{page[:at]}<head>\n{tags}\n</head>{page[at:]}"


def _with_lang(page: str, text: str, said: list[str]) -> str:
    root = _HTML.search(page, 0, SCAN_CHARS)
    if root is None or re.search(r"\slang\s*=", root.group(0), re.I):
        return page
    lang = "zh" if _CJK.search(text) else "en"
    said.append(f"lang={lang}")
    opened = root.group(0)[:-1].rstrip("/") + f' lang="{lang}">'
    return page[: root.start()] + opened + page[root.end() :]


def _description(page: str, meta: SiteMeta) -> str:
    """The page's own first paragraph when it says something, else the app's request."""
    for found in _inner(page, "p", 20):
        said = _plain(found)
        if len(said) >= 40:
            return _clip(said)
    request = " ".join(_TRIGGER.sub(" ", meta.description).split())
    return _clip(re.sub(r"\s+([,.;:!?])", r"\1", request))


def _clip(text: str) -> str:
    if len(text) <= DESCRIPTION_CHARS:
        return text
    return text[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",.;:") + "…"


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())


def _visible(page: str) -> str:
    return _plain(page)


def _inner(page: str, tag: str, limit: int) -> Iterator[str]:
    """The content of the first ``limit`` ``<tag>`` elements whose end is near enough."""
    low, closing = page.lower(), f"</{tag}>"
    opening = re.compile(rf"<{tag}\b[^<>]*>", re.I)
    for n, found in enumerate(opening.finditer(page)):
        if n >= limit:
            return
        end = low.find(closing, found.end(), found.end() + WINDOW)
        if end >= 0:
            yield page[found.end() : end]


def _esc(value: str) -> str:
    return html.escape(value, quote=True)


def app_colour(root: Path, page: str, name: str) -> str:
    """The app's own accent: the first vivid colour of its CSS (its page's and its
    stylesheets'), else one derived from its name."""
    sources = [page]
    budget = MAX_CSS_BYTES
    for css in sorted(root.rglob("*.css"))[:20]:
        if css.is_symlink() or budget <= 0:
            continue
        with css.open("rb") as f:
            data = f.read(min(budget, SCAN_CHARS))
        budget -= len(data)
        sources.append(data.decode("utf-8", "replace"))
    for source in sources:
        for found in _HEX.finditer(source):
            hex6 = found.group(1)
            if len(hex6) == 3:
                hex6 = "".join(c * 2 for c in hex6)
            r, g, b = (int(hex6[i : i + 2], 16) / 255 for i in (0, 2, 4))
            hue, light, sat = colorsys.rgb_to_hls(r, g, b)
            if sat >= 0.35 and 0.2 <= light <= 0.6:
                return f"#{hex6.lower()}"
    hue = int(hashlib.sha256(name.encode()).hexdigest()[:4], 16) / 0xFFFF
    r, g, b = colorsys.hls_to_rgb(hue, 0.4, 0.55)
    return "#" + "".join(f"{round(c * 255):02x}" for c in (r, g, b))


def _initial(name: str) -> str:
    for char in name.strip():
        if char.isalnum():
            return char.upper()
    return "•"


def _icon_files(root: Path, meta: SiteMeta, colour: str) -> list[str]:
    """The icons and the manifest the app does not have itself."""
    added: list[str] = []
    letter = _initial(meta.name)
    wanted: dict[str, bytes] = {"favicon.svg": _svg(letter, colour).encode()}
    for file, size in ICONS.items():
        wanted[file] = _png(letter, colour, size)
    wanted["favicon.ico"] = _ico(letter, colour)
    manifest = {
        "name": meta.name,
        "short_name": meta.name[:12],
        "start_url": "./",
        "display": "standalone",
        "background_color": "#ffffff",
        "theme_color": colour,
        "icons": [
            {"src": "icon-192.png", "sizes": "192x192", "type": "image/png"},
            {"src": "icon-512.png", "sizes": "512x512", "type": "image/png"},
        ],
    }
    wanted["site.webmanifest"] = json.dumps(manifest, ensure_ascii=False, indent=2).encode()
    wanted.update(_crawl_files(root, meta))
    for file, data in wanted.items():
        target = root / file
        if target.exists() or target.is_symlink():
            continue  # the app's own
        target.write_bytes(data)
        added.append(file)
    return added


def _crawl_files(root: Path, meta: SiteMeta) -> dict[str, bytes]:
    """``robots.txt`` and ``sitemap.xml``: a preview is for no crawler; a site's pages are
    listed where its address is known (a sitemap names absolute URLs)."""
    if meta.preview:
        return {"robots.txt": b"User-agent: *\nDisallow: /\n"}
    robots = "User-agent: *\nAllow: /\n"
    if not meta.url:
        return {"robots.txt": robots.encode()}
    pages = sorted(
        (
            p.relative_to(root).as_posix()
            for p in root.rglob("*.html")
            if p.is_file() and not p.is_symlink() and p.relative_to(root).parts[0][0] != "."
        ),
        key=lambda page: (page != "index.html", page),  # the home page first
    )[:1000]
    urls = [
        meta.url + ("" if page == "index.html" else page.removesuffix("index.html"))
        for page in pages
    ]
    entries = "".join(f"  <url><loc>{_esc(u)}</loc></url>\n" for u in dict.fromkeys(urls))
    sitemap = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{entries}</urlset>\n"
    )
    return {
        "robots.txt": f"{robots}Sitemap: {meta.url}sitemap.xml\n".encode(),
        "sitemap.xml": sitemap.encode(),
    }


def _svg(letter: str, colour: str) -> str:
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
        f'<rect width="64" height="64" rx="14" fill="{colour}"/>'
        '<text x="32" y="44" text-anchor="middle" font-family="system-ui, sans-serif" '
        f'font-size="34" font-weight="700" fill="#fff">{_esc(letter)}</text></svg>'
    )


def _drawn(letter: str, colour: str, size: int) -> Image.Image:
    image = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    draw.rounded_rectangle((0, 0, size - 1, size - 1), radius=size // 5, fill=colour)
    if letter.isascii():
        font = ImageFont.load_default(size=size * 0.55)
        draw.text((size / 2, size / 2), letter, fill="#ffffff", font=font, anchor="mm")
    else:  # the bundled font has no such glyph: a mark instead of a missing one
        r = size * 0.18
        draw.ellipse((size / 2 - r, size / 2 - r, size / 2 + r, size / 2 + r), fill="#ffffff")
    return image


def _png(letter: str, colour: str, size: int) -> bytes:
    out = io.BytesIO()
    _drawn(letter, colour, size).save(out, format="PNG", optimize=True)
    return out.getvalue()


def _ico(letter: str, colour: str) -> bytes:
    out = io.BytesIO()
    _drawn(letter, colour, 64).save(out, format="ICO", sizes=[(16, 16), (32, 32), (48, 48)])
    return out.getvalue()
