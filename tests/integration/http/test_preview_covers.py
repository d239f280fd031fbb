"""GET /api/apps/{appId}/cover (issue 26, point 7): an app's preview cover is its owner's
and admins', and nobody else's. What a leak would be, each tried: another user or an
anonymous caller reading it by the route; a public list (the featured apps) naming it;
the sites host's public ``/covers/`` path serving it; a shared browser cache handing one
user's cover to another (the answer varies by credentials and is private)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fastapi.testclient import TestClient

from tests.integration.http.conftest import Api
from zerocode.adapters.local.chromium_covers import ChromiumCovers
from zerocode.http.sites import create_sites_app
from zerocode.publishing.builds import new_build_id
from zerocode.publishing.preview_covers import PNG_MAGIC

SHOT = PNG_MAGIC + b"the preview, shot"


def with_cover(api: Api, owner: dict[str, str]) -> tuple[dict[str, Any], str]:
    """An app of ``owner`` with a preview, and the cover a browser would have taken of it
    (no browser here: tests/e2e/test_preview_covers.py takes a real one)."""
    app = api.app(owner)
    api.chat(owner, app["id"], "Make the page")
    preview = api.client.get(f"/api/apps/{app['id']}/preview", headers=owner).json()
    build = preview["buildId"]
    covers = api.platform.publishing.preview_covers
    assert covers is not None and build
    covers.store.put(app["id"], build, SHOT)
    assert covers.record(app["id"], build)
    return app, build


def test_the_owner_and_admins_get_it_and_no_one_else(api: Api) -> None:
    owner, other, admin = api.user(), api.user("other"), api.admin()
    app, build = with_cover(api, owner)
    base = f"/api/apps/{app['id']}"
    shown = api.client.get(base, headers=owner).json()
    assert shown["cover"] is None
    assert shown["previewCover"] == f"{base}/cover?build={build}"
    for who in (owner, admin):
        got = api.client.get(shown["previewCover"], headers=who)
        assert got.status_code == 200 and got.content == SHOT
        assert got.headers["content-type"] == "image/png"
        assert got.headers["cache-control"] == "private, max-age=86400, immutable"
        assert got.headers["vary"] == "Authorization, Cookie"
        assert got.headers["x-content-type-options"] == "nosniff"
    # Without the path's build (or with an older one) it may change: revalidated each time.
    assert api.client.get(f"{base}/cover", headers=owner).headers["cache-control"] == (
        "private, no-cache"
    )
    older = api.client.get(f"{base}/cover?build={new_build_id(1.0)}", headers=owner)
    assert older.status_code == 200 and older.headers["cache-control"] == "private, no-cache"
    refused = api.client.get(f"{base}/cover", headers=other)
    assert refused.status_code == 404 and refused.json()["error"]["code"] == "not_found"
    assert SHOT not in refused.content
    assert api.client.get(f"{base}/cover").status_code == 401
    assert api.client.get(f"{base}/cover?build=../x", headers=owner).status_code in (400, 422)


def test_an_app_without_one_is_404(api: Api) -> None:
    owner = api.user()
    app = api.app(owner)
    answer = api.client.get(f"/api/apps/{app['id']}/cover", headers=owner)
    assert answer.status_code == 404 and answer.json()["error"]["code"] == "not_found"
    assert api.client.get(f"/api/apps/{app['id']}", headers=owner).json()["previewCover"] is None


def test_lists_name_it_to_the_owner_and_admins_and_public_lists_never(api: Api) -> None:
    owner, other, admin = api.user(), api.user("other"), api.admin()
    app, _ = with_cover(api, owner)
    mine = api.client.get("/api/apps", headers=owner).json()["apps"]
    assert [a["previewCover"] for a in mine if a["id"] == app["id"]] == [
        f"/api/apps/{app['id']}/cover?build={app_build(api, app)}"
    ]
    every = api.client.get("/api/admin/apps", headers=admin).json()["apps"]
    assert next(a for a in every if a["id"] == app["id"])["previewCover"]
    featured = api.client.patch(
        f"/api/admin/apps/{app['id']}", headers=admin, json={"priority": 99}
    )
    assert featured.status_code == 200
    for who in ({}, other, owner):  # anyone, another user, the owner too: a public list
        listed = api.client.get("/api/apps?scope=featured", headers=who).json()["apps"]
        found = next(a for a in listed if a["id"] == app["id"])
        assert found["previewCover"] is None and found["cover"] is None


def app_build(api: Api, app: dict[str, Any]) -> str:
    found = api.platform.apps.get(app["id"])
    assert found is not None and found.preview_cover
    return found.preview_cover


def test_a_deploy_cover_takes_its_place(api: Api) -> None:
    owner = api.user()
    app, _ = with_cover(api, owner)
    found = api.platform.apps.get(app["id"])
    assert found is not None
    api.platform.apps.put(replace(found, cover="http://127.0.0.1:8001/covers/a/b.png"))
    shown = api.client.get(f"/api/apps/{app['id']}", headers=owner).json()
    assert shown["cover"] and shown["previewCover"] is None
    assert api.client.get(f"/api/apps/{app['id']}/cover", headers=owner).status_code == 404


def test_the_public_covers_path_never_serves_a_preview_cover(api: Api) -> None:
    """The sites host's bare ``/covers/`` path serves deploy covers (a file put there is
    served, so the 404 below is not for want of a covers root) and never a preview's."""
    owner = api.user()
    app, build = with_cover(api, owner)
    data = api.platform.settings.data_dir
    api.platform.publishing.covers = ChromiumCovers(
        data / "covers", "http://127.0.0.1:8001", "/usr/bin/chromium"
    )
    sites = TestClient(create_sites_app(api.platform))
    deployed = new_build_id()
    (data / "covers" / app["id"]).mkdir(parents=True)
    (data / "covers" / app["id"] / f"{deployed}.png").write_bytes(PNG_MAGIC + b"deploy")
    host = {"Host": "127.0.0.1:8001"}
    assert sites.get(f"/covers/{app['id']}/{deployed}.png", headers=host).status_code == 200
    for path in (
        f"/covers/{app['id']}/{build}.png",
        f"/covers/..%2Fpreview-covers%2F{app['id']}/{build}.png",
        f"/covers/{app['id']}/..%2F..%2Fpreview-covers%2F{app['id']}%2F{build}.png",
        f"/preview-covers/{app['id']}/{build}.png",
    ):
        answer = sites.get(path, headers=host)
        assert answer.status_code == 404, path
        assert SHOT not in answer.content
    # Nor on the app's own preview or site origin.
    key = api.client.get(f"/api/apps/{app['id']}", headers=owner).json()["previewUrl"]
    preview_host = {"Host": key.split("//")[1].rstrip("/")}
    for path in (f"/preview-covers/{app['id']}/{build}.png", "/__zerocode/cover.png"):
        assert SHOT not in sites.get(path, headers=preview_host).content
