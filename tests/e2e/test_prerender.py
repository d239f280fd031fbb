"""Crawlable Vue sites (issue 44, point 3), over the local server with real npm + Vite builds
and the checking Chromium: a deployed Vue app routes by path, each route it links to is
served as prerendered HTML (what a crawler without JavaScript reads), any other path gets
the app's page as built, and the app takes over in a browser at every depth. An older app
whose router is in hash mode keeps working."""

from __future__ import annotations

import re
import shutil
from typing import Any

import httpx

from tests.e2e.conftest import BROWSER_ARGS, chat, create, wait_for_build
from tests.e2e.test_deploy import chromium_or_skip, deploy

_APP = re.compile(r'<div id="app"[^>]*>(.*?)</div>\s*</body>', re.DOTALL)


def mounted(page: str) -> str:
    """What the page's ``#app`` holds as sent, without the app's script run."""
    found = _APP.search(page)
    assert found is not None, page[:2000]
    return found.group(1)


def deployed_vue(client: httpx.Client, prompt: str) -> tuple[dict[str, Any], str]:
    app = create(client, prompt, "vue_project")
    assert chat(client, app["id"], app["initPrompt"]).ended == ("succeeded", 1)
    build = deploy(client, app["id"])
    assert build["state"] == "succeeded", build
    return build, client.get(f"/api/apps/{app['id']}").json()["deployUrl"]


def test_a_vue_sites_routes_are_prerendered_for_a_crawler(client: httpx.Client) -> None:
    chromium_or_skip()
    build, url = deployed_vue(client, "A Vue reading list for a book club")
    assert "prerendered 2 route(s)" in build["logTail"], build["logTail"]
    home, about = httpx.get(url), httpx.get(url + "about")
    assert home.status_code == about.status_code == 200
    # What the app renders, in the HTML itself: the home view at /, the about view at /about.
    assert "<h1" in mounted(home.text) and "About" not in re.findall(r"<h1[^>]*>([^<]*)", home.text)
    assert re.search(r"<h1[^>]*>About</h1>", mounted(about.text)), about.text[:3000]
    assert mounted(home.text) != mounted(about.text)
    # The same page at /about/ (its directory), and its assets resolve from the site's root.
    assert httpx.get(url + "about/").text == about.text
    assert re.search(r'<head>\s*<base href="/">', about.text), about.text[:500]
    # Any other path is the app's page as built: an empty mount point the router fills.
    other = httpx.get(url + "shelf/42")
    assert other.status_code == 200 and mounted(other.text).strip() == ""
    # The sitemap lists the routes; the files a browser needs are there at any depth.
    sitemap = httpx.get(url + "sitemap.xml").text
    assert f"<loc>{url}</loc>" in sitemap and f"<loc>{url}about/</loc>" in sitemap


def test_the_app_takes_over_in_a_browser_at_every_depth(client: httpx.Client) -> None:
    chromium_or_skip()
    from playwright.sync_api import sync_playwright

    _build, url = deployed_vue(client, "A Vue notebook for birdwatchers")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            failed: list[str] = []
            errors: list[str] = []
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.on("response", lambda r: failed.extend([r.url] if r.status >= 400 else []))
            page.on("pageerror", lambda e: errors.append(str(e)))
            for path in ("about", "about/", "shelf/42/deeper"):
                page.goto(url + path, wait_until="networkidle")
                assert page.locator("header nav a").count() == 2, path  # the app's layout
            page.goto(url + "about", wait_until="networkidle")
            assert page.locator("h1").first.inner_text() == "About"
            page.click("header >> text=Home")
            page.wait_for_url(url)
            assert page.locator("h1").first.inner_text() != "About"
            page.click("header >> text=About")
            page.wait_for_url(url + "about")
            assert page.locator("h1").first.inner_text() == "About"
            assert failed == [] and errors == []
        finally:
            browser.close()


def test_a_preview_is_not_prerendered(client: httpx.Client) -> None:
    app = create(client, "A Vue habit tracker", "vue_project")
    turn = chat(client, app["id"], app["initPrompt"])
    assert turn.ended == ("succeeded", 1)
    preview = wait_for_build(client, app["id"], turn.builds[-1]["buildId"])
    assert "prerendered" not in preview["logTail"]
    url = client.get(f"/api/apps/{app['id']}").json()["previewUrl"]
    assert '<div id="app"></div>' in httpx.get(url + "about").text  # the picker follows it


def test_an_older_hash_mode_app_keeps_working(client: httpx.Client) -> None:
    """A project written before history mode: its router file in hash mode, put back by
    hand. Its deep link is /#/about, which the site serves and the router follows."""
    chromium_or_skip()
    from playwright.sync_api import sync_playwright

    app = create(client, "A Vue recipe box", "vue_project")
    assert chat(client, app["id"], app["initPrompt"]).ended == ("succeeded", 1)
    router = client.get(f"/api/apps/{app['id']}/files/src/router/index.js").text
    hashed = router.replace("createWebHistory", "createWebHashHistory")
    put = client.put(f"/api/apps/{app['id']}/files/src/router/index.js", json={"content": hashed})
    assert put.status_code < 300, put.text
    build = deploy(client, app["id"])
    assert build["state"] == "succeeded", build
    url = client.get(f"/api/apps/{app['id']}").json()["deployUrl"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.goto(url + "#/about", wait_until="networkidle")
            assert page.locator("h1").first.inner_text() == "About"
            page.goto(url, wait_until="networkidle")
            page.click("header >> text=About")
            page.wait_for_url("**#/about")
            assert page.locator("h1").first.inner_text() == "About"
        finally:
            browser.close()
