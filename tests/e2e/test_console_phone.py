"""The console on a 390×844 phone (issue 26) in real headless Chromium: the app page's Chat /
Preview switch puts the preview first and in view with one tap, the offline notice folds to
one line (and stays folded), nothing is wider than the screen, and the builds table scrolls
inside its box so Roll back is reachable. Screenshots go to test-artifacts/console-ui/."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Server
from tests.e2e.test_console_a11y import (  # noqa: F401 (fixtures)
    World,
    browser,
    new_page,
    open_app,
    shot,
    signed_in,
    world,
)

PHONE = {"width": 390, "height": 844}


def overflow(page: Any) -> int:
    return int(page.evaluate("document.documentElement.scrollWidth"))


def test_the_offline_notice_folds_to_a_line_on_a_phone(
    browser: Any,  # noqa: F811
    server: Server,
    world: World,  # noqa: F811
) -> None:
    page = new_page(browser, **PHONE)
    signed_in(page, server, world.token)
    notice = page.wait_for_selector("#offline-notice")
    assert "offline scripted model answers" in notice.inner_text()
    toggle = "#offline-notice .notice-toggle"
    shot(page, "phone-1-home-folded", full=False)
    assert page.get_attribute(toggle, "aria-expanded") == "false"  # folded on a phone
    assert not page.is_visible("#offline-notice-body")
    assert (notice.bounding_box() or {})["height"] < 130
    assert page.locator("#prompt").bounding_box()["y"] < 420  # the prompt is on the first screen
    assert overflow(page) <= 390
    page.click(toggle)
    assert page.get_attribute(toggle, "aria-expanded") == "true"
    assert (
        page.is_visible("#offline-notice-body") and "ZEROCODE_MODEL_BASE_URL" in notice.inner_text()
    )
    page.click(toggle)
    page.reload()
    page.wait_for_selector("#offline-notice")
    assert page.get_attribute(toggle, "aria-expanded") == "false"  # the choice is kept
    assert page.evaluate("localStorage.getItem('zc_notice')") == "folded"
    assert page.errors == []


def test_the_preview_is_one_tap_away_and_roll_back_is_reachable(
    browser: Any,  # noqa: F811
    server: Server,
    world: World,  # noqa: F811
) -> None:
    page = new_page(browser, **PHONE)
    open_app(page, server, world)
    assert page.is_visible("#message") and page.is_visible("#show-preview")
    assert page.get_attribute("#show-chat", "aria-pressed") == "true"
    chat_y = page.locator("#chat-section").bounding_box()["y"]
    assert chat_y < page.locator("#preview-section").bounding_box()["y"]  # the chat first
    assert page.locator("#message").bounding_box()["y"] < 844  # the message box on the first screen
    assert overflow(page) <= 390
    shot(page, "phone-2-chat", full=False)

    page.click("#show-preview")  # one tap
    assert page.get_attribute("#show-preview", "aria-pressed") == "true"
    assert page.get_attribute("#show-chat", "aria-pressed") == "false"
    assert page.is_visible("#preview")
    # The preview's section comes first now, scrolled to; the chat is still there below it.
    assert (
        page.locator("#preview-section").bounding_box()["y"]
        < page.locator("#chat-section").bounding_box()["y"]
    )
    box = page.locator("#preview").bounding_box()
    assert box is not None and 0 <= box["y"] < 844 / 2, box  # high on the screen, in view
    assert overflow(page) <= 390
    shot(page, "phone-3-preview", full=False)

    # The builds table scrolls sideways inside its box; the page does not.
    rollback = page.locator("#panel .rollback").first
    rollback.scroll_into_view_if_needed()
    box = rollback.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    assert overflow(page) <= 390
    scrolled = page.eval_on_selector("#panel .table-wrap", "w => w.scrollLeft")
    assert scrolled > 0  # reached by scrolling the table, not the page
    shot(page, "phone-4-builds-scrolled", full=False)
    rollback.click()
    page.wait_for_selector("#toast:not([hidden])")
    assert page.errors == []


def test_a_picked_element_brings_a_phone_back_to_the_chat(
    browser: Any,  # noqa: F811
    server: Server,
    world: World,  # noqa: F811
) -> None:
    page = new_page(browser, **PHONE)
    open_app(page, server, world)
    page.click("#show-preview")
    page.click("#edit")
    assert page.get_attribute("#edit", "aria-pressed") == "true"
    page.frame_locator("#preview").locator("h1").click()
    page.wait_for_selector("#picked")
    assert page.get_attribute("#show-chat", "aria-pressed") == "true"
    assert page.is_visible("#message") and page.is_visible("#picked")
    assert page.evaluate("document.activeElement.id") == "message"
    shot(page, "phone-5-picked", full=False)
    assert page.errors == []
