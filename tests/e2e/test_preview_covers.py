"""Every app has a cover from its preview (issue 26, point 7), through the real server
(offline model, real builds, the covers' confined Chromium taking the screenshot): a
never-deployed app gets a private cover its owner sees in the console's list, and no one
else sees it by the API, a public list, the sites host or the console."""

from __future__ import annotations

import os
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, chromium_browser, create, signed_in
from tests.e2e.test_accounts import make_admin

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ARTIFACTS = Path(os.environ.get("ZEROCODE_TEST_ARTIFACTS", "test-artifacts")) / "preview-covers"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Preview covers on (the shared server has them off to save browsers)."""
    srv = Server(tmp_path_factory.mktemp("zerocode-preview-covers"))
    srv.env["ZEROCODE_PREVIEW_COVERS"] = "1"
    srv.start()
    yield srv
    srv.stop()


def listed(client: httpx.Client, app_id: str, scope: str = "mine") -> dict[str, Any] | None:
    apps = client.get("/api/apps", params={"scope": scope, "limit": 50}).json()["apps"]
    return next((a for a in apps if a["id"] == app_id), None)


def wait_for_cover(client: httpx.Client, app_id: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = listed(client, app_id)
        assert found is not None
        if found["previewCover"]:
            return found
        time.sleep(0.5)
    raise AssertionError(f"app {app_id} got no preview cover in {timeout} s")


def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(PNG_MAGIC) and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def covered(server: Server) -> tuple[httpx.Client, dict[str, Any], bytes]:
    """An owner's never-deployed html app, its cover taken after its first turn."""
    owner = signed_in(server, "cover-owner")
    app = create(owner, "A page about otters", "html")
    assert chat(owner, app["id"], app["initPrompt"]).ended == ("succeeded", 1)
    found = wait_for_cover(owner, app["id"])
    assert found["cover"] is None and found["deployUrl"] is None
    image = owner.get(found["previewCover"])
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    return owner, found, image.content


def test_a_never_deployed_app_gets_a_real_screenshot_of_its_preview(
    covered: tuple[httpx.Client, dict[str, Any], bytes],
) -> None:
    _, _, image = covered
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "cover.png").write_bytes(image)
    assert png_size(image) == (1200, 750)
    assert len(image) > 2000  # a page was drawn, not an empty image


@pytest.fixture(scope="module")
def admin(server: Server) -> httpx.Client:
    make_admin(server, "cover-admin")
    login = {"account": "cover-admin", "password": "correct horse"}
    token = httpx.post(f"{server.api}/api/users/login", json=login).json()["token"]
    return httpx.Client(base_url=server.api, headers={"Authorization": f"Bearer {token}"})


def make_featured(admin: httpx.Client, app: dict[str, Any]) -> None:
    assert admin.patch(f"/api/admin/apps/{app['id']}", json={"priority": 99}).status_code == 200


def test_no_one_else_gets_it(
    server: Server, covered: tuple[httpx.Client, dict[str, Any], bytes], admin: httpx.Client
) -> None:
    owner, app, image = covered
    path = app["previewCover"]
    other = signed_in(server, "cover-other")
    assert other.get(path).status_code == 404
    assert listed(other, app["id"]) is None
    assert httpx.get(f"{server.api}{path}").status_code == 401
    assert admin.get(path).content == image  # admins may see it
    # Featured (a list anyone reads): the app is there, its preview cover is not.
    make_featured(admin, app)
    anyone = httpx.Client(base_url=server.api)
    public = listed(anyone, app["id"], "featured")
    assert public is not None and public["previewCover"] is None and public["cover"] is None
    # The sites host's public covers path: nothing under the cover's build, nor around it.
    build = path.split("build=")[1]
    bare = f"http://127.0.0.1:{server.sites_port}"
    for where in (
        f"/covers/{app['id']}/{build}.png",
        f"/covers/..%2Fpreview-covers%2F{app['id']}/{build}.png",
        f"/preview-covers/{app['id']}/{build}.png",
    ):
        answer = httpx.get(bare + where)
        assert answer.status_code == 404 and image not in answer.content, where
    assert owner.get(path).content == image  # still the owner's


def test_the_owner_sees_it_in_the_console_and_another_user_does_not(
    server: Server, covered: tuple[httpx.Client, dict[str, Any], bytes], admin: httpx.Client
) -> None:
    owner, app, _ = covered
    make_featured(admin, app)
    other = signed_in(server, "cover-peer")
    with chromium_browser() as browser:
        for client, sees in ((owner, True), (other, False)):
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.goto(f"{server.api}/console/#/login")
            token = str(client.headers["Authorization"]).removeprefix("Bearer ")
            page.evaluate("t => localStorage.setItem('zc_token', t)", token)
            page.goto(f"{server.api}/console/#/")
            page.wait_for_selector("#mine-apps .tile, #mine-apps p")
            tile = f'#mine-apps [data-app="{app["id"]}"]'
            if sees:
                page.wait_for_selector(f'{tile} img[data-cover="preview"]', timeout=30_000)
                src = page.get_attribute(f"{tile} img", "src") or ""
                assert src.startswith("data:image/png;base64,")
                page.screenshot(path=str(ARTIFACTS / "console-owner.png"))
            else:
                assert page.query_selector(tile) is None
                # Featured: shown to them, without the owner's cover.
                page.wait_for_selector(f'#featured-apps [data-app="{app["id"]}"]', timeout=30_000)
                featured = f'#featured-apps [data-app="{app["id"]}"]'
                assert page.query_selector(f"{featured} img") is None
            page.context.close()
