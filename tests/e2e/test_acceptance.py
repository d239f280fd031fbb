"""Acceptance checks through the real server (issue 25): the offline model states checks
with each request, the server runs them in the confined Chromium against the new preview,
streams and records each verdict, repairs what fails, keeps the suite and re-runs it on
every later change, lets the owner retire a check (told to the model), and refuses a deploy
that requires passing checks while one fails."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, running, signed_in, wait_for_build
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.memory.messages import from_openai_list
from zerocode.memory.validation import validate

COUNTER = "Clicking “Try it” twice shows 2 clicks"


@pytest.fixture(scope="module")
def server(checking_server: Server) -> Server:
    """The test process's server with the browser checks on (tests/e2e/conftest.py)."""
    chromium_or_skip()
    return running(checking_server)


def suite(client: httpx.Client, app_id: str) -> dict[str, Any]:
    got = client.get(f"/api/apps/{app_id}/checks")
    assert got.status_code == 200, got.text
    return dict(got.json())


def by_description(body: dict[str, Any], description: str) -> dict[str, Any]:
    return next(c for c in body["checks"] if c["description"] == description)


def context(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = client.get(f"/api/apps/{app_id}/context").json()["messages"]
    validate(from_openai_list(messages))
    return messages


def test_a_vue_todo_apps_checks_pass_and_are_listed(client: httpx.Client) -> None:
    app = create(client, "A Vue todo app with an about page", "vue_project")
    turn = chat(client, app["id"], "A Vue todo app with an about page")
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    added = [r for r in turn.results if r["name"] == "add_check"]
    assert len(added) == 3 and all(r["ok"] for r in added)
    assert [c["status"] for c in turn.checks] == ["passed"] * 3, turn.checks
    assert turn.order.index("check") > max(
        i for i, name in enumerate(turn.order) if name == "build"
    )
    assert turn.done["checks"] == {"passed": 3, "failed": 0, "notRun": 0}
    body = suite(client, app["id"])
    assert [c["id"] for c in body["checks"]] == ["c1", "c2", "c3"]
    for check in body["checks"]:
        assert check["status"] == "passed" and check["addedTurn"] == 1
        assert check["lastRun"]["versionId"] == "v1" and check["lastRun"]["evidence"] is None
        assert check["history"] == [{"run": 1, "turn": 1, "status": "passed"}]
    assert body["runs"][0]["checks"] == {"passed": 3, "failed": 0, "notRun": 0}
    latest = client.get(f"/api/apps/{app['id']}/history").json()["entries"][0]
    assert "✓ check c1 passed" in latest["content"]


def test_a_potemkin_page_fails_its_check_is_repaired_and_then_passes(
    client: httpx.Client, server: Server
) -> None:
    app = create(client, "A page about owls", "html")
    turn = chat(client, app["id"], "A page about owls [[flaw=potemkin]]")
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    first = [c for c in turn.checks if c["round"] == 0]
    failed = [c for c in first if c["status"] == "failed"]
    assert [c["description"] for c in failed] == [COUNTER]
    evidence = failed[0]["evidence"]
    assert evidence["where"] == "expect[0]" and "Clicked 2 times." in evidence["expected"]
    shot = client.get(evidence["screenshot"])
    assert shot.status_code == 200 and shot.headers["content-type"] == "image/png"
    assert shot.content.startswith(b"\x89PNG")
    [repair] = turn.repairs
    assert repair["kind"] == "acceptance" and repair["attempt"] == 1
    assert all(c["status"] == "passed" for c in turn.checks if c["round"] == 1)
    assert turn.done["checks"] == {"passed": 2, "failed": 0, "notRun": 0}
    builds = [b["status"] for b in turn.builds if b["status"] != "running"]
    assert builds == ["succeeded", "succeeded"]  # the build's own verdict: it built both times
    told = [
        m["content"]
        for m in context(client, app["id"])
        if m["role"] == "user" and m["content"].startswith("[zerocode repair")
    ]
    assert told[0].startswith("[zerocode repair 1/2: acceptance checks fail]")
    counter = by_description(suite(client, app["id"]), COUNTER)
    assert counter["status"] == "passed"
    assert [h["status"] for h in counter["history"]] == ["passed", "failed"]
    # Another user sees nothing of it.
    stranger = signed_in(server, "stranger")
    try:
        assert stranger.get(f"/api/apps/{app['id']}/checks").status_code == 404
        assert stranger.get(evidence["screenshot"]).status_code == 404
    finally:
        stranger.close()


def test_a_later_change_that_breaks_a_check_is_caught_and_repaired(client: httpx.Client) -> None:
    app = create(client, "A page about herons", "html")
    assert (chat(client, app["id"], "A page about herons").done or {})["status"] == "succeeded"
    turn = chat(client, app["id"], 'Change the title to "Heron Hall" [[flaw=regress]]')
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    regressed = [c for c in turn.checks if c["round"] == 0 and c["status"] == "failed"]
    assert [c["description"] for c in regressed] == [COUNTER]  # an earlier turn's check
    assert [r["kind"] for r in turn.repairs] == ["acceptance"]
    assert all(c["status"] == "passed" for c in turn.checks if c["round"] == 1)
    body = suite(client, app["id"])
    counter = by_description(body, COUNTER)
    assert counter["addedTurn"] == 1 and counter["status"] == "passed"
    retired = [c for c in body["checks"] if c["status"] == "retired"]
    assert len(retired) == 1 and "Heron Hall" in retired[0]["retired"]["reason"]


def test_retiring_a_check_is_recorded_told_and_it_stops_applying(client: httpx.Client) -> None:
    app = create(client, "A page about moths", "html")
    assert (chat(client, app["id"], "A page about moths").done or {})["status"] == "succeeded"
    counter = by_description(suite(client, app["id"]), COUNTER)
    base = f"/api/apps/{app['id']}/checks/{counter['id']}"
    bad = client.post(f"{base}/retire", json={"reason": "  "})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"
    done = client.post(f"{base}/retire", json={"reason": "the button goes away"})
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "retired"
    assert done.json()["retired"]["reason"] == "the button goes away"
    again = client.post(f"{base}/retire", json={"reason": "again"})
    assert again.status_code == 409
    missing = client.post(f"/api/apps/{app['id']}/checks/c99/retire", json={"reason": "x"})
    assert missing.status_code == 404
    note = context(client, app["id"])[-1]
    assert note["role"] == "user" and "the user retired check" in note["content"]
    assert "the button goes away" in note["content"]
    later = chat(client, app["id"], 'Change the title to "Moth Hall"')
    assert counter["id"] not in [c["id"] for c in later.checks]
    assert later.checks and all(c["status"] == "passed" for c in later.checks)


def test_a_deploy_that_requires_checks_is_refused_while_one_fails(client: httpx.Client) -> None:
    app = create(client, "A page about bats", "html")
    turn = chat(client, app["id"], "A page about bats [[flaw=potemkin-stubborn]]")
    assert turn.done is not None and turn.done["status"] == "failed"
    assert turn.done["checks"] == {"passed": 1, "failed": 1, "notRun": 0}
    latest = client.get(f"/api/apps/{app['id']}/history").json()["entries"][0]
    assert "acceptance checks still fail" in latest["content"]
    counter = by_description(suite(client, app["id"]), COUNTER)
    refused = client.post(f"/api/apps/{app['id']}/deploy", json={"requireChecks": True})
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "checks_failed" and f"{counter['id']} failed" in error["message"]
    setting = client.patch(f"/api/apps/{app['id']}", json={"requireChecks": True})
    assert setting.status_code == 200 and setting.json()["requireChecks"] is True
    assert client.post(f"/api/apps/{app['id']}/deploy").status_code == 409  # the setting
    purposes = {b["purpose"] for b in client.get(f"/api/apps/{app['id']}/builds").json()["builds"]}
    assert purposes == {"preview"}  # no deploy build was made
    allowed = client.post(f"/api/apps/{app['id']}/deploy", json={"requireChecks": False})
    assert allowed.status_code == 202, allowed.text
    build = wait_for_build(client, app["id"], allowed.json()["buildId"])
    assert build["state"] == "succeeded"
    listed = client.get(f"/api/apps/{app['id']}/builds").json()["builds"]
    deployed = next(b for b in listed if b["id"] == build["id"])
    assert deployed["checks"] == {"passed": 1, "failed": 1, "notRun": 0}
