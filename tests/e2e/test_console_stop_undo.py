"""Stop and Retry mean what they say (issue 38, point 2), in real headless Chromium against a
real server with the offline model and the checks run in Chromium (a check of the change
holds its suite 5 s: the turn is in its checks between writing its files and its end).
Written from the issue's steps: Stop 2 s into 'Change the title to "Stopped Todos"' used to
leave "Interrupted" while the change was in the files and the preview, and Retry answered
"No files were changed". Now the reply says what the turn kept, "Undo what this turn wrote"
restores the version before it (and says so when it could not), and Retry offers that undo
first, then makes the change for real."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create
from tests.e2e.test_console_turns import history, open_app, send, signed_up
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)

# The change adds a check that holds its suite 5 s: the turn is still in its checks when
# Stop is clicked after its build, however fast the other checks are (they run together
# with the runtime check since issue 40).
MESSAGE = 'Change the title to "Stopped Todos" [[check-wait=5000]]'
LIVE_REPLY = '#messages .msg.ai[data-turn="running"]'
STOPPED = '#messages .msg.ai[data-turn="interrupted"]'


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """This module's own server, with the runtime check (and so the checks) in Chromium:
    the seconds they take after the build are when Stop lands on a turn that wrote."""
    srv = Server(tmp_path_factory.mktemp("zerocode-console-stop-undo"))
    srv.env["ZEROCODE_RUNTIME_CHECK"] = "1"
    srv.start()
    yield srv
    srv.stop()


def title(owner: httpx.Client, app_id: str) -> str:
    page = owner.get(f"/api/apps/{app_id}/files/index.html")
    assert page.status_code == 200, page.text
    found = re.search(r"<h1[^>]*>(.*?)</h1>", page.text, re.S)
    assert found, page.text
    return found.group(1).strip()


def versions(owner: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    return list(owner.get(f"/api/apps/{app_id}/versions").json()["versions"])


def preview_title(page: Any, text: str) -> None:
    exactly = re.compile(f"^{re.escape(text)}$")
    page.frame_locator("#preview").locator("h1", has_text=exactly).wait_for()


def stopped_after_writing(browser: Any, server: Server) -> tuple[Any, httpx.Client, str, str]:  # noqa: F811
    """A todo page made, then 'Change the title to "Stopped Todos"' stopped once its files
    were written and its preview built, while its checks run: the page, the owner, the
    app's id and the title before."""
    page, owner = signed_up(browser, server)
    app = create(owner, "A todo list app", "html")
    assert chat(owner, app["id"], app["initPrompt"]).ended == ("succeeded", 1)
    before = title(owner, app["id"])
    open_app(page, server.api, app["id"])
    preview_title(page, before)

    send(page, MESSAGE)
    built = page.locator(f"{LIVE_REPLY} li.ok", has_text="preview build succeeded")
    built.wait_for(timeout=TURN_MS)
    page.click("#stop")
    reply = page.wait_for_selector(STOPPED, timeout=TURN_MS)
    assert "stopped by the user" in reply.inner_text()
    assert title(owner, app["id"]) == "Stopped Todos"  # written before the stop, and kept
    return page, owner, app["id"], before


def test_a_stopped_turn_says_what_it_kept_and_undo_restores_the_version_before_it(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app_id, before = stopped_after_writing(browser, server)
    made = versions(owner, app_id)
    assert [(v["id"], v["kind"]) for v in made] == [("v2", "turn"), ("v1", "turn")]
    kept = page.wait_for_selector(f"{STOPPED} .turn-kept")
    assert kept.inner_text().startswith("This turn had already changed 1 file (v2); it is kept.")
    preview_title(page, "Stopped Todos")  # the preview shows what the reply says is kept
    shot(page, "stop-undo-1-kept")

    # Said after a reload too: the history's newest reply.
    page.reload()
    undo = page.wait_for_selector(f"{STOPPED} .turn-kept .undo-turn")
    assert undo.inner_text() == "Undo what this turn wrote"

    # A restore that fails is said, and nothing claims the files went back.
    page.route(
        "**/versions/v1/restore",
        lambda route: route.fulfill(
            status=503,
            content_type="application/json",
            body='{"error": {"code": "unavailable", "message": "try again"}}',
        ),
    )
    undo.click()
    page.locator(f"{STOPPED} .turn-kept", has_text="The undo did not happen").wait_for()
    assert title(owner, app_id) == "Stopped Todos" and len(versions(owner, app_id)) == 2
    page.unroute("**/versions/v1/restore")

    page.click(f"{STOPPED} .turn-kept .undo-turn")
    page.locator("#messages .note", has_text="Restored v1 as v3.").wait_for(timeout=TURN_MS)
    preview_title(page, before)
    assert title(owner, app_id) == before
    newest = versions(owner, app_id)[0]
    assert (newest["id"], newest["kind"], newest["restoredFrom"]) == ("v3", "restore", "v1")
    # The turn's reply is no longer the newest: nothing of it is offered any more.
    assert page.locator(".turn-kept, .retry").count() == 0
    shot(page, "stop-undo-2-undone")
    assert page.errors == []


def test_retry_of_a_turn_that_changed_the_files_offers_the_undo_first_then_changes_them(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app_id, _ = stopped_after_writing(browser, server)
    page.wait_for_selector(f"{STOPPED} .turn-kept")
    entries = len(history(owner, app_id))

    page.click(f"{STOPPED} .retry")
    choice = page.wait_for_selector(f"{STOPPED} .retry-choice")
    assert choice.inner_text().startswith(
        "This turn already changed the files (v2). Undo it first, then retry?"
    )
    shot(page, "stop-undo-3-retry-choice")
    page.click(".retry-choice .retry-cancel")  # Cancel: nothing sent, nothing restored
    page.wait_for_selector(".retry-choice", state="detached")
    assert page.is_visible(f"{STOPPED} .retry")
    assert len(history(owner, app_id)) == entries and len(versions(owner, app_id)) == 2

    page.click(f"{STOPPED} .retry")
    page.click(".retry-choice .undo-retry")
    page.locator("#messages .note", has_text="Restored v1 as v3.").wait_for(timeout=TURN_MS)
    page.wait_for_function(  # the creation's reply, the stopped one, the retry's
        """() => { const replies = document.querySelectorAll('#messages .msg.ai');
                   return replies.length === 3 && replies[2].dataset.turn === 'succeeded'; }""",
        timeout=TURN_MS,
    )
    done = page.locator("#messages .msg.ai").nth(2).element_handle()
    reply = done.inner_text()
    assert "No files were changed" not in reply
    change = done.query_selector('.file-change[data-path="index.html"]')
    assert change is not None and change.get_attribute("data-status") == "modified", reply
    preview_title(page, "Stopped Todos")
    assert title(owner, app_id) == "Stopped Todos"
    made = versions(owner, app_id)
    assert [(v["id"], v["kind"], v["restoredFrom"]) for v in made[:2]] == [
        ("v4", "turn", None),
        ("v3", "restore", "v1"),
    ]
    asked = [e for e in history(owner, app_id) if e["role"] == "user"]
    assert [e["content"] for e in asked[-2:]] == [MESSAGE, MESSAGE]
    assert made[0]["turn"] == asked[-1]["turn"]  # the retry's own turn made v4
    shot(page, "stop-undo-4-retried")
    assert page.errors == []
