"""Published sites compressed and cached as a fast site is (issue 44, point 2), over the local
sites server: each text file goes as its brotli or gzip copy by the request's
``Accept-Encoding`` (made when the build was placed, never per request), the same bytes once
decoded; a Vue build's hashed assets are cached a year, its pages revalidated (304 by ETag);
the copies are never served by their own path; a preview is ``noindex``. And what a
published page lacked (meta tags, icons, a manifest) was added when it was built."""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass
from typing import Any

import brotli
import httpx

from tests.e2e.conftest import Server, chat, create, shown_build
from tests.e2e.test_deploy import deploy

IDENTITY = {"Accept-Encoding": "identity"}


@dataclass(frozen=True)
class Sent:
    """A response as the server sent it, not decoded (httpx would undo the encoding)."""

    status_code: int
    headers: httpx.Headers
    content: bytes


def raw(url: str, encoding: str, **headers: str) -> Sent:
    with httpx.stream("GET", url, headers={"Accept-Encoding": encoding, **headers}) as response:
        return Sent(response.status_code, response.headers, b"".join(response.iter_raw()))


def body(response: Sent) -> bytes:
    said = response.headers.get("content-encoding")
    if said == "br":
        return bytes(brotli.decompress(response.content))
    if said == "gzip":
        return gzip.decompress(response.content)
    assert said is None, said
    return response.content


def published(client: httpx.Client, prompt: str, kind: str) -> tuple[dict[str, Any], str]:
    app = create(client, prompt, kind)
    turn = chat(client, app["id"], prompt)
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
    build = deploy(client, app["id"])
    assert build["state"] == "succeeded", build
    assert "zerocode: compressed" in build["logTail"], build["logTail"]
    return app, client.get(f"/api/apps/{app['id']}").json()["deployUrl"]


def check_negotiation(url: str) -> bytes:
    """Every encoding a client may ask for gives the same page."""
    plain = raw(url, "identity")
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    assert plain.headers["vary"] == "Accept-Encoding"
    original = body(plain)
    for asked, sent in (
        ("gzip, deflate, br", "br"),
        ("br", "br"),
        ("gzip", "gzip"),
        ("br;q=0, gzip", "gzip"),
        ("*", "br"),
        ("deflate", None),
        ("gzip;q=0, br;q=0", None),
    ):
        got = raw(url, asked)
        assert got.status_code == 200, asked
        assert got.headers.get("content-encoding") == sent, asked
        assert got.headers["vary"] == "Accept-Encoding"
        assert body(got) == original, asked
        if sent is not None:
            assert int(got.headers["content-length"]) < len(original), asked
    return original


def test_an_html_site_is_sent_compressed_and_revalidated(client: httpx.Client) -> None:
    app, url = published(client, "A page about otters", "html")
    page = check_negotiation(url)
    assert b"Otters" in page
    # What the page lacked was added when it was built (publishing/site_head.py), before
    # its copies were made: every encoding says the same.
    text = page.decode()
    assert '<meta name="description" content="' in text and 'property="og:title"' in text
    # The site's address is chosen before its first build: the first deploy names it.
    assert f'<meta property="og:url" content="{url}">' in text
    assert deploy(client, app["id"])["state"] == "succeeded"
    again = httpx.get(url).text
    assert f'<meta property="og:url" content="{url}">' in again
    assert f"Sitemap: {url}sitemap.xml" in httpx.get(url + "robots.txt").text
    assert f"<loc>{url}</loc>" in httpx.get(url + "sitemap.xml").text
    preview = client.get(f"/api/apps/{app['id']}").json()["previewUrl"]
    assert httpx.get(preview + "robots.txt").text == "User-agent: *\nDisallow: /\n"
    # Its image: the app's cover when it had one as the build began (a deploy's cover is
    # taken just after it, so which one is the build's timing), else its icon; either is
    # there to fetch.
    image = re.search(r'<meta property="og:image" content="([^"]+)">', again)
    assert image is not None, again
    assert image.group(1) == f"{url}icon-512.png" or re.fullmatch(
        rf"http://[^/]+/covers/{app['id']}/b[0-9a-z]+\.png", image.group(1)
    ), image.group(1)
    shown = httpx.get(image.group(1))
    assert shown.status_code == 200 and shown.headers["content-type"] == "image/png"
    for path, kind in (
        ("favicon.ico", "image/x-icon"),
        ("favicon.svg", "image/svg+xml"),
        ("apple-touch-icon.png", "image/png"),
        ("site.webmanifest", "application/manifest+json"),
    ):
        icon = httpx.get(url + path)
        assert icon.status_code == 200 and icon.headers["content-type"].startswith(kind), path
    assert httpx.get(url + "site.webmanifest").json()["name"] == app["name"]
    first = raw(url, "br")
    assert first.headers["cache-control"] == "no-cache"
    etag = first.headers["etag"]
    unchanged = raw(url, "br", **{"If-None-Match": etag})
    assert unchanged.status_code == 304 and unchanged.headers["etag"] == etag
    assert not unchanged.content
    assert raw(url, "gzip", **{"If-None-Match": etag}).status_code == 200  # another copy
    # The copies are no files of the site.
    for path in (".encoded/index.html.br", ".encoded/index.html.gz", "%2Eencoded/index.html.br"):
        assert httpx.get(url + path, headers=IDENTITY).status_code == 404, path


def test_a_vue_sites_hashed_assets_are_cached_a_year_and_sent_compressed(
    server: Server, client: httpx.Client
) -> None:
    app, url = published(client, "A Vue todo app with an about page", "vue_project")
    page = check_negotiation(url).decode()
    assets = re.findall(r'(?:src|href)="\.?/?(assets/[^"]+\.(?:js|css))"', page)
    assert any(a.endswith(".js") for a in assets), page
    for asset in assets:
        got = raw(url + asset, "br")
        assert got.status_code == 200
        assert got.headers["cache-control"] == "public, max-age=31536000, immutable", asset
        assert got.headers["content-encoding"] == "br", asset
        check_negotiation(url + asset)
    assert raw(url, "br").headers["cache-control"] == "no-cache"  # the page: revalidated
    # The preview: never cached, never indexed, its page (the picker in it) gzipped.
    preview = client.get(f"/api/apps/{app['id']}").json()["previewUrl"]
    shown_build(client, app["id"])
    got = raw(preview, "gzip, br")
    assert got.status_code == 200 and got.headers["x-robots-tag"] == "noindex"
    assert got.headers["cache-control"] == "no-store"
    assert got.headers["content-encoding"] == "gzip" and b'<div id="app">' in body(got)
    for asset in assets:
        shown = raw(preview + asset, "br")
        assert shown.headers["cache-control"] == "no-store", asset
        assert shown.headers["x-robots-tag"] == "noindex"
