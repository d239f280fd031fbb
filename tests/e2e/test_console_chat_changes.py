"""An html turn's reply in the console (issue 26, point 4), in real headless Chromium against
the real server and the offline model: a line per file the turn's code changed (its status,
the lines added and removed, a link that opens the diff of the version the turn made)
instead of the pasted file, the code folded while it streams, the same after a reload; and a
long chat folds its older turns to a line each, opened and closed by a button (mouse and
keyboard), with axe-core finding nothing serious. Screenshots go to
test-artifacts/console-ui/."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.conftest import Server, chat, create
from tests.e2e.test_console_a11y import axe_source, scan
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    api_for,
    browser,
    finished_turns,
    new_page,
    register,
    shot,
)

# What the reply being drawn live showed, kept by the page itself: whether its code came
# folded (a <details> per block) and whether any code was ever drawn unfolded.
LIVE = """
window.__folded = 0; window.__unfolded = 0;
new MutationObserver(() => {
  const answer = document.querySelector('#messages .msg.ai[data-turn="running"] .answer');
  if (!answer) return;
  window.__folded = Math.max(window.__folded, answer.querySelectorAll('details.code-live').length);
  window.__unfolded += answer.querySelectorAll('pre:not(details pre)').length;
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def diff_counts(owner: httpx.Client, app_id: str, version: str) -> dict[str, tuple[int, int]]:
    """Per file, the lines the version's diff adds and removes (the API's own diff)."""
    files = owner.get(f"/api/apps/{app_id}/versions/{version}/diff").json()["files"]
    counts = {}
    for f in files:
        lines = f["diff"].splitlines()
        plus = sum(1 for x in lines if x.startswith("+") and not x.startswith("+++"))
        minus = sum(1 for x in lines if x.startswith("-") and not x.startswith("---"))
        counts[f["path"]] = (plus, minus)
    return counts


def change_line(reply: Any) -> dict[str, Any]:
    line = reply.locator(".answer .file-change")
    assert line.count() == 1, reply.inner_html()
    link = line.locator("a.diff-link")
    return {
        "path": line.get_attribute("data-path"),
        "status": line.get_attribute("data-status"),
        "plus": line.locator(".plus").inner_text(),
        "minus": line.locator(".minus").inner_text(),
        "href": link.get_attribute("href"),
        "version": link.get_attribute("data-version"),
    }


def test_an_html_turn_shows_what_it_changed_and_links_to_the_diff(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page = new_page(browser)
    page.context.add_init_script(LIVE)
    register(page, server)
    page.fill("#prompt", "A page about plovers")
    page.select_option("#mode", "html")
    page.click("#create")
    assert finished_turns(page, 1) == ["succeeded"]
    app_id = page.url.split("#/apps/")[1]
    owner = api_for(page, server)
    # Live, the page's code came folded, one line per block; never pasted.
    assert page.evaluate("window.__folded") >= 1
    assert page.evaluate("window.__unfolded") == 0
    made = change_line(page.locator("#messages .msg.ai").last)
    assert (made["path"], made["status"], made["version"]) == ("index.html", "added", "v1")
    assert made["plus"] == f"+{diff_counts(owner, app_id, 'v1')['index.html'][0]}"

    page.fill("#message", 'Change the title to "Shore Birds"')
    page.click("#send")
    assert finished_turns(page, 2) == ["succeeded", "succeeded"]
    reply = page.locator("#messages .msg.ai").last
    changed = change_line(reply)
    assert diff_counts(owner, app_id, "v2") == {"index.html": (1, 1)}  # the truth, by the API
    assert changed == {
        "path": "index.html",
        "status": "modified",
        "plus": "+1",
        "minus": "−1",
        "href": f"#/apps/{app_id}/versions/v2",
        "version": "v2",
    }
    assert reply.locator(".answer pre, .answer .code-scroll, .answer details").count() == 0
    assert "<h1" not in reply.inner_text() and "</html>" not in reply.inner_text()  # no file
    shot(page, "12-file-changes")
    found = scan(page, axe_source(), "an html reply's change lines")
    assert found == [], "\n".join(found)
    # The stored entry holds the line (a reload draws it); the model's transcript keeps the
    # whole answer, the file included.
    stored = owner.get(f"/api/apps/{app_id}/history?limit=1").json()["entries"][0]
    assert "`index.html`: modified, +1 −1 (diff: v2)" in stored["content"]
    assert "```" not in stored["content"] and "<h1" not in stored["content"]
    context = owner.get(f"/api/apps/{app_id}/context").json()["messages"]
    answers = [str(m["content"]) for m in context if m["role"] == "assistant"]
    assert any("```html" in a and ">Shore Birds</h1>" in a for a in answers)

    # The link opens the Versions tab at v2's diff, in the page (the address stays).
    address = page.url
    reply.locator("a.diff-link").click()
    page.wait_for_selector("#tab-versions[aria-selected=true]")
    page.wait_for_selector("#diff-title >> text=Changes in v2 against v1")
    assert page.url == address
    assert page.evaluate("document.activeElement.id") == "tab-versions"
    diff = page.locator("#version-diff .file-diff[data-path='index.html']")
    added = [x for x in diff.locator(".hl .gi").all_inner_texts() if not x.startswith("+++")]
    assert len(added) == 1 and "Shore Birds" in added[0]

    # After a reload the reply is the same; the link's address opens that diff from anywhere.
    page.reload()
    finished_turns(page, 2)
    assert change_line(page.locator("#messages .msg.ai").last) == changed
    page.goto(f"{server.api}/console/#/apps/{app_id}/versions/v1")
    page.wait_for_selector("#diff-title >> text=v1: the first version, every file added")
    assert page.get_attribute("#tab-versions", "aria-selected") == "true"
    assert page.errors == []


def test_a_long_chat_folds_its_older_turns_to_a_line_each(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page = new_page(browser)
    register(page, server)
    owner = api_for(page, server)
    app = create(owner, "A page about terns", "html")
    asked = [app["initPrompt"], *(f'Change the title to "Terns {n}"' for n in range(2, 9))]
    for message in asked:  # eight turns
        assert chat(owner, app["id"], message).done is not None
    page.goto(f"{server.api}/console/#/apps/{app['id']}")
    finished_turns(page, 8)
    folds = page.locator("#messages > .turn-fold")
    assert folds.count() == 2  # all but the newest six
    first = folds.nth(0)
    assert first.get_attribute("aria-expanded") == "false"
    assert first.locator(".fold-text").inner_text() == "A page about terns"
    assert first.locator(".status").get_attribute("class") == "status succeeded"
    assert folds.nth(1).locator(".fold-text").inner_text() == asked[1]
    assert page.locator("#messages > .msg:visible").count() == 12  # six turns, two each
    # Each folded turn is hidden whole: its message and its reply.
    assert page.locator("#messages > .msg.user:visible", has_text="A page about terns").count() == 0
    page.eval_on_selector("#messages", "m => { m.scrollTop = 0; }")
    shot(page, "13-folded")

    # Keyboard: Tab reaches the header, Enter opens the turn; a click closes it again.
    first.focus()
    page.keyboard.press("Enter")
    assert first.get_attribute("aria-expanded") == "true"
    opened = page.locator("#messages > .msg.user:visible", has_text="A page about terns")
    assert opened.count() == 1
    assert page.locator("#messages > .msg.ai:visible .file-change").count() == 7
    found = scan(page, axe_source(), "a folded chat, one turn open")
    first.click()
    assert first.get_attribute("aria-expanded") == "false"
    assert opened.count() == 0

    # A new turn: the next oldest folds too.
    page.fill("#message", 'Change the title to "Terns 9"')
    page.click("#send")
    assert finished_turns(page, 9)[-1] == "succeeded"
    assert folds.count() == 3
    assert folds.nth(2).locator(".fold-text").inner_text() == asked[2]
    assert page.locator("#messages > .msg:visible").count() == 12
    page.select_option("#theme", "dark")
    found += scan(page, axe_source(), "a folded chat, dark")
    assert found == [], "\n".join(found)
    assert page.errors == []
