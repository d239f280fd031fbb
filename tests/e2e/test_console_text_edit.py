"""Visual text edits in real headless Chromium: in Edit mode, double-click a heading in the
preview, type, Enter — the text is saved as a version of kind ``edit`` without a model turn,
and the preview shows it; a text the platform cannot place alone becomes a model request in
the message box; Esc pressed inside the preview leaves Edit mode. Screenshots go to
test-artifacts/console-ui/."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Server
from tests.e2e.test_console_ui import browser, shot, toast_text  # noqa: F401 (a fixture)
from tests.e2e.test_console_versions import made_app
from tests.e2e.test_crash_points import context
from tests.e2e.test_versions import h1_of, versions_of


def edit_in_place(page: Any, selector: str, text: str) -> None:
    """Double-click ``selector`` in the preview, replace its text with ``text``, Enter."""
    target = page.frame_locator("#preview").locator(selector).first
    target.dblclick()
    page.frame_locator("#preview").locator(f"{selector}[contenteditable]").first.wait_for()
    page.keyboard.press("Control+A")
    page.keyboard.type(text)
    page.keyboard.press("Enter")


def test_a_heading_edited_in_place_is_a_version_without_a_model_turn(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page for a tea shop called Leaf", "html")
    app_id = app["id"]
    told_before = len(context(owner, app_id))
    page.goto(f"{server.api}/console/#/apps/{app_id}")
    frame = page.frame_locator("#preview")
    first = frame.locator("h1").first.inner_text()
    page.click("#edit")
    assert page.get_attribute("#edit", "aria-pressed") == "true"

    edit_in_place(page, "h1", "Leaf & Twig")
    frame.locator("h1", has_text="Leaf & Twig").wait_for()
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('v2')", timeout=60_000
    )
    assert "Text saved as v2" in page.inner_text("#toast")
    versions = versions_of(owner, app_id)
    assert (versions[0]["id"], versions[0]["kind"]) == ("v2", "edit")
    source = owner.get(f"/api/apps/{app_id}/files/index.html").text
    assert h1_of(source) == "Leaf &amp; Twig"
    # The preview was rebuilt from the saved files (the frame reloads them, not the typing).
    frame.locator("h1", has_text="Leaf & Twig").wait_for()
    assert frame.locator("h1[contenteditable]").count() == 0
    # A note for the model; no model turn (a note of the checks the edit broke may follow,
    # once they ran again on the edited preview).
    broke = "[zerocode checks: the user's own edit"
    messages = [m for m in context(owner, app_id) if broke not in m["content"]]
    assert len(messages) == told_before + 1
    assert f'"{first}" to "Leaf & Twig"' in messages[-1]["content"]
    page.locator("#messages", has_text="Changed the text").wait_for()
    shot(page, "text-edit-saved")

    # Esc typed inside the preview (the frame has the focus) leaves Edit mode.
    frame.locator("h1").first.click()
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('#edit').ariaPressed === 'false'")
    assert page.errors == []


def test_a_text_written_twice_becomes_a_model_request(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page about ospreys", "html")
    app_id = app["id"]
    source = owner.get(f"/api/apps/{app_id}/files/index.html")
    heading = h1_of(source.text)
    # Two headings with the same text: which one was meant is not clear from the text alone.
    doubled = source.text.replace(f"<h1>{heading}</h1>", f"<h1>{heading}</h1><h1>{heading}</h1>")
    saved = owner.put(
        f"/api/apps/{app_id}/files/index.html",
        json={"content": doubled},
        headers={"If-Match": source.headers["etag"]},
    )
    assert saved.status_code == 200, saved.text
    page.goto(f"{server.api}/console/#/apps/{app_id}")
    page.frame_locator("#preview").locator("h1").nth(1).wait_for()
    page.click("#edit")
    edit_in_place(page, "h1", "Hawks")
    page.wait_for_function(
        "() => document.querySelector('#message').value.includes('Hawks')", timeout=60_000
    )
    assert "written in 2 places" in toast_text(page)
    assert page.input_value("#message") == 'Change this text to "Hawks"'
    assert heading in page.inner_text("#picked")  # the element goes with the request
    assert [v["kind"] for v in versions_of(owner, app_id)] == ["edit", "turn"]  # nothing new
    page.frame_locator("#preview").locator("h1", has_text=heading).nth(1).wait_for()
    shot(page, "text-edit-ambiguous")
    assert page.errors == []
