"""Keyboard and focus in the console (issue 38, point 5), in real headless Chromium against a
real server with the offline model: the focus goes where the next action is (the prompt after
registering and signing in, the message box after Create and after each turn, unless the
builder put it elsewhere); Edit mode stays on through a pick and a turn (paused while the turn
runs), so the next double-click edits the new preview's text; and picking an element and
editing its text in place work from the keyboard alone (Tab into the preview, Enter picks, F2
edits). ``[[slow]]`` makes the offline model stream for ~5 s before it writes the page."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Server
from tests.e2e.test_console_turns import history, open_app
from tests.e2e.test_console_ui import TURN_MS, browser, new_page, register, shot  # noqa: F401
from tests.e2e.test_console_versions import made_app
from tests.e2e.test_versions import h1_of, versions_of

RUNNING = "#messages [data-turn='running']"
SUCCEEDED = "#messages .msg.ai[data-turn='succeeded']"


def focused_id(page: Any) -> str:
    return str(page.evaluate("document.activeElement ? document.activeElement.id : ''"))


def focus_is(page: Any, element_id: str, *, while_running: bool = False) -> None:
    """Until the console's focus is on ``#element_id`` (and, if asked, a turn still runs)."""
    page.wait_for_function(
        "([id, css]) => document.activeElement && document.activeElement.id === id"
        " && (!css || document.querySelector(css) !== null)",
        arg=[element_id, RUNNING if while_running else ""],
        timeout=TURN_MS,
    )


def turns_done(page: Any, count: int) -> None:
    page.wait_for_function(
        "([css, n]) => document.querySelectorAll(css).length >= n",
        arg=[SUCCEEDED, count],
        timeout=TURN_MS,
    )
    page.wait_for_selector(RUNNING, state="detached", timeout=TURN_MS)


def in_preview(page: Any) -> Any:
    """The preview frame as Playwright reaches it (its document is replaced on each load)."""
    return page.query_selector("#preview").content_frame()


def preview_focus(page: Any) -> str:
    """The tag of what has the focus inside the preview ('' when the console has it)."""
    if page.evaluate("document.activeElement && document.activeElement.id") != "preview":
        return ""
    return str(in_preview(page).evaluate("document.activeElement.tagName"))


def picking(page: Any) -> None:
    """Until the preview's picker is in edit mode (it says so with its crosshair cursor)."""
    page.frame_locator("#preview").locator("html[style*=crosshair]").wait_for(timeout=TURN_MS)


def tab_until(page: Any, reached: Any, limit: int = 40) -> None:
    """Press Tab until ``reached()`` says so; fails after ``limit`` presses."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if reached():
            return
    raise AssertionError(f"not reached in {limit} Tabs; focus on {focused_id(page)!r}")


def test_the_focus_goes_where_the_next_action_is(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page = new_page(browser)
    account = register(page, server)
    focus_is(page, "prompt")  # registered: the prompt, not <body>

    page.click("#logout")
    page.wait_for_selector("input[name=account]")
    page.fill("input[name=account]", account)
    page.fill("input[name=password]", "correct horse")
    page.keyboard.press("Enter")
    focus_is(page, "prompt")  # signed in: the prompt again

    page.keyboard.type("A landing page for a bakery [[slow]]")
    page.select_option("#mode", "html")
    page.click("#create")
    # The app page: the message box at once, while the first turn still runs.
    focus_is(page, "message", while_running=True)
    shot(page, "keyboard-1-after-create")
    turns_done(page, 1)
    assert focused_id(page) == "message"

    # A turn sent with the Send button (the focus on the button): the message box after it.
    page.fill("#message", 'Change the title to "Fresh Loaves" [[slow]]')
    page.click("#send")
    page.wait_for_selector(RUNNING)
    assert focused_id(page) != "message"
    turns_done(page, 2)
    focus_is(page, "message")
    page.frame_locator("#preview").locator("h1", has_text="Fresh Loaves").wait_for()

    # A focus the builder put elsewhere meanwhile (the Versions tab) stays there.
    page.fill("#message", 'Change the title to "Warm Loaves" [[slow]]')
    page.keyboard.press("Enter")
    page.wait_for_selector(RUNNING)
    page.focus("#tab-versions")
    turns_done(page, 3)
    page.frame_locator("#preview").locator("h1", has_text="Warm Loaves").wait_for()
    assert focused_id(page) == "tab-versions"
    assert page.errors == []


def test_edit_mode_stays_on_through_a_pick_and_a_turn_and_the_next_double_click_edits(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A page about herons", "html")
    open_app(page, server.api, app["id"])
    preview = page.frame_locator("#preview")
    preview.locator("h1", has_text="Herons").wait_for()

    page.click("#edit")
    picking(page)
    preview.locator("h1").first.click()
    assert page.wait_for_selector("#picked").inner_text().startswith("<h1> Herons")
    page.keyboard.type("Make it green [[slow]]")  # the pick put the focus in the message box
    page.keyboard.press("Enter")
    page.wait_for_selector(RUNNING)
    # While the turn runs: paused, not off (the button disabled but still pressed), and a
    # click in the preview picks nothing.
    assert page.is_disabled("#edit")
    assert page.get_attribute("#edit", "aria-pressed") == "true"
    preview.locator("html:not([style*=crosshair])").wait_for()
    preview.locator("h1").first.click()
    page.wait_for_timeout(600)  # a click's pick is sent 350 ms late: none came
    assert page.query_selector("#picked") is None
    shot(page, "keyboard-2-edit-paused")

    turns_done(page, 2)
    asked = [e for e in history(owner, app["id"]) if e["role"] == "user"]
    assert asked[-1]["element"]["text"] == "Herons"  # the pick went with the message
    # Edit mode is on again, in the new preview, without a click.
    assert page.get_attribute("#edit", "aria-pressed") == "true"
    assert page.is_enabled("#edit")
    picking(page)
    heading = preview.locator("h1").first
    heading.dblclick()
    editing = preview.locator("h1[contenteditable]")
    editing.wait_for()  # edited in place, not a text selection
    page.keyboard.type("Grey Herons")
    page.keyboard.press("Enter")
    preview.locator("h1", has_text="Grey Herons").wait_for()
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('Text saved')",
        timeout=TURN_MS,
    )
    assert versions_of(owner, app["id"])[0]["kind"] == "edit"
    assert h1_of(owner.get(f"/api/apps/{app['id']}/files/index.html").text) == "Grey Herons"
    assert page.get_attribute("#edit", "aria-pressed") == "true"  # a text edit keeps it too
    assert page.errors == []


def test_picking_and_editing_text_in_place_from_the_keyboard_alone(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app = made_app(browser, server, "A landing page for a bakery", "html")
    heading = h1_of(owner.get(f"/api/apps/{app['id']}/files/index.html").text)
    open_app(page, server.api, app["id"])
    page.frame_locator("#preview").locator("h1", has_text=heading).wait_for()
    focus_is(page, "message")

    # From the message box to Edit mode's toggle, and on.
    tab_until(page, lambda: focused_id(page) == "edit")
    page.keyboard.press("Enter")
    assert page.get_attribute("#edit", "aria-pressed") == "true"
    assert "F2" in page.inner_text("#announcer")
    picking(page)

    # Tab goes on into the preview, through its elements, to the heading; Enter picks it.
    tab_until(page, lambda: preview_focus(page) == "H1")
    outline = in_preview(page).evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"  # the focused element is outlined
    shot(page, "keyboard-3-heading-focused")
    page.keyboard.press("Enter")
    chip = page.wait_for_selector("#picked")
    assert chip.inner_text().startswith(f"<h1> {heading}")
    assert "Picked <h1>" in page.inner_text("#announcer")
    focus_is(page, "message")  # the next thing: what to do with it

    # Back into the preview; F2 edits the heading's text in place, Enter saves it.
    tab_until(page, lambda: preview_focus(page) == "H1")
    page.keyboard.press("F2")
    page.frame_locator("#preview").locator("h1[contenteditable]").wait_for()
    page.keyboard.type("Fresh Bread")  # the old text is selected: typing replaces it
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('v2')", timeout=TURN_MS
    )
    assert h1_of(owner.get(f"/api/apps/{app['id']}/files/index.html").text) == "Fresh Bread"
    assert [v["kind"] for v in versions_of(owner, app["id"])] == ["edit", "turn"]
    page.frame_locator("#preview").locator("h1", has_text="Fresh Bread").wait_for()
    shot(page, "keyboard-4-text-saved")

    # Esc leaves Edit mode; the preview's elements leave the Tab order again.
    picking(page)
    assert in_preview(page).locator("[data-zc-stop]").count() > 0
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('#edit').ariaPressed === 'false'")
    page.frame_locator("#preview").locator("html:not([style*=crosshair])").wait_for()
    assert in_preview(page).locator("[data-zc-stop], [tabindex]").count() == 0
    assert page.errors == []
