"""The publish report (issue 44, point 5) over the real local server, its real builds and
its kept browser: an html page, a multi-file site and a Vue app as the offline model makes
them are published, and each deploy's report arrives with every check passed (tags, icons,
compression, cache headers, crawling, links, the console, axe-core's serious violations);
a page edited by hand to link a missing page and show an image without an alt gets failing
checks naming both and what to change; an unknown build is 404, and so is another user's."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, signed_in
from tests.e2e.test_deploy import deploy

CHECKS = ["meta", "icons", "compression", "caching", "crawl", "links", "console", "a11y"]


def report_of(client: httpx.Client, app_id: str, build_id: str) -> dict[str, Any]:
    """The deploy's report once it is made (it is made in the background, after the deploy
    succeeded: pending until then)."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        got = client.get(f"/api/apps/{app_id}/deploys/{build_id}/report")
        assert got.status_code == 200, got.text
        if got.json()["state"] != "pending":
            return dict(got.json())
        time.sleep(0.2)
    raise AssertionError(f"the report of {build_id} stayed pending")


def published(client: httpx.Client, prompt: str, kind: str) -> tuple[str, dict[str, Any]]:
    app = create(client, prompt, kind)
    turn = chat(client, app["id"], prompt)
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    build = deploy(client, app["id"])
    assert build["state"] == "succeeded", build
    return app["id"], build


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        ("A page about otters", "html"),
        ("A site about owls with a button that counts hoots", "multi_file"),
        ("A Vue todo app with an about page", "vue_project"),
    ],
)
def test_what_the_offline_model_makes_passes_every_check(
    client: httpx.Client, prompt: str, kind: str
) -> None:
    app_id, build = published(client, prompt, kind)
    report = report_of(client, app_id, build["id"])
    assert report["state"] == "done", report
    checks = {c["id"]: c for c in report["checks"]}
    assert list(checks) == CHECKS
    failing = {k: (c["status"], c["details"], c["note"]) for k, c in checks.items()
               if c["status"] != "passed"}  # fmt: skip
    assert not failing, failing
    assert report["summary"] == {"state": "done", "passed": 8, "failed": 0, "notRun": 0}
    assert checks["a11y"]["details"] == [
        "axe-core found no serious or critical violation on the home page"
    ]
    listed = client.get(f"/api/apps/{app_id}/builds", params={"purpose": "deploy"}).json()
    assert listed["builds"][0]["report"] == report["summary"]


def test_a_broken_link_and_a_missing_alt_fail_naming_what_to_fix(client: httpx.Client) -> None:
    app_id, _ = published(client, "A page about herons", "html")
    page = client.get(f"/api/apps/{app_id}/files/index.html").text
    edited = page.replace(
        "</main>",
        '<p><a href="nests.html">Where herons nest</a></p>'
        '<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="40" height="40">'
        "</main>",
        1,
    )
    assert edited != page
    saved = client.put(f"/api/apps/{app_id}/files/index.html", json={"content": edited})
    assert saved.status_code == 200 and saved.json()["build"]["state"] == "succeeded", saved.text
    build = deploy(client, app_id)
    report = report_of(client, app_id, build["id"])
    checks = {c["id"]: c for c in report["checks"]}
    links = checks["links"]
    assert links["status"] == "failed" and links["passed"] is False
    assert links["details"] == ["index.html → nests.html (not in the site)"]
    assert "file the site has" in links["fix"]
    a11y = checks["a11y"]
    assert a11y["status"] == "failed", a11y
    assert any(d.startswith("image-alt (critical): ") for d in a11y["details"]), a11y["details"]
    assert "give each <img> an alt text" in a11y["fix"]
    assert checks["meta"]["status"] == checks["console"]["status"] == "passed"
    assert report["summary"]["failed"] == 2


def test_unknown_builds_and_other_peoples_reports_are_404(
    server: Server, client: httpx.Client
) -> None:
    app_id, build = published(client, "A page about wrens", "html")
    missing = client.get(f"/api/apps/{app_id}/deploys/b0000000000000000000/report")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    stranger = signed_in(server)
    assert stranger.get(f"/api/apps/{app_id}/deploys/{build['id']}/report").status_code == 404
    anonymous = httpx.get(f"{server.api}/api/apps/{app_id}/deploys/{build['id']}/report")
    assert anonymous.status_code == 401
