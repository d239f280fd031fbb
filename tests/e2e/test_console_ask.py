"""The console's Ask/Build switch (issue 43), in real headless Chromium against the local
server with the offline model: a message sent in Ask mode goes as a question, its answer is
drawn as one (live and after a reload), the app's files and preview stay as they were, and
switching back to Build sends a change again."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Server, chat, create
from tests.e2e.test_console_turns import open_app, send, signed_up
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)

DONE = '#messages .msg.ai:not([data-turn="running"])[data-turn]'


def test_a_question_sent_in_ask_mode_is_answered_as_one_and_changes_nothing(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner = signed_up(browser, server)
    app = create(owner, "A page about otters", "html")
    assert chat(owner, app["id"], "A page about otters").ended is not None
    files = owner.get(f"/api/apps/{app['id']}/files/index.html").text
    versions = owner.get(f"/api/apps/{app['id']}/versions").json()
    open_app(page, server.api, app["id"])
    page.wait_for_selector(DONE)
    build, ask = (
        page.locator('.mode-switch [data-mode="build"]'),
        page.locator('.mode-switch [data-mode="ask"]'),
    )
    assert build.get_attribute("aria-pressed") == "true"
    ask.click()
    assert ask.get_attribute("aria-pressed") == "true"
    assert build.get_attribute("aria-pressed") == "false"
    assert page.locator("#send").inner_text() == "Send question"
    send(page, 'Where is "Try it"?')
    answer = f"{DONE}.ask"
    page.wait_for_selector(answer, timeout=TURN_MS)
    assert page.locator(f"{answer} .mode-tag").inner_text().startswith("Answer")
    assert "index.html (line" in page.locator(f"{answer} .answer").inner_text()
    assert page.locator(f"{answer} .status").inner_text()  # its badge
    assert page.locator("#messages .msg.user.ask .mode-tag").inner_text() == "Question"
    shot(page, "ask-answer")
    # Nothing changed: the file, the versions.
    assert owner.get(f"/api/apps/{app['id']}/files/index.html").text == files
    assert owner.get(f"/api/apps/{app['id']}/versions").json() == versions
    # After a reload the history draws the question and the answer as such.
    page.reload()
    page.wait_for_selector(f"{DONE}.ask .mode-tag")
    assert page.locator("#messages .msg.user.ask").count() == 1
    # Build again: a change is sent as one.
    page.locator('.mode-switch [data-mode="build"]').click()
    send(page, 'Change the title to "Otters here"')
    built = page.locator('#messages .msg.ai:not(.ask)[data-turn="succeeded"]')
    built.nth(1).wait_for(timeout=TURN_MS)  # the creation's reply, then the change's
    assert owner.get(f"/api/apps/{app['id']}/files/index.html").text != files
    assert page.errors == []
