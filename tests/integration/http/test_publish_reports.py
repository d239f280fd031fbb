"""GET /api/apps/{id}/deploys/{buildId}/report in process (issue 44, point 5): a deploy's
report is pending, then done, with the file checks' verdicts and, with no browser here, the
browser's checks not run saying why; the builds list says the same in short; an unknown
build, a preview build and another user's app are 404; an app's reports go with it."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest

from tests.integration.http.conftest import Api, error_code
from tests.integration.http.test_deploy import published
from zerocode.bootstrap.settings import Settings

PAGE = (
    b"<!doctype html><html><head></head><body><main><h1>Newts</h1>"
    b"<p>Newts are small amphibians that live near ponds and streams.</p>"
    b'<a href="gone.html">Gone</a></main></body></html>'
)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """No browser, and a sites port nothing listens on: the site's answers are not had."""
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    return Settings(data_dir=tmp_path, covers=False, sites_port=port)


def report(api: Api, headers: dict[str, str], app_id: str, build_id: str) -> dict[str, Any]:
    """The report once it is no longer pending."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        got = api.client.get(f"/api/apps/{app_id}/deploys/{build_id}/report", headers=headers)
        assert got.status_code == 200, got.text
        if got.json()["state"] != "pending":
            return dict(got.json())
        time.sleep(0.05)
    raise AssertionError("the report stayed pending")


def test_a_deploys_report_comes_and_names_what_to_fix(api: Api) -> None:
    c, owner = api.client, api.user()
    app = api.app(owner)
    api.platform.workspace.write(app["id"], "index.html", PAGE)
    build_id = c.post(f"/api/apps/{app['id']}/deploy", headers=owner).json()["buildId"]
    assert published(c, owner, app["id"], build_id)["state"] == "succeeded"
    body = report(api, owner, app["id"], build_id)
    assert body["state"] == "done" and body["why"] is None
    assert body["appId"] == app["id"] and body["buildId"] == build_id
    assert body["startedAt"] <= body["finishedAt"]
    checks = {check["id"]: check for check in body["checks"]}
    assert list(checks) == ["meta", "icons", "compression", "caching", "crawl", "links",
                            "console", "a11y"]  # fmt: skip
    for name in ("meta", "icons", "compression", "crawl"):  # the platform completed the page
        assert checks[name]["status"] == "passed" and checks[name]["passed"] is True, checks[name]
    links = checks["links"]
    assert links["status"] == "failed" and links["passed"] is False
    assert links["details"] == ["index.html → gone.html (not in the site)"]
    assert "file the site has" in links["fix"]
    for name in ("console", "a11y"):
        assert checks[name]["status"] == "not_run" and checks[name]["passed"] is None
        assert checks[name]["note"] == "not run: the platform's browser is off (ZEROCODE_COVERS=0)"
    assert checks["caching"]["status"] == "not_run"
    assert checks["caching"]["note"] == "not run: the site did not answer"
    assert checks["meta"]["title"] == "Title, description and page tags"
    assert body["summary"] == {"state": "done", "passed": 4, "failed": 1, "notRun": 3}
    listed = c.get(f"/api/apps/{app['id']}/builds", headers=owner).json()["builds"]
    (deploy,) = [b for b in listed if b["id"] == build_id]
    assert deploy["report"] == {"state": "done", "passed": 4, "failed": 1, "notRun": 3}
    assert all(b["report"] is None for b in listed if b["purpose"] == "preview")


def test_unknown_preview_and_other_peoples_builds_are_404(api: Api) -> None:
    c, owner, other = api.client, api.user(), api.user()
    app = api.app(owner)
    api.chat(owner, app["id"], "A page about newts")  # a preview build
    (preview,) = c.get(f"/api/apps/{app['id']}/builds", headers=owner).json()["builds"]
    base = f"/api/apps/{app['id']}/deploys"
    for build_id in ("b0000000000000000000", "not-a-build", preview["id"]):
        missing = c.get(f"{base}/{build_id}/report", headers=owner)
        assert missing.status_code == 404 and error_code(missing) == "not_found", build_id
    build_id = c.post(f"/api/apps/{app['id']}/deploy", headers=owner).json()["buildId"]
    published(c, owner, app["id"], build_id)
    assert c.get(f"{base}/{build_id}/report", headers=other).status_code == 404
    assert c.get(f"{base}/{build_id}/report").status_code == 401
    assert c.get(f"{base}/{build_id}/report", headers=api.admin()).status_code == 200


def test_a_failed_deploy_has_no_report_and_a_deleted_apps_reports_go(api: Api) -> None:
    c, owner = api.client, api.user()
    app = api.app(owner)
    api.platform.workspace.write(app["id"], "index.html", PAGE)
    build_id = c.post(f"/api/apps/{app['id']}/deploy", headers=owner).json()["buildId"]
    published(c, owner, app["id"], build_id)
    assert report(api, owner, app["id"], build_id)["state"] == "done"
    api.platform.workspace.delete(app["id"], "index.html")
    api.platform.workspace.write(app["id"], "about.html", b"<h1>No index</h1>")
    failing = c.post(f"/api/apps/{app['id']}/deploy", headers=owner).json()["buildId"]
    assert published(c, owner, app["id"], failing)["state"] == "failed"
    none = report(api, owner, app["id"], failing)
    assert none["state"] == "none" and none["checks"] == [] and none["summary"] is None
    assert none["why"] == "the deploy failed: nothing was published to check"
    store = api.platform.publishing.report_store
    assert store is not None and store.get(app["id"], build_id) is not None
    assert c.delete(f"/api/apps/{app['id']}", headers=owner).status_code == 204
    assert store.get(app["id"], build_id) is None
