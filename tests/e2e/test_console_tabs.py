"""Many tabs, one truth (issue 38, point 4), in real headless Chromium against a real server
with the offline model: a page open on an app follows a turn another page started, without
a reload, and ends with the same reply and preview. Two tabs of one browser hear each other
at once (BroadcastChannel); a second browser context, another device, finds the turn by its
light poll of GET …/turns/current (every 4 s). A restore made in one tab is caught up with
in the other. ``[[slow]]`` makes the offline model stream 100 text deltas 50 ms apart
(~5 s) before it writes the page; ``[[pace=N]]`` paces each later chunk N ms."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.conftest import Server, chat, create
from tests.e2e.test_console_stop_undo import preview_title
from tests.e2e.test_console_turns import (
    LIVE,
    SLOW_TEXT,
    history,
    live_text,
    open_app,
    send,
    signed_up,
)
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)

RUNNING = '#messages .msg.ai[data-turn="running"]'
# The replies as drawn: status and text (the live stream's drawing replaced by the stored
# reply at the end, as after a reload).
REPLIES = """() => [...document.querySelectorAll('#messages .msg.ai')]
  .map(m => [m.dataset.turn, m.querySelector('.answer').innerText,
             [...m.querySelectorAll('.steps li')].map(li => li.textContent)])"""


def watcher(context: Any) -> Any:
    """Another page of ``context`` (another tab), with its errors and live reply kept."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    return page


def otter_page(browser: Any, server: Server) -> tuple[Any, httpx.Client, str]:  # noqa: F811
    page, owner = signed_up(browser, server)
    app = create(owner, "A page about otters", "html")
    assert chat(owner, app["id"], app["initPrompt"]).ended == ("succeeded", 1)
    open_app(page, server.api, app["id"])
    return page, owner, app["id"]


def follows_to_the_same_end(first: Any, second: Any, owner: httpx.Client, app_id: str) -> None:
    """``first`` sends a slow change; ``second``, open on the app, draws it live (while it
    still runs on ``first``), without a reload, every delta once, and ends as ``first`` does."""
    second.evaluate("window.__unreloaded = true")
    send(first, 'Change the title to "River Otters" [[slow]] [[pace=80]]')
    second.wait_for_selector(RUNNING, timeout=TURN_MS)  # followed, not reloaded into
    assert second.evaluate("window.__unreloaded") is True
    assert first.query_selector(RUNNING) is not None  # live: the turn still runs
    second.wait_for_selector("#stop", state="visible")
    assert second.is_disabled("#send")
    for page in (first, second):
        page.wait_for_function(
            """() => { const r = document.querySelectorAll('#messages .msg.ai');
                       return r.length === 2 && r[1].dataset.turn === 'succeeded'; }""",
            timeout=TURN_MS,
        )
        preview_title(page, "River Otters")
    assert second.evaluate("window.__unreloaded") is True
    assert live_text(second).startswith(SLOW_TEXT)  # replayed and followed: each delta once
    assert live_text(second).count("1… 2… 3… ") == 1
    assert second.evaluate(REPLIES) == first.evaluate(REPLIES)
    assert second.locator("#messages .msg.user").count() == 2  # its message once
    assert second.is_hidden("#stop") and second.is_enabled("#send")
    replies = [(e["turn"], e["status"]) for e in history(owner, app_id) if e["role"] == "ai"]
    assert len(replies) == 2 and replies[-1][1] == "ok"  # one turn, not one per page


def test_a_second_tab_follows_the_first_tabs_turn_and_catches_up_with_its_restore(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    first, owner, app_id = otter_page(browser, server)
    second = watcher(first.context)  # the same browser: LIVE is the context's init script
    open_app(second, server.api, app_id)
    second.frame_locator("#preview").locator("h1", has_text="Otters").wait_for()
    # Only the tabs' notice can make it follow: the poll is off in both.
    for page in (first, second):
        page.evaluate("window.ZEROCODE_CONFIG.turnPollMs = 0")

    follows_to_the_same_end(first, second, owner, app_id)
    shot(second, "tabs-1-second-tab-followed")

    # A restore in the first tab: the second reads the history, the preview and its tab again.
    second.click("#tab-versions")
    second.wait_for_selector("#versions li[data-version=v2].current")
    first.click("#tab-versions")
    first.click("#versions li[data-version=v1] button.restore")
    first.wait_for_selector("#toast >> text=Restored v1 as v3")
    second.wait_for_selector("#versions li[data-version=v3].current")
    second.locator("#messages .note", has_text="Restored v1 as v3.").wait_for()
    second.click("#tab-preview")
    preview_title(second, "Otters")
    assert second.evaluate("window.__unreloaded") is True
    assert first.errors == [] and second.errors == []


def test_another_device_finds_the_turn_by_its_poll_and_follows_it_to_the_same_end(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    first, owner, app_id = otter_page(browser, server)
    # Another browser context: no notice crosses to it, only its poll finds the turn.
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(LIVE)
    token = first.evaluate("localStorage.getItem('zc_token')")
    # Signed in as the same account (in the console's page, not the sandboxed preview's).
    context.add_init_script(
        f"if (window === window.top) localStorage.setItem('zc_token', {token!r})"
    )
    second = watcher(context)
    polls: list[str] = []

    def asked(request: Any) -> None:
        if request.url.endswith("/turns/current"):
            polls.append(request.url)

    second.on("request", asked)
    open_app(second, server.api, app_id)
    second.frame_locator("#preview").locator("h1", has_text="Otters").wait_for()

    follows_to_the_same_end(first, second, owner, app_id)
    shot(second, "tabs-2-other-device-followed")
    assert 1 <= len(polls) <= 10, polls  # the opening's question and a poll every 4 s
    assert second.errors == []
    context.close()
