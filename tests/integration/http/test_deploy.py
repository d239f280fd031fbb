"""/api/apps/{id}/deploy, builds and rollback in process (a single page builds at once)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.integration.http.conftest import Api, error_code


def published(c: TestClient, headers: dict[str, str], app_id: str, build_id: str) -> Any:
    """The build once it finished (a deploy is published first, then recorded succeeded:
    publishing/service.py; it may read published while still running, never succeeded
    while unpublished)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        build = c.get(f"/api/apps/{app_id}/builds/{build_id}", headers=headers)
        assert build.status_code == 200, build.text
        if build.json()["state"] in ("succeeded", "failed"):
            return build.json()
        time.sleep(0.05)
    raise AssertionError("the build did not finish")


def test_deploy_lists_builds_and_rolls_back(api: Api) -> None:
    c, owner = api.client, api.user()
    app = api.app(owner)
    api.platform.workspace.write(app["id"], "index.html", b"<h1>One</h1>")
    first = c.post(f"/api/apps/{app['id']}/deploy", headers=owner)
    assert first.status_code == 202 and first.json()["state"] in ("queued", "running", "succeeded")
    one = published(c, owner, app["id"], first.json()["buildId"])
    assert one["state"] == "succeeded" and one["purpose"] == "deploy" and one["published"]
    api.platform.workspace.write(app["id"], "index.html", b"<h1>Two</h1>")
    second = c.post(f"/api/apps/{app['id']}/deploy", headers=owner).json()["buildId"]
    assert published(c, owner, app["id"], second)["published"]
    listed = c.get(f"/api/apps/{app['id']}/builds?purpose=deploy", headers=owner).json()
    assert [b["id"] for b in listed["builds"]] == [second, one["id"]]
    back = c.post(f"/api/apps/{app['id']}/rollback", headers=owner, json={"buildId": one["id"]})
    assert back.status_code == 200 and back.json()["deployBuildId"] == one["id"]
    assert c.get(f"/api/apps/{app['id']}/builds/{one['id']}", headers=owner).json()["published"]


def test_refusals(api: Api) -> None:
    c, owner, other = api.client, api.user(), api.user()
    app = api.app(owner)
    base = f"/api/apps/{app['id']}"
    for method, path, body in [
        ("POST", "/deploy", None),
        ("GET", "/builds", None),
        ("GET", "/builds/whatever", None),
        ("POST", "/rollback", {"buildId": "x"}),
    ]:
        assert c.request(method, base + path, json=body).status_code == 401
        assert c.request(method, base + path, headers=other, json=body).status_code == 404
    missing = c.get(f"{base}/builds/not-a-build", headers=owner)
    assert missing.status_code == 404 and error_code(missing) == "not_found"
    assert c.get(f"{base}/builds?purpose=nightly", headers=owner).status_code == 422
    assert c.post(f"{base}/rollback", headers=owner, json={}).status_code == 422
    never = c.post(f"{base}/rollback", headers=owner, json={"buildId": "not-a-build"})
    assert never.status_code in (400, 404, 409)


def test_a_build_read_as_succeeded_is_read_published(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GET …/builds/{id} reads the app (the owner's check), then the build. A deploy is
    published, then recorded succeeded: one that does both between the two reads is still
    answered published (the app is read again after the build), never succeeded while the
    site would seem not to serve it."""
    c, owner = api.client, api.user()
    app = api.app(owner)
    api.platform.workspace.write(app["id"], "index.html", b"<h1>One</h1>")
    first = c.post(f"/api/apps/{app['id']}/deploy", headers=owner).json()["buildId"]
    done = published(c, owner, app["id"], first)
    assert done["state"] == "succeeded" and done["published"]
    publishing = api.platform.publishing
    record = api.platform.apps.get(app["id"])
    assert record is not None
    queued, _ = publishing.request_deploy(record)  # recorded, never run by the platform
    output = publishing.current(app["id"], first).output  # type: ignore[union-attr]
    real = publishing.current

    def meanwhile(app_id: str, build_id: str) -> Any:
        if build_id == queued.id:  # the deploy ends between the route's two reads
            finished = queued.succeeded(output or "", "")
            publishing.publish(finished)
            api.platform.builds.put(finished)
        return real(app_id, build_id)

    monkeypatch.setattr(publishing, "current", meanwhile)
    read = c.get(f"/api/apps/{app['id']}/builds/{queued.id}", headers=owner).json()
    assert (read["state"], read["published"]) == ("succeeded", True)
    listed = c.get(f"/api/apps/{app['id']}/builds?purpose=deploy", headers=owner).json()
    assert [(b["id"], b["published"]) for b in listed["builds"]][:2] == [
        (queued.id, True),
        (first, False),
    ]
