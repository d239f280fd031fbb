"""The console's Data tab (issue 39, point 6), in real Chromium against `zerocode serve`:
the builder sees every end user's records in the preview's space, searches them, removes an
end user, resets the preview to its seed records, and sees the live space apart; the Checks
tab lists the platform's own check of the data's rules (point 5)."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Server
from tests.e2e.test_console import browser  # noqa: F401 (the fixture)
from tests.e2e.test_data_api import data_app, preview_of
from tests.e2e.test_data_browser import console_owner
from tests.e2e.test_versions import last_message
from zerocode.engine.data_edit import note_of


def test_the_data_tab_shows_every_users_records_and_resets_the_preview(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    console, owner = console_owner(browser, server)
    app_id = data_app(owner, "Notes for a bakery called Focaccia")
    for name in ("ada", "bob"):
        visitor = preview_of(owner, app_id)
        visitor.sign_up(name)
        assert visitor.create("notes", {"title": f"{name}'s <b>note</b>"}).status_code == 201

    console.goto(f"{server.api}/console/#/apps/{app_id}")
    console.click("#tab-data")
    console.wait_for_selector("#data-collections button[data-collection='notes']")
    console.click("#data-collections button[data-collection='notes']")
    console.wait_for_selector('#data-records td:has-text("bob\'s <b>note</b>")')
    titles = console.eval_on_selector_all(
        "#data-records tbody tr td:first-child", "l => l.map(e => e.textContent)"
    )
    assert titles == ["bob's <b>note</b>", "ada's <b>note</b>"]  # newest first, as text
    assert console.query_selector("#data-records b") is None  # never markup
    console.fill("#data-search", "ada")
    console.wait_for_function(
        "() => document.querySelectorAll('#data-records tbody tr').length === 1"
    )
    users = console.eval_on_selector_all(
        "#data-users li > span:first-child", "l => l.map(e => e.textContent)"
    )
    assert users == ["ada", "bob"]

    console.on("dialog", lambda dialog: dialog.accept())
    console.click("#data-users button[aria-label='Remove the user bob']")
    console.wait_for_function("() => [...document.querySelectorAll('#data-users li')].length === 1")
    console.fill("#data-search", "")
    console.fill("#data-field-title", "Added in the console")
    console.check("#data-field-done")
    console.click("#data-add-button")
    console.wait_for_selector("#data-records td:has-text('Added in the console')")
    told = last_message(owner, app_id)["content"]
    fields = '{"title":"Added in the console","done":true}'
    assert told == note_of(f"added a record to notes in the preview's data: {fields}")
    console.click("#data-records tr:has-text('Added in the console') button")
    console.wait_for_function(
        "() => !document.querySelector('#data-records').textContent.includes('Added in the')"
    )
    assert "deleted the record" in last_message(owner, app_id)["content"]
    console.click("#data-reset")
    console.wait_for_selector("#data-collections button[data-collection='notes']:has-text('(0)')")
    # The users' list is read again beside the records: waited for, not read at once.
    console.wait_for_selector("#data-users:has-text('No one has signed up.')")
    console.click("#data-space-live")
    console.wait_for_selector("#data-summary:has-text('Nothing is published yet')")

    # The Checks tab lists the platform's own check of the notes' rules beside the model's,
    # with no retirement offered (this server runs no browser: it is not run; it runs and
    # passes in tests/e2e/test_data_apps.py).
    console.click("#tab-checks")
    platform = "#checks-list li[data-check='access-notes']"
    console.wait_for_selector(f"{platform}[data-status='not_run']")
    assert console.query_selector("#checks-list li[data-check='c1'] button.retire") is not None
    assert console.query_selector(f"{platform} .platform-check") is not None
    assert console.query_selector(f"{platform} button.retire") is None
    assert console.errors == []
