"""The publish report's checks of a placed output's files (issue 44, point 5), on crafted
outputs: a bare page fails its tags, icons and robots.txt, naming what to add; the same page
once completed (publishing/site_head.py) and compressed (publishing/encodings.py), as a deploy
places it, passes; a broken link is found and named with its page; a Vue route, a folder's
page and the platform's /_api/ are no broken links; and a hostile output (a huge page,
thousands of links, symbolic links out of it, more files than a build may hold) costs
bounded work and opens nothing outside the output."""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from zerocode.publishing import site_files
from zerocode.publishing.builds import SiteMeta
from zerocode.publishing.encodings import precompress
from zerocode.publishing.publish_report import MAX_DETAILS, CheckStatus, ReportCheck
from zerocode.publishing.site_checks import (
    Pages,
    check_compression,
    check_crawl,
    check_icons,
    check_links,
    check_meta,
)
from zerocode.publishing.site_files import (
    MAX_LINKS,
    PAGE_BYTES,
    SiteFiles,
    read_pages,
    read_start,
    walk,
)
from zerocode.publishing.site_head import complete

SITE = "http://abc123def456.localhost:8001/"
META = SiteMeta("Otter Facts", "A page about otters and their rivers", url=SITE)
BARE = "<!doctype html><html><head></head><body><h1>Otters</h1>{body}</body></html>"


def output(root: Path, files: dict[str, str | bytes]) -> Path:
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_text(content)
        else:
            target.write_bytes(content)
    return root


def read(root: Path) -> tuple[SiteFiles, Pages]:
    site = walk(root)
    found, unread = read_pages(site)
    return site, Pages(found, unread)


def static(root: Path) -> dict[str, ReportCheck]:
    site, pages = read(root)
    home = next((p for p in pages.read if p.path == "index.html"), None)
    return {
        "meta": check_meta(pages),
        "icons": check_icons(site, home),
        "compression": check_compression(site),
        "crawl": check_crawl(site, pages),
        "links": check_links(site, pages, "http://abc123def456.localhost:8001"),
    }


def published(root: Path, files: dict[str, str | bytes]) -> Path:
    """The output as a deploy places it: completed, then compressed."""
    output(root, files)
    complete(root, META)
    precompress(root)
    return root


def test_a_bare_page_fails_its_tags_icons_and_robots_naming_what_to_add(tmp_path: Path) -> None:
    checks = static(output(tmp_path, {"index.html": BARE.format(body="")}))
    meta = checks["meta"]
    assert meta.status is CheckStatus.FAILED and meta.passed is False
    (line,) = meta.details
    for lacking in ("<title>", 'name="description"', "<html lang", "viewport", "charset",
                    "og:title", "og:description"):  # fmt: skip
        assert lacking in line, line
    assert line.startswith("index.html lacks") and "<head>" in meta.fix
    icons = checks["icons"]
    assert icons.status is CheckStatus.FAILED
    assert any("no favicon" in d for d in icons.details), icons.details
    assert any("touch icon" in d for d in icons.details)
    assert any("manifest" in d for d in icons.details)
    assert 'rel="icon"' in icons.fix
    assert checks["crawl"].status is CheckStatus.FAILED
    assert checks["crawl"].details == ("no robots.txt",)
    assert checks["links"].status is CheckStatus.PASSED  # it links nothing


def test_a_completed_compressed_page_passes_every_file_check(tmp_path: Path) -> None:
    para = "<p>Otters live in rivers and along coasts, and they eat fish and crabs.</p>"
    root = published(
        tmp_path,
        {
            "index.html": BARE.format(body=para + '<a href="about.html">About</a>'),
            "about.html": "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width'><title>About</title>"
            "<meta name='description' content='About the otters'>"
            "<meta property='og:title' content='About'>"
            "<meta property='og:description' content='About the otters'>"
            "</head><body><a href='./'>Home</a></body></html>",
            "style.css": "h1 { color: #2f6f4f }\n" * 40,
        },
    )
    checks = static(root)
    for name, check in checks.items():
        assert check.status is CheckStatus.PASSED, (name, check)
        assert check.passed is True and check.fix == ""
    assert checks["meta"].details[0].startswith("2 page(s)")
    assert checks["icons"].details == (
        "favicon: favicon.svg",
        "touch icon: apple-touch-icon.png",
        "manifest: site.webmanifest",
    )


def test_a_broken_link_is_found_and_named_with_its_page(tmp_path: Path) -> None:
    page = (
        '<a href="missing.html">a</a> <img src="/img/gone.png" alt="x">'
        '<img srcset="here.png 1x, lost.png 2x" src="here.png" alt="y">'
        '<link rel="stylesheet" href="nope.css"><script src="there.js"></script>'
        '<a href="here.png#top">ok</a> <a href="here.png?v=2">ok</a>'
    )
    root = output(
        tmp_path,
        {"index.html": BARE.format(body=page), "here.png": b"png", "there.js": "1"},
    )
    links = static(root)["links"]
    assert links.status is CheckStatus.FAILED
    assert set(links.details) == {
        "index.html → missing.html (not in the site)",
        "index.html → /img/gone.png (not in the site)",
        "index.html → lost.png (not in the site)",
        "index.html → nope.css (not in the site)",
    }
    assert "file the site has" in links.fix


def test_routes_folders_and_the_platforms_api_are_no_broken_links(tmp_path: Path) -> None:
    page = (
        '<a href="/about">About</a> <a href="contact">Contact</a> <a href="#/hash">h</a>'
        '<a href="#top">top</a> <a href="blog/">Blog</a> <a href="/blog">Blog</a>'
        '<script type="module" src="/_api/client.js"></script>'
        '<a href="mailto:a@b.c">m</a> <a href="tel:1">t</a> <a href="javascript:void 0">j</a>'
        '<img src="data:image/png;base64,AAAA" alt="d"> <a href="https://example.com/x.pdf">e</a>'
        '<a href="//cdn.example.com/lib.js">cdn</a>'
        f'<a href="{SITE}blog/index.html">absolute, this site</a>'
        "<!-- <a href='commented.html'>no</a> -->"
        "<script>const link = '<a href=\"in-a-script.html\">';</script>"
        "<template><a href='in-a-template.html'>t</a></template>"
    )
    root = output(
        tmp_path,
        {
            "index.html": BARE.format(body=page),
            "blog/index.html": "<!doctype html><title>Blog</title><a href='../about'>up</a>"
            "<a href='post.html'>post</a>",
            "blog/post.html": "<!doctype html><title>Post</title>",
        },
    )
    links = static(root)["links"]
    assert links.status is CheckStatus.PASSED, links.details
    # A folder without an index.html serves nothing, nor do the compressed copies' folder
    # and files with an extension the site lacks.
    output(
        tmp_path,
        {
            "empty/.keep": "",
            "index.html": BARE.format(
                body='<a href="empty/">e</a><a href=".encoded/index.html.br">c</a>'
            ),
        },
    )
    assert set(static(root)["links"].details) == {
        "index.html → empty/ (not in the site)",
        "index.html → .encoded/index.html.br (not in the site)",
    }


def test_a_page_reached_at_its_folder_with_or_without_a_slash_is_judged_kindly(
    tmp_path: Path,
) -> None:
    """``about/index.html`` is served at /about/ and at /about (a router's link): a relative
    link that works from either is no broken link (never a false failure)."""
    root = output(
        tmp_path,
        {
            "index.html": BARE.format(body=""),
            "about/index.html": "<!doctype html><title>About</title>"
            '<script src="./assets/app.js"></script>',
            "assets/app.js": "1",
        },
    )
    assert static(root)["links"].status is CheckStatus.PASSED


def test_the_manifest_and_robots_are_read_for_what_lighthouse_wants(tmp_path: Path) -> None:
    head = (
        '<link rel="icon" href="favicon.svg"><link rel="apple-touch-icon" href="touch.png">'
        '<link rel="manifest" href="app.webmanifest"><meta name="robots" content="noindex">'
    )
    manifest = {"name": "Otters", "icons": [{"src": "icon-192.png", "sizes": "192x192"}]}
    root = output(
        tmp_path,
        {
            "index.html": BARE.replace("<head>", "<head>" + head).format(body=""),
            "favicon.svg": "<svg/>",
            "app.webmanifest": json.dumps(manifest),
            "icon-192.png": b"png",
            "robots.txt": "User-agent: Googlebot\nDisallow: /private\n\nUser-agent: *\n"
            "Disallow: /\n",
        },
    )
    checks = static(root)
    assert set(checks["icons"].details) == {
        "index.html: the touch icon touch.png is not in the site",
        "index.html: the manifest app.webmanifest has no icon of 512x512 pixels",
    }
    assert set(checks["crawl"].details) == {
        'index.html: <meta name="robots"> says noindex',
        "robots.txt disallows every page to every crawler (Disallow: /)",
    }
    (tmp_path / "app.webmanifest").write_text("{not json")
    (tmp_path / "robots.txt").write_text("User-agent: *\nDisallow: /private\n")
    checks = static(root)
    assert "index.html: the manifest app.webmanifest is not JSON" in checks["icons"].details
    assert checks["crawl"].details == ('index.html: <meta name="robots"> says noindex',)


def test_text_without_a_compressed_copy_fails_unless_it_would_gain_nothing(
    tmp_path: Path,
) -> None:
    noise = secrets.token_bytes(3000)  # gains nothing compressed
    root = output(
        tmp_path,
        {
            "index.html": BARE.format(body="<p>" + "otters " * 200 + "</p>"),
            "noise.js": noise,
            "tiny.css": "a{}",
        },
    )
    compression = static(root)["compression"]
    assert compression.status is CheckStatus.FAILED
    (line,) = compression.details
    assert line.startswith("index.html (") and "no compressed copy" in line
    precompress(root)
    assert static(root)["compression"].status is CheckStatus.PASSED


def test_a_huge_page_is_read_only_in_its_first_megabyte(tmp_path: Path) -> None:
    huge = "<p>" + "<a href='x.html'>" * 10 + "a" * (PAGE_BYTES + 10) + "<a href='far.html'>"
    root = output(tmp_path, {"index.html": BARE.format(body=huge) * 20, "x.html": ""})
    _, pages = read(root)
    assert sum(len(p.text) for p in pages.read) <= PAGE_BYTES
    links = static(root)["links"]
    assert links.status is CheckStatus.PASSED  # far.html lies past what is read
    assert links.note is not None and "index.html read in its first 1 MiB only" in links.note


def test_thousands_of_links_are_bounded(tmp_path: Path) -> None:
    body = "".join(f'<a href="p{n}.html">{n}</a>' for n in range(MAX_LINKS + 500))
    links = static(output(tmp_path, {"index.html": BARE.format(body=body)}))["links"]
    assert links.status is CheckStatus.FAILED
    assert len(links.details) == MAX_DETAILS
    assert links.details[-1] == f"(and {MAX_LINKS - MAX_DETAILS + 1} more)"
    assert links.note == f"500 more link(s) not looked up (past {MAX_LINKS})"


def test_symbolic_links_are_never_followed_or_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    output(outside, {"secret.html": "<title>secret</title><a href='leak.html'>x</a>"})
    root = tmp_path / "out"
    output(root, {"index.html": BARE.format(body='<a href="evil.html">e</a><a href="up/">u</a>')})
    os.symlink(outside / "secret.html", root / "evil.html")
    os.symlink(outside, root / "up")
    os.symlink("/", root / "root")
    site, pages = read(root)
    assert set(site.files) == {"index.html"} and site.linked == {"evil.html", "up", "root"}
    assert [p.path for p in pages.read] == ["index.html"]
    assert read_start(site, "evil.html", 100) is None
    assert read_start(site, "up/secret.html", 100) is None
    links = static(root)["links"]
    assert set(links.details) == {
        "index.html → evil.html (not in the site)",
        "index.html → up/ (not in the site)",
    }
    assert links.note is not None and "3 symbolic link(s)" in links.note
    # A page that is itself a link to a file outside is no page of the site.
    (root / "index.html").unlink()
    os.symlink(outside / "secret.html", root / "index.html")
    assert static(root)["meta"].details == ("the site has no HTML page",)


def test_an_output_of_more_files_than_a_build_holds_is_walked_only_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site_files, "MAX_ENTRIES", 50)
    files: dict[str, str | bytes] = {f"d{n // 10}/f{n}.txt": "" for n in range(100)}
    root = output(tmp_path, {"index.html": BARE.format(body=""), **files})
    site = walk(root)
    assert len(site.files) + len(site.dirs) - 1 <= 50 and site.unwalked > 0
    note = static(root)["links"].note
    assert note is not None and "not looked at" in note
