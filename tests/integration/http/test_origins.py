"""Each preview and site on its own origin (issue 11, points 5 and 6), in process: the sites
server routes by Host, the API names those origins, keys made before get host-safe ones, the
console is only served on 127.0.0.1, no GET starts a turn, and the session cookie counts
only for requests from the API's own origin."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from zerocode.apps.records import App, CodeGenType
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints.server import with_console
from zerocode.http.app import create_app
from zerocode.http.deps import CSRF_HEADER, SESSION_COOKIE
from zerocode.http.sites import console_origins, create_sites_app
from zerocode.publishing.picker import PICKER, picker_script
from zerocode.publishing.pointers import (
    SiteTarget,
    SiteUrls,
    is_host_key,
    preview_pointer,
    site_pointer,
)

PAGE = b"<html><body><h1>Newts</h1></body></html>"


@pytest.fixture
def platform(tmp_path: Path) -> Platform:
    return wiring.platform(Settings(data_dir=tmp_path, covers=False, port=8000, sites_port=8001))


async def published(p: Platform, app: App | None = None) -> App:
    """An HTML app with a preview and a published site."""
    app = app or await p.create_app("owner-1", "A page about newts", CodeGenType.HTML)
    p.workspace.write(app.id, "index.html", PAGE)
    p.workspace.write(app.id, "about/index.html", b"<p>about</p>")
    await p.publishing.preview(app)
    build, source = p.publishing.request_deploy(app)
    await p.publishing.deploy(build, source)
    found = p.apps.get(app.id)
    assert found is not None
    return found


def get(sites: TestClient, url: str, **kwargs: Any) -> Any:
    """What a browser gets for ``url``: connect to the server, send the URL's Host."""
    parts = urlsplit(url)
    return sites.get(parts.path or "/", headers={"Host": parts.netloc}, **kwargs)


def test_previews_and_sites_are_origins_of_their_own(platform: Platform) -> None:
    platform.accounts.register("owner-2", "correct horse")
    token, user = platform.accounts.login("owner-2", "correct horse")
    app = asyncio.run(
        published(
            platform,
            asyncio.run(platform.create_app(user.id, "A page about newts", CodeGenType.HTML)),
        )
    )
    api = TestClient(create_app(platform))
    out = api.get(f"/api/apps/{app.id}", headers={"Authorization": f"Bearer {token}"}).json()
    assert out["previewUrl"] == f"http://p-{app.preview_key}.localhost:8001/"
    assert out["deployUrl"] == f"http://{app.deploy_key}.localhost:8001/"
    assert is_host_key(app.preview_key) and len(app.preview_key) == 26
    assert app.deploy_key and is_host_key(app.deploy_key) and len(app.deploy_key) == 12

    sites = TestClient(create_sites_app(platform))
    preview, site = (
        platform.publishing.urls.preview(app.preview_key),
        platform.publishing.urls.site(str(app.deploy_key)),
    )
    assert urlsplit(preview).netloc != urlsplit(site).netloc  # two origins for one app
    shown = get(sites, preview)
    assert shown.status_code == 200 and b"<h1>Newts</h1>" in shown.content
    assert b'<script src="/__zerocode/picker.js" defer></script>' in shown.content
    assert shown.headers["cache-control"] == "no-store"
    live = get(sites, site)
    # The page as built (what it lacked added: publishing/site_head.py); no picker on a site.
    assert live.status_code == 200 and b"<h1>Newts</h1>" in live.content
    assert b"picker.js" not in live.content and b'<html lang="en">' in live.content
    built = live.content
    assert get(sites, site + "about/").content == b"<p>about</p>"
    assert get(sites, site + "no/such/route").content == built  # SPA fallback
    assert get(sites, site.upper().replace("HTTP://", "http://")).content == built  # any case
    picker = get(sites, preview + "__zerocode/picker.js")
    assert picker.headers["content-type"].startswith("text/javascript")
    assert 'var CONSOLES = ["http://127.0.0.1:8000"];' in picker.text


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:8001",
        "localhost:8001",  # the bare host names no app
        "p-{deploy}.localhost:8001",  # a deploy key is no preview key
        "{preview}.localhost:8001",  # ... and a preview key without its p- no site
        "x.{deploy}.localhost:8001",  # one label only
        "{deploy}.localhost.evil.example:8001",
        "{deploy}.example.com:8001",
        "p-.localhost:8001",
        "p-short.localhost:8001",
    ],
)
def test_hosts_that_name_no_app_serve_nothing(platform: Platform, host: str) -> None:
    app = asyncio.run(published(platform))
    sites = TestClient(create_sites_app(platform))
    named = host.format(deploy=app.deploy_key, preview=app.preview_key)
    answer = sites.get("/", headers={"Host": named})
    assert answer.status_code == 404 and b"Newts" not in answer.content


def test_the_old_path_urls_are_not_found_on_the_apis_site(platform: Platform) -> None:
    app = asyncio.run(published(platform))
    sites = TestClient(create_sites_app(platform))
    for path in (
        f"/sites/{app.deploy_key}/",
        f"/preview/{app.preview_key}/",
        f"/sites/{app.deploy_key}",
        f"/preview/{app.preview_key}/index.html",
    ):
        answer = sites.get(path, headers={"Host": "127.0.0.1:8001"}, follow_redirects=False)
        assert answer.status_code == 404, path
        assert b"Newts" not in answer.content
    assert "own origins" in sites.get(f"/sites/{app.deploy_key}/").text


def test_aws_without_a_custom_domain_keeps_the_shared_path_scheme(tmp_path: Path) -> None:
    settings = Settings(mode="aws", sites_url="https://d111.cloudfront.net")
    urls = settings.site_urls()
    assert not urls.per_app_origins
    assert urls.site("Key_with-dash1") == "https://d111.cloudfront.net/sites/Key_with-dash1/"
    assert urls.preview("previewkey1") == "https://d111.cloudfront.net/preview/previewkey1/"
    custom = settings.model_copy(update={"sites_domain": "Sites.Example.com."}).site_urls()
    assert custom.site("abcdefgh1234") == "https://abcdefgh1234.sites.example.com/"
    assert custom.preview("abcdefgh1234") == "https://p-abcdefgh1234.sites.example.com/"
    # The local sites server speaks the path scheme too, should it be given one.
    p = wiring.platform(Settings(data_dir=tmp_path, covers=False))
    p.publishing.urls = SiteUrls("http://127.0.0.1:8001")
    app = asyncio.run(published(p))
    sites = TestClient(create_sites_app(p))
    assert b"<h1>Newts</h1>" in sites.get(f"/sites/{app.deploy_key}/").content
    assert b"picker.js" in sites.get(f"/preview/{app.preview_key}/").content
    assert sites.get(f"/sites/{app.deploy_key}", follow_redirects=False).status_code == 301
    assert sites.get(f"/sites/{app.preview_key}/").status_code == 404


def test_keys_from_before_per_app_origins_are_replaced_on_the_next_build(
    platform: Platform,
) -> None:
    app = asyncio.run(platform.create_app("owner-1", "A page about newts", CodeGenType.HTML))
    legacy = replace(app, preview_key="Old_Preview-Key_0123456789", deploy_key="Old-Key_9ab")
    platform.apps.put(legacy)
    platform.publishing.publisher.point(site_pointer("Old-Key_9ab"), SiteTarget(app.id, "b0"))
    renewed = asyncio.run(published(platform, legacy))
    assert is_host_key(renewed.preview_key) and renewed.preview_key != legacy.preview_key
    assert renewed.deploy_key and is_host_key(renewed.deploy_key)
    publisher = platform.publishing.publisher
    assert publisher.target(site_pointer("Old-Key_9ab")) is None  # the old key is gone
    assert publisher.target(preview_pointer(legacy.preview_key)) is None
    assert publisher.target(site_pointer(renewed.deploy_key)) is not None
    assert publisher.target(preview_pointer(renewed.preview_key)) is not None


def test_the_picker_obeys_only_configured_consoles(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        host="0.0.0.0",
        port=9000,
        cors_origins="https://console.example.com/, https://c2.example.com",
    )
    assert console_origins(settings) == [
        "http://127.0.0.1:9000",
        "https://console.example.com",
        "https://c2.example.com",
    ]
    assert b"var CONSOLES = [];" in picker_script()  # the copy in AWS preview builds
    assert picker_script() == PICKER.read_bytes().replace(b"/*zerocode:consoles*/", b"")
    with pytest.raises(ValueError):
        picker_script(["javascript:alert(1)"])
    with pytest.raises(ValueError):
        picker_script(['http://x"];alert(1);//'])


def test_the_console_is_only_served_on_127_0_0_1(platform: Platform) -> None:
    console = TestClient(with_console(create_app(platform), platform.settings))
    for host in ("localhost:8000", "app.localhost:8000", "LOCALHOST:8000"):
        moved = console.get("/console/", headers={"Host": host}, follow_redirects=False)
        assert moved.status_code == 307, host
        assert moved.headers["location"] == "http://127.0.0.1:8000/console/"
    here = console.get("/console/", headers={"Host": "127.0.0.1:8000"})
    assert here.status_code == 200 and b"app.js" in here.content


def test_no_get_starts_a_turn_and_cookies_count_only_from_the_apis_origin(
    platform: Platform,
) -> None:
    api = TestClient(create_app(platform))
    platform.accounts.register("owner-3", "correct horse")
    login = api.post("/api/users/login", json={"account": "owner-3", "password": "correct horse"})
    token = login.json()["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    app = api.post(
        "/api/apps", json={"initPrompt": "A page", "codeGenType": "html"}, headers=bearer
    ).json()
    api.cookies.clear()
    cookie = {"Cookie": f"{SESSION_COOKIE}={token}"}
    assert (
        api.get(f"/api/apps/{app['id']}/chat", params={"message": "hi"}, headers=bearer).status_code
        == 405
    )
    schema = api.get("/api/openapi.json").json()
    assert "get" not in schema["paths"]["/api/apps/{app_id}/chat"]
    # The cookie works from the API's own origin (and for clients that are not browsers) ...
    for site in (None, "same-origin", "none"):
        headers = {**cookie, **({"Sec-Fetch-Site": site} if site else {})}
        assert api.get("/api/users/me", headers=headers).status_code == 200, site
    # ... and not from any other origin, an app's on the same site included.
    for site in ("same-site", "cross-site"):
        headers = {**cookie, "Sec-Fetch-Site": site}
        assert api.get("/api/users/me", headers=headers).status_code == 401, site
        refused = api.post(
            f"/api/apps/{app['id']}/chat",
            json={"message": "hi"},
            headers={**headers, CSRF_HEADER: "1"},
        )
        assert refused.status_code == 401, site
    # State changes by cookie still need the custom header, from the right origin too.
    bare = api.post(f"/api/apps/{app['id']}/deploy", headers=cookie)
    assert bare.status_code == 403 and CSRF_HEADER in json.dumps(bare.json())
    assert platform.display.page(app["id"], None, 10).entries == []  # no turn ever started


def test_every_cookie_authenticated_change_needs_the_custom_header(platform: Platform) -> None:
    api = TestClient(create_app(platform))
    platform.accounts.register("owner-4", "correct horse")
    token, user = platform.accounts.login("owner-4", "correct horse")
    app = asyncio.run(platform.create_app(user.id, "A page", CodeGenType.HTML))
    api.cookies.clear()
    cookie = {"Cookie": f"{SESSION_COOKIE}={token}", "Sec-Fetch-Site": "same-origin"}
    public = {("post", "/api/users/register"), ("post", "/api/users/login")}
    checked = []
    for path, operations in api.get("/api/openapi.json").json()["paths"].items():
        for method in operations:
            if method in ("get", "head") or (method, path) in public:
                continue
            url = path.replace("{app_id}", app.id).replace("{build_id}", "b0" * 10)
            answer = api.request(method.upper(), url, headers=cookie, json={})
            assert answer.status_code == 403, (method, path, answer.text)
            assert CSRF_HEADER in answer.json()["error"]["message"]
            checked.append((method, path))
    assert ("post", "/api/apps/{app_id}/chat") in checked and len(checked) >= 8
    assert platform.apps.get(app.id) is not None  # none of them did anything
