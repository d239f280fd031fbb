"""An element picked in the preview names the preview build it was picked in, and a pick of
an older preview is never sent (issue 24, point 4), in real headless Chromium against a real
server with the offline model: while a turn runs Edit mode is paused (the button disabled,
still pressed: issue 38) and nothing can be picked, so no pick outlives the turn's new
preview; a pick the console still holds when the preview moved on behind its back (another
tab's turn) is refused by the API (409 ``preview_out_of_date``), dropped, and picked again in
the new preview.
``[[slow]]`` makes the offline model stream for ~5 s before it writes the page."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.conftest import Server, chat, create, shown_build
from tests.e2e.test_console_turns import history, open_app, send, signed_up, wait_live
from tests.e2e.test_console_ui import TURN_MS, browser, shot  # noqa: F401 (a fixture)


def herons(chromium: Any, server: Server) -> tuple[Any, httpx.Client, str, str]:
    """A signed-in console on a made page about herons: the page, the owner's API client,
    the app's id and the preview build its frame shows."""
    page, owner = signed_up(chromium, server)
    app = create(owner, "A page about herons", "html")
    assert chat(owner, app["id"], app["initPrompt"]).done is not None
    shown = shown_build(owner, app["id"])
    open_app(page, server.api, app["id"])
    page.frame_locator("#preview").locator("h1", has_text="Herons").wait_for()
    frame_shows(page, shown)
    return page, owner, app["id"], shown


def frame_shows(page: Any, build: str) -> None:
    """Until the console says its frame shows ``build``."""
    page.wait_for_function("b => document.querySelector('#preview').dataset.build === b", arg=build)


def pick_h1(page: Any) -> Any:
    """Edit mode on (it stays on through turns: turned on only if off), the preview's first
    heading picked: the chip."""
    if page.get_attribute("#edit", "aria-pressed") != "true":
        page.click("#edit")
    assert page.get_attribute("#edit", "aria-pressed") == "true"
    page.frame_locator("#preview").locator("html[style*=crosshair]").wait_for()  # picking
    page.frame_locator("#preview").locator("h1").first.click()
    return page.wait_for_selector("#picked")


SUCCEEDED = "#messages .msg.ai[data-turn='succeeded']"


def succeeded(page: Any) -> int:
    return int(page.locator(SUCCEEDED).count())


def one_more_succeeded(page: Any, before: int) -> None:
    page.wait_for_function(
        "([css, n]) => document.querySelectorAll(css).length > n",
        arg=[SUCCEEDED, before],
        timeout=TURN_MS,
    )


def test_nothing_is_picked_while_a_turn_runs_so_no_pick_outlives_its_preview(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app_id, first = herons(browser, server)
    preview = page.frame_locator("#preview")

    pick_h1(page)
    page.click("#picked button")  # removed: the turn's message names no element
    assert page.query_selector("#picked") is None
    send(page, 'Change the title to "Slow Herons" [[slow]]')
    wait_live(page, "2… ")
    # Edit mode stays as the builder set it (issue 38) but picks nothing meanwhile.
    assert page.is_disabled("#edit")
    assert page.get_attribute("#edit", "aria-pressed") == "true"
    assert page.query_selector("#picked") is None
    preview.locator("html:not([style*=crosshair])").wait_for()
    preview.locator("h1").first.click()  # picking is paused: a click picks nothing
    page.wait_for_timeout(600)
    assert page.query_selector("#picked") is None
    shot(page, "stale-pick-0-turn-running")

    page.wait_for_selector('#messages .msg.ai[data-turn="succeeded"]', timeout=TURN_MS)
    preview.locator("h1", has_text="Slow Herons").wait_for()
    now = shown_build(owner, app_id)
    assert now != first
    frame_shows(page, now)
    assert page.query_selector("#picked") is None
    assert page.is_enabled("#edit")

    chip = pick_h1(page)  # picked again, in the new preview
    assert chip.inner_text().startswith("<h1> Slow Herons")
    assert chip.get_attribute("data-build") == now
    done = succeeded(page)
    send(page, "Make it green")
    one_more_succeeded(page, done)
    asked = [e for e in history(owner, app_id) if e["role"] == "user"]
    assert asked[-2]["element"] is None  # the slow turn's message: no pick
    element = asked[-1]["element"]
    assert (element["tag"], element["text"], element["buildId"]) == ("h1", "Slow Herons", now)
    assert page.errors == []


def test_a_pick_of_a_preview_that_moved_on_behind_the_console_is_refused_then_picked_again(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner, app_id, first = herons(browser, server)
    preview = page.frame_locator("#preview")
    chip = pick_h1(page)
    assert chip.inner_text().startswith("<h1> Herons") and chip.get_attribute("data-build") == first

    # Another device's turn changes the title and builds a new preview, between two of this
    # console's polls (turned off here: it would follow the turn); its frame still shows the
    # old one, and its chip names the old heading.
    page.evaluate("window.ZEROCODE_CONFIG.turnPollMs = 0")
    assert chat(owner, app_id, 'Change the title to "Slow Herons"').done is not None
    now = shown_build(owner, app_id)
    assert now != first
    before = len(history(owner, app_id))
    send(page, "Make it green")
    page.wait_for_function(
        "() => document.querySelector('#toast')?.textContent.includes('older preview')"
    )
    assert page.query_selector('#messages .msg.ai[data-turn="failed"]') is not None
    assert len(history(owner, app_id)) == before  # refused: nothing stored, no turn
    # The console follows the preview shown now; the old pick is gone.
    preview.locator("h1", has_text="Slow Herons").wait_for()
    frame_shows(page, now)
    assert page.query_selector("#picked") is None
    shot(page, "stale-pick-1-refused")

    chip = pick_h1(page)
    assert (
        chip.inner_text().startswith("<h1> Slow Herons") and chip.get_attribute("data-build") == now
    )
    done = succeeded(page)
    page.click("#send")  # the message stayed in the box
    one_more_succeeded(page, done)
    asked = [e for e in history(owner, app_id) if e["role"] == "user"]
    assert asked[-1]["content"] == "Make it green"
    assert (asked[-1]["element"]["text"], asked[-1]["element"]["buildId"]) == ("Slow Herons", now)
    assert page.errors == []
