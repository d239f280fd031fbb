"""What a published page is given where it lacks it (issue 44, point 1): a bare page gets
its lang, charset, viewport, title, description, social tags, theme colour, icons and
manifest; a page that set any of them keeps its own (a tag, a file); what the app's name or
request says is escaped; a hostile page costs bounded work and gets nothing broken."""

from __future__ import annotations

import html
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from zerocode.publishing.builds import SiteMeta
from zerocode.publishing.site_head import app_colour, complete

META = SiteMeta(
    "Otter Facts",
    "A page about otters [[slow]], their rivers and their habits",
    url="http://abc123def456.localhost:8001/",
)
BARE = "<!doctype html><html><head></head><body><h1>Otters</h1></body></html>"


def page_of(root: Path) -> str:
    return (root / "index.html").read_text()


def meta(page: str, key: str) -> str | None:
    found = re.search(rf'<meta (?:name|property)="{re.escape(key)}" content="([^"]*)">', page)
    return html.unescape(found.group(1)) if found else None


def test_a_bare_page_is_given_everything_a_published_page_needs(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(BARE)
    (tmp_path / "style.css").write_text("h1 { color: #2f6f4f; } body { background: #ffffff }")
    said = complete(tmp_path, META)
    page = page_of(tmp_path)
    assert '<html lang="en">' in page and '<meta charset="utf-8">' in page
    assert 'name="viewport"' in page and "<title>Otter Facts</title>" in page
    assert meta(page, "description") == "A page about otters, their rivers and their habits"
    assert meta(page, "theme-color") == "#2f6f4f"  # the app's own colour
    assert meta(page, "og:title") == "Otter Facts" and meta(page, "og:type") == "website"
    assert meta(page, "og:url") == META.url
    assert meta(page, "og:image") == f"{META.url}icon-512.png"
    assert meta(page, "twitter:card") == "summary"
    assert 'rel="icon" href="favicon.svg"' in page and 'rel="manifest"' in page
    assert page.index("<meta charset") < page.index("<h1>")  # in the head, first
    for name, size in (("apple-touch-icon.png", 180), ("icon-192.png", 192), ("icon-512.png", 512)):
        with Image.open(tmp_path / name) as image:
            assert image.format == "PNG" and image.size == (size, size), name
    with Image.open(io.BytesIO((tmp_path / "favicon.ico").read_bytes())) as ico:
        assert ico.format == "ICO"
    assert (tmp_path / "favicon.svg").read_text().startswith("<svg")
    manifest = json.loads((tmp_path / "site.webmanifest").read_text())
    assert manifest["name"] == "Otter Facts" and manifest["theme_color"] == "#2f6f4f"
    assert {i["sizes"] for i in manifest["icons"]} == {"192x192", "512x512"}
    assert "description" in said and "favicon.ico" in said and "lang=en" in said
    # Again: nothing more is added (a rebuild of the same output).
    assert complete(tmp_path, META) == [] and page_of(tmp_path) == page


def test_what_the_app_set_itself_is_never_overridden(tmp_path: Path) -> None:
    own = (
        '<!DOCTYPE html><html lang="fr"><head><meta charset="utf-8">'
        "<title>Les loutres</title>"
        "<meta name='description' content='Mon texte à moi'>"
        '<meta property="og:image" content="https://example.org/mine.png">'
        '<link rel="icon" href="my-icon.png"><link rel="shortcut icon" href="x.ico">'
        "</head><body><p>Les loutres sont des mammifères qui vivent près de l'eau.</p></body>"
    )
    (tmp_path / "index.html").write_text(own)
    (tmp_path / "favicon.ico").write_bytes(b"mine")
    (tmp_path / "site.webmanifest").write_text('{"name": "mine"}')
    said = complete(tmp_path, META)
    page = page_of(tmp_path)
    assert page.count("<title>") == 1 and "<title>Les loutres</title>" in page
    assert page.count('name="description"') + page.count("name='description'") == 1
    assert page.count("og:image") == 1 and 'lang="fr"' in page and page.count("lang=") == 1
    assert page.count('rel="icon"') == 1 and "favicon.svg" not in page
    assert meta(page, "og:title") == "Les loutres"  # its own title, not the app's name
    assert (
        meta(page, "og:description") == "Les loutres sont des mammifères qui vivent près de l'eau."
    )
    assert (tmp_path / "favicon.ico").read_bytes() == b"mine"
    assert json.loads((tmp_path / "site.webmanifest").read_text()) == {"name": "mine"}
    assert not {"title", "description", "favicon", "charset", "favicon.ico"} & set(said)


def test_what_is_added_comes_after_the_pages_own_charset(tmp_path: Path) -> None:
    """A browser reads the charset in a page's first 1024 bytes only, and S3 names none in
    the header: the app's own declaration stays first, the added tags follow it."""
    own = (
        '<!DOCTYPE html>\n<html lang="en">\n  <head>\n    <meta charset="UTF-8" />\n'
        '    <meta name="viewport" content="width=device-width, initial-scale=1.0" />\n'
        "  </head>\n  <body><p>" + "Otters hold hands while they sleep. " * 3 + "</p></body>\n"
    )
    (tmp_path / "index.html").write_text(own)
    long = SiteMeta("Otter Facts " * 5, "otters " * 60, url=META.url, image=META.url + "c.png")
    assert "description" in complete(tmp_path, long)
    page = page_of(tmp_path).encode()
    assert page.index(b'<meta charset="UTF-8" />') < page.index(b'name="description"')
    assert page.index(b"charset") < 1024 < len(page.split(b"</head>")[0])
    # A charset out of the head is no place to put them: they go first in the head.
    (tmp_path / "index.html").write_text(
        '<html><head><title>T</title></head><body><meta charset="utf-8"><p>x</p></body></html>'
    )
    complete(tmp_path, META)
    head = page_of(tmp_path).split("</head>")[0]
    assert head.index('name="description"') < head.index("<title>T</title>")


def test_the_apps_words_are_escaped_and_a_chinese_page_says_so(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<html><body><h1>番茄钟</h1></body></html>")
    hostile = SiteMeta('"><script>alert(1)</script>', 'Say "hi" <b>loudly</b> & go')
    complete(tmp_path, hostile)
    page = page_of(tmp_path)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;" in page and 'lang="zh"' in page
    assert meta(page, "description") == 'Say "hi" <b>loudly</b> & go'  # as text, escaped
    assert "<head>" in page and page.index("<head>") < page.index("<body>")
    assert meta(page, "og:url") is None and meta(page, "og:image") is None  # no URL known


@pytest.mark.timeout(60)  # a safety net: read with patterns that backtracked, it took minutes
def test_a_hostile_page_costs_bounded_work(tmp_path: Path) -> None:
    """Unclosed tags by the hundred thousand: the page is read only as far as a head goes,
    with patterns that stop at the next tag: linear in what it reads, at most 64 KiB."""
    evil = "<html><head>" + "<p>" * 300_000 + "<title" * 100_000 + "<html" * 100_000
    (tmp_path / "index.html").write_text(evil)
    (tmp_path / "a.css").write_text("#" * 2_000_000)
    said = complete(tmp_path, META)
    assert "title" in said and page_of(tmp_path).endswith("<html" * 10)


def test_a_page_too_big_or_not_utf8_is_left_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_bytes(b"<html>\xff\xfe</html>")
    assert complete(tmp_path, META) == []
    assert (tmp_path / "index.html").read_bytes() == b"<html>\xff\xfe</html>"


def test_an_app_without_a_vivid_colour_gets_one_from_its_name(tmp_path: Path) -> None:
    grey = "body{color:#333;background:#fafafa}"
    one, two = app_colour(tmp_path, grey, "Otters"), app_colour(tmp_path, grey, "Owls")
    assert re.fullmatch(r"#[0-9a-f]{6}", one) and one != two
    assert app_colour(tmp_path, grey, "Otters") == one  # the same name, the same colour


def test_a_site_is_given_robots_and_a_sitemap_a_preview_is_for_no_crawler(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    (site / "about").mkdir(parents=True)
    (site / "index.html").write_text(BARE)
    (site / "about" / "index.html").write_text(BARE)
    (site / "contact.html").write_text(BARE)
    said = complete(site, META)
    assert {"robots.txt", "sitemap.xml"} <= set(said)
    robots = (site / "robots.txt").read_text()
    assert "Allow: /" in robots and f"Sitemap: {META.url}sitemap.xml" in robots
    locs = re.findall(r"<loc>([^<]+)</loc>", (site / "sitemap.xml").read_text())
    assert locs == [META.url, f"{META.url}about/", f"{META.url}contact.html"]
    # No address known (a first deploy): robots without a sitemap.
    first = tmp_path / "first"
    first.mkdir()
    (first / "index.html").write_text(BARE)
    complete(first, SiteMeta("Otter Facts"))
    assert (first / "robots.txt").read_text() == "User-agent: *\nAllow: /\n"
    assert not (first / "sitemap.xml").exists()
    # A preview: nothing for crawlers; an app's own robots.txt is its own.
    preview = tmp_path / "preview"
    preview.mkdir()
    (preview / "index.html").write_text(BARE)
    complete(preview, SiteMeta("Otter Facts", url=META.url, preview=True))
    assert (preview / "robots.txt").read_text() == "User-agent: *\nDisallow: /\n"
    assert not (preview / "sitemap.xml").exists()
    own = tmp_path / "own"
    own.mkdir()
    (own / "index.html").write_text(BARE)
    (own / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    complete(own, META)
    assert (own / "robots.txt").read_text() == "User-agent: *\nDisallow: /private/\n"
