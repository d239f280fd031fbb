"""Data apps made by a turn, through the real server with the browser checks on (issue 39,
point 8): the offline model answers a guestbook request with a page over the platform's
client and its data model, the checks sign the guestbook in the confined browser, reload and
still see the entry, each check in a scratch data space of its own: nothing of theirs is
left in the preview's data, or anywhere, once they are done."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, running
from tests.e2e.test_acceptance import suite
from tests.e2e.test_console import browser  # noqa: F401 (the fixture)
from tests.e2e.test_data_api import Visitor, messages
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.adapters.model.offline.data_apps import (
    CHECK_MESSAGE,
    CHECK_NOTE,
    NOTED,
    SIGNED,
    STRANGER,
)


@pytest.fixture(scope="module")
def server(checking_server: Server) -> Server:
    chromium_or_skip()
    return running(checking_server)


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_guestbook_turn_makes_a_page_that_keeps_its_entries(
    client: httpx.Client, server: Server, kind: str
) -> None:
    prompt = "A guestbook for a bakery called Crumbs"
    app = create(client, prompt, kind)
    turn = chat(client, app["id"], prompt)
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    model = client.get(f"/api/apps/{app['id']}/files/zerocode.data.json")
    assert model.status_code == 200
    assert json.loads(model.text)["collections"]["entries"]["rules"]["update"] == "nobody"
    signed = SIGNED.format(CHECK_MESSAGE)
    assert {c["description"]: c["status"] for c in turn.checks}[signed] == "passed", turn.checks
    assert turn.done["checks"]["failed"] == 0
    assert by_status(suite(client, app["id"])) == {"passed": 2}
    visitor = Visitor(client.get(f"/api/apps/{app['id']}").json()["previewUrl"])
    assert messages(visitor.list("entries")) == ["Welcome! Leave a message below."]
    assert scratch_left(server, app["id"]) == 0


def scratch_left(server: Server, app_id: str) -> int:
    """Records of the app's check spaces still kept (each goes as its context closes, in
    the background: waited for a moment)."""
    db = sqlite3.connect(server.data_dir / "zerocode.sqlite3")
    try:
        for _ in range(50):
            (left,) = db.execute(
                "SELECT COUNT(*) FROM records WHERE app_id = ? AND space LIKE 'check-%'",
                (app_id,),
            ).fetchone()
            if left == 0:
                return 0
            time.sleep(0.1)
        return int(left)
    finally:
        db.close()


def by_status(body: dict[str, object]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for check in body["checks"]:  # type: ignore[attr-defined]
        counts[check["status"]] = counts.get(check["status"], 0) + 1
    return counts


def test_a_vue_notes_turn_signs_users_in_and_keeps_each_ones_notes(
    client: httpx.Client,
    server: Server,
    browser: Any,  # noqa: F811
) -> None:
    prompt = "A Vue notes app for a bakery called Crumbs"
    app = create(client, prompt, "vue_project")
    turn = chat(client, app["id"], prompt)
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    rules = json.loads(client.get(f"/api/apps/{app['id']}/files/zerocode.data.json").text)
    assert rules["collections"]["notes"]["rules"]["read"] == "owner"
    assert turn.repairs == []  # the access probe found the rules whole: no repair
    noted = NOTED.format(CHECK_NOTE)
    assert {c["description"]: c["status"] for c in turn.checks}[noted] == "passed", turn.checks
    # The model's four checks (one a new visitor's: {"newVisitor": true}) and the platform's
    # own check of the notes' rules.
    assert turn.done["checks"] == {"passed": 5, "failed": 0, "notRun": 0}
    stranger = STRANGER.format(CHECK_NOTE)
    assert {c["description"]: c["status"] for c in turn.checks}[stranger] == "passed"
    assert {c["id"]: c["status"] for c in turn.checks}["access-notes"] == "passed"
    suite = client.get(f"/api/apps/{app['id']}/checks").json()
    (platform,) = [c for c in suite["checks"] if c["platform"]]
    assert platform["id"] == "access-notes" and platform["status"] == "passed"
    assert "another user can neither read, change nor delete" in platform["description"]
    assert platform["history"][0]["status"] == "passed"
    kept = client.post(
        f"/api/apps/{app['id']}/checks/access-notes/retire", json={"reason": "not needed"}
    )
    assert kept.status_code == 409 and "change the rules" in kept.json()["error"]["message"]
    assert scratch_left(server, app["id"]) == 0

    url = client.get(f"/api/apps/{app['id']}").json()["previewUrl"]
    pages = {}
    for name in ("ada", "bob"):
        page = browser.new_context().new_page()
        page.goto(url)
        page.get_by_label("Username").fill(name)
        page.get_by_label("Password").fill("a long password")
        page.get_by_role("button", name="Sign up").click()
        page.get_by_label("New note").fill(f"{name}'s secret")
        page.get_by_role("button", name="Add note").click()
        page.get_by_text(f"{name}'s secret").wait_for()
        pages[name] = page
    for name, page in pages.items():
        page.reload()
        page.get_by_text(f"Signed in as {name}").wait_for()
        page.get_by_text(f"{name}'s secret").wait_for()
        assert page.locator("li").all_inner_texts() == [f"{name}'s secret ×"]
    stranger = browser.new_context().new_page()
    stranger.goto(url)
    stranger.get_by_role("button", name="Sign up").wait_for()
    assert stranger.locator("li").count() == 0


def test_leaky_notes_are_caught_by_the_access_probe_and_repaired(client: httpx.Client) -> None:
    prompt = "A Vue notes app for a bakery called Crumbs [[flaw=leaky]]"
    app = create(client, prompt, "vue_project")
    turn = chat(client, app["id"], prompt)
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    [repair] = turn.repairs
    told = [
        m["content"]
        for m in client.get(f"/api/apps/{app['id']}/context").json()["messages"]
        if m["role"] == "user" and m["content"].startswith("[zerocode repair")
    ]
    assert len(told) == 1 and "another signed-in user could read" in told[0], told
    assert "its read rule is public; make it owner" in told[0]
    rules = json.loads(client.get(f"/api/apps/{app['id']}/files/zerocode.data.json").text)
    assert set(rules["collections"]["notes"]["rules"].values()) == {"owner", "signed-in"}
    assert repair["attempt"] == 1
    # The platform's check failed on the first preview and passed on the repaired one.
    access = [c["status"] for c in turn.checks if c["id"] == "access-notes"]
    assert access == ["failed", "passed"], turn.checks
