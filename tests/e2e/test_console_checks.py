"""The console and acceptance checks (issue 25), in real headless Chromium against a real
server with the offline model and the checks run in Chromium: a turn's checklist is drawn
as its check events arrive (each line its mark, id and description; a failure its evidence)
and its ending line tallies them; the Checks tab lists the app's suite as the API has it,
retires a check with a reason, and keeps the "require passing checks to deploy" setting;
the builds table shows each deploy's tally; a reload draws the same checklist from the
history. Screenshots go to test-artifacts/console-ui/."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, create, running, wait_for_build
from tests.e2e.test_console_text_edit import edit_in_place
from tests.e2e.test_console_turns import live_text, open_app, send, signed_up
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    new_page,
    shot,
)
from tests.e2e.test_crash_points import context

# The check lines a reply showed while its turn ran, as the page saw them (installed before
# the console's scripts): id → status, in the order they came.
CHECKLIST = """(() => {
window.__checks = [];
const drawn = new WeakSet();
new MutationObserver(() => {
  const running = '#messages .msg.ai[data-turn="running"] li.check';
  for (const li of document.querySelectorAll(running)) {
    if (drawn.has(li)) continue;
    drawn.add(li);
    window.__checks.push([li.dataset.check, li.dataset.status]);
  }
}).observe(document, { subtree: true, childList: true });
})();
"""

MARKS = {"passed": "✓", "failed": "✗", "not_run": "–"}


@pytest.fixture(scope="module")
def server(checking_server: Server) -> Server:
    """The test process's server with the runtime check (and so the checks) in Chromium
    (tests/e2e/conftest.py)."""
    return running(checking_server)


def suite(owner: httpx.Client, app_id: str) -> dict[str, Any]:
    response = owner.get(f"/api/apps/{app_id}/checks")
    assert response.status_code == 200, response.text
    return dict(response.json())


def checklist(page: Any) -> list[tuple[str, str, str]]:
    """The newest reply's check lines: id, status and text."""
    rows = page.eval_on_selector_all(
        "#messages .msg.ai:last-of-type li.check",
        "els => els.map(e => [e.dataset.check, e.dataset.status, e.innerText])",
    )
    return [(str(i), str(s), str(x)) for i, s, x in rows]


def tally_text(checks: dict[str, int]) -> str:
    parts = [
        f"{checks[key]} {word}"
        for key, word in (("passed", "passed"), ("failed", "failed"), ("notRun", "not run"))
        if checks.get(key)
    ]
    return "Checks: " + ", ".join(parts)


def built_with_checks(
    browser: Any,  # noqa: F811
    server: Server,
    prompt: str = "A page about otters",
) -> tuple[Any, httpx.Client, dict[str, Any]]:
    """A new account's app made by a turn sent from the console, followed to its end."""
    page, owner = signed_up(browser, server)
    page.context.add_init_script(CHECKLIST)  # for reloads; this page has it now
    page.evaluate(CHECKLIST)
    app = create(owner, prompt, "html")
    open_app(page, server.api, app["id"])
    send(page, app["initPrompt"])
    page.wait_for_selector(
        '#messages .msg.ai:not([data-turn="running"])[data-turn]', timeout=TURN_MS
    )
    return page, owner, app


def test_a_turns_checklist_is_drawn_live_tallied_and_drawn_again_after_a_reload(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = built_with_checks(browser, server)
    seen = page.evaluate("window.__checks")
    assert seen, "the turn streamed no check event: does the offline model state checks?"
    assert {status for _, status in seen} <= set(MARKS)

    has = suite(owner, app["id"])
    live = [c for c in has["checks"] if c["status"] != "retired"]
    ran = sorted({i for i, _ in seen}, key=lambda i: int(i[1:]))
    assert live and [c["id"] for c in live] == ran
    lines = checklist(page)
    newest = {i: s for i, s, _ in lines}
    assert newest == {c["id"]: c["status"] for c in live}
    for check_id, status, text in lines:  # the mark says the status, not the colour alone
        check = next(c for c in live if c["id"] == check_id)
        assert text.startswith(MARKS[status]) and check["description"] in text
    if any(c["status"] == "failed" for c in live):  # a failure shows where and what
        page.wait_for_selector("#messages li.check.failed .evidence dl")

    run = has["runs"][0]["checks"]
    tally = page.inner_text("#messages .msg.ai:last-of-type .checks-tally")
    assert tally == tally_text(run)
    assert "checks ·" not in live_text(page)  # the answer's checks block is not drawn as code
    listed_once(page, live)
    shot(page, "checks-0-turn")

    # After a reload the stored reply draws the same lines and tally.
    page.reload()
    page.wait_for_selector("#messages .msg.ai li.check")
    assert [(i, s) for i, s, _ in checklist(page)] == [(i, s) for i, s, _ in lines]
    assert page.inner_text("#messages .msg.ai:last-of-type .checks-tally") == tally
    listed_once(page, live)
    assert page.errors == []


def listed_once(page: Any, checks: list[dict[str, Any]]) -> None:
    """Issue 38: each check once in the newest reply (its verdict), not also as the step that
    added it or the model's echo of that step."""
    reply = page.inner_text("#messages .msg.ai:last-of-type")
    for check in checks:
        assert reply.count(check["description"]) == 1, reply
    assert "added check" not in reply and "Acceptance checks" not in reply, reply


def test_a_vue_reply_lists_each_check_once_and_keeps_its_sentences_apart(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    """The Vue turn's three model calls ("…project." "Adding the acceptance checks…"
    "Created…") stream as paragraphs, not run together; its add_check steps and the
    answer's echo of them give way to each check's one verdict line, live and reloaded."""
    page, owner = signed_up(browser, server)
    app = create(owner, "A Vue todo app with an about page", "vue_project")
    open_app(page, server.api, app["id"])
    send(page, app["initPrompt"])
    page.wait_for_selector(
        '#messages .msg.ai:not([data-turn="running"])[data-turn]', timeout=TURN_MS
    )
    said = live_text(page)
    assert (
        "Creating the Vue 3 + Vite project.\n\nAdding the acceptance checks of this request."
        "\n\nCreated Todo App" in said
    ), said
    checks = [c for c in suite(owner, app["id"])["checks"] if c["status"] != "retired"]
    assert len(checks) == 3, checks
    listed_once(page, checks)
    page.reload()
    page.wait_for_selector("#messages .msg.ai li.check")
    listed_once(page, checks)
    assert page.errors == []


def test_the_checks_tab_lists_the_suite_and_retires_a_check_with_a_reason(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = built_with_checks(browser, server)
    page.click("#tab-checks")
    page.wait_for_selector("#checks-list li[data-check]")
    has = suite(owner, app["id"])
    shown = page.eval_on_selector_all(
        "#checks-list li[data-check]", "els => els.map(e => [e.dataset.check, e.dataset.status])"
    )
    assert sorted(map(tuple, shown)) == sorted((c["id"], c["status"]) for c in has["checks"])
    first = has["checks"][0]
    item = page.locator(f'#checks-list li[data-check="{first["id"]}"]')
    assert first["description"] in item.inner_text()
    item.locator("details.check-spec summary").click()  # steps and expectations, readable
    assert item.locator(".check-expect li").count() == len(first["expect"])
    assert item.locator(".verdicts li").count() == len(first["history"])
    assert page.is_checked("#require-checks") is bool(has["requireChecks"])
    shot(page, "checks-1-tab")

    reason = "The user asked for a different page"
    item.locator("button.retire").click()
    page.fill(".retire-reason", reason)
    page.click(".retire-confirm")
    retired = page.wait_for_selector(
        f'#checks-list li[data-check="{first["id"]}"][data-status="retired"]'
    )
    assert reason in retired.inner_text()
    assert retired.query_selector("button.retire") is None
    after = next(c for c in suite(owner, app["id"])["checks"] if c["id"] == first["id"])
    assert after["status"] == "retired" and after["retired"]["reason"] == reason
    shot(page, "checks-2-retired")

    # The setting: deploys need passing checks.
    page.click("#require-checks")
    page.wait_for_function(
        "() => !document.querySelector('#require-checks').disabled", timeout=10_000
    )
    assert owner.get(f"/api/apps/{app['id']}").json()["requireChecks"] is True
    assert page.errors == []


def test_the_builds_table_shows_each_deploys_checks(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = built_with_checks(browser, server)
    page.click("#deploy")
    page.wait_for_selector("#panel tr[data-build] td.build-checks", timeout=TURN_MS)
    builds = owner.get(f"/api/apps/{app['id']}/builds?purpose=deploy&limit=20").json()["builds"]
    wait_for_build(owner, app["id"], builds[0]["id"])
    cell = page.inner_text(f'#panel tr[data-build="{builds[0]["id"]}"] td.build-checks')
    tally = builds[0].get("checks")
    if tally is None:
        assert cell.startswith("—")
    else:  # "✓3 ✗1", and the same in words for a screen reader
        short = " ".join(
            f"{mark}{tally[key]}"
            for key, mark in (("passed", "✓"), ("failed", "✗"), ("notRun", "–"))
            if tally.get(key)
        )
        assert cell.startswith(short) and tally_text(tally) in cell
    shot(page, "checks-3-builds")

    narrow = new_page(browser, width=390)
    narrow.goto(f"{server.api}/console/")
    token = page.evaluate("localStorage.getItem('zc_token')")
    narrow.evaluate("t => localStorage.setItem('zc_token', t)", token)
    narrow.goto(f"{server.api}/console/#/apps/{app['id']}")
    narrow.wait_for_selector("#message")
    narrow.click("#tab-checks")
    narrow.wait_for_selector("#checks-list li[data-check]")
    width = narrow.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, width  # nothing wider than the phone
    shot(narrow, "checks-4-phone")
    assert page.errors == [] and narrow.errors == []


def test_a_failed_check_shows_its_evidence_and_screenshot_and_its_repair(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    """``[[flaw=potemkin]]``: the button does nothing, so a check fails; the repair round
    fixes it and the checks pass."""
    page, owner, app = built_with_checks(browser, server, "A page about otters [[flaw=potemkin]]")
    seen = page.evaluate("window.__checks")
    failed = [i for i, status in seen if status == "failed"]
    assert failed, seen
    assert (failed[0], "passed") in [tuple(x) for x in seen[seen.index([failed[0], "failed"]) :]]
    repair = page.inner_text("#messages .msg.ai:last-of-type li.repair")
    assert "the acceptance checks failed" in repair
    line = page.locator(f'#messages li.check.failed[data-check="{failed[0]}"]').first
    assert "expected" in line.inner_text() and "found" in line.inner_text()
    # The screenshot is fetched with the token and shown as a thumbnail that enlarges.
    thumb = line.locator(".shot-button img")
    page.wait_for_function(
        "el => el.src.startsWith('data:image/png')", arg=thumb.element_handle(), timeout=10_000
    )
    line.locator(".shot-button").click()
    page.wait_for_selector("#shot-dialog[open] img[src^='data:image/png']")
    shot(page, "checks-5-screenshot")
    page.click("#shot-dialog button.close")
    assert page.is_hidden("#shot-dialog")
    run = suite(owner, app["id"])["runs"][0]["checks"]
    assert run["failed"] == 0
    assert page.inner_text("#messages .msg.ai:last-of-type .checks-tally") == tally_text(run)
    assert page.errors == []


def test_checks_still_failing_show_in_the_tab_and_stop_a_deploy_that_requires_them(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    """``[[flaw=potemkin-stubborn]]``: the turn ends with a check failing."""
    page, owner, app = built_with_checks(
        browser, server, "A page about otters [[flaw=potemkin-stubborn]]"
    )
    assert page.locator('#messages .msg.ai[data-turn="failed"]').count() == 1
    assert "failed" in page.inner_text("#messages .msg.ai:last-of-type .checks-tally")
    page.click("#tab-checks")
    item = page.wait_for_selector('#checks-list li[data-status="failed"]')
    assert "expected" in item.inner_text()
    page.wait_for_selector('#checks-list li[data-status="failed"] img.shot[src^="data:image/png"]')
    dots = item.query_selector_all(".verdicts li")
    assert dots and all(d.get_attribute("aria-label") for d in dots)  # not by colour alone
    page.click("#require-checks")
    page.wait_for_function("() => !document.querySelector('#require-checks').disabled")
    shot(page, "checks-6-failing")

    page.click("#deploy")
    status = page.wait_for_selector("#deploy-status.failed")
    said = owner.post(f"/api/apps/{app['id']}/deploy", json={}).json()["error"]
    assert said["code"] == "checks_failed"
    assert status.inner_text() == f"Not deployed: {said['message']}"
    assert owner.get(f"/api/apps/{app['id']}/builds?purpose=deploy").json()["builds"] == []
    shot(page, "checks-7-deploy-refused")
    assert page.errors == []


def test_a_heading_edited_by_hand_reruns_the_checks_and_its_check_follows_the_edit(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    """Issue 38: the heading edited in place; the checks run again on their own; the heading's
    check shows "Your edit changed this"; updated to what the page shows, it passes, and a
    deploy that requires passing checks goes through."""
    page, owner, app = built_with_checks(browser, server, "A page for a bakery called Bakery")
    app_id = app["id"]
    assert owner.patch(f"/api/apps/{app_id}", json={"requireChecks": True}).status_code == 200
    heading = next(c for c in suite(owner, app_id)["checks"] if "heading" in c["description"])
    assert heading["status"] == "passed"
    page.click("#edit")
    edit_in_place(page, "h1", "Fresh Bread")
    page.frame_locator("#preview").locator("h1", has_text="Fresh Bread").wait_for()
    page.click("#edit")

    page.click("#tab-checks")  # the tab polls while the checks run on the edited preview
    item = page.locator(f'#checks-list li[data-check="{heading["id"]}"]')
    item.locator(".edit-changed").wait_for(timeout=TURN_MS)
    assert "Your edit changed this" in item.inner_text()
    assert item.locator("button.undo-edit").is_visible()  # the third choice: restore v1
    shot(page, "checks-8-edit-changed")

    item.locator("button.update-check").click()
    page.locator(f'#checks-list li[data-check="{heading["id"]}"][data-status="retired"]').wait_for()
    updated = page.locator('#checks-list li[data-status="passed"]', has_text="Fresh Bread")
    updated.wait_for(timeout=TURN_MS)  # its run on the preview, shown when it came
    assert not suite(owner, app_id)["running"]
    told = context(owner, app_id)[-1]["content"]
    assert "the edit is deliberate" in told
    shot(page, "checks-9-updated")

    page.click("#deploy")
    page.wait_for_selector("#panel tr[data-build]", timeout=TURN_MS)
    builds = owner.get(f"/api/apps/{app_id}/builds?purpose=deploy").json()["builds"]
    assert builds and builds[0]["checks"]["failed"] == 0 and builds[0]["checks"]["notRun"] == 0
    assert page.locator("#deploy-status.failed").count() == 0
    assert page.errors == []
