"""What a turn cost, shown quietly under its reply (issue 43), in real headless Chromium
against the local server with the offline model: the line says the requests and tokens the
turn's done said, and after a reload the stored entry says the same."""

from __future__ import annotations

import re
from typing import Any

from tests.e2e.conftest import Server, create
from tests.e2e.test_console_turns import open_app, send, signed_up
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    browser,
    shot,
)


def compact(n: int) -> str:
    """As the console writes a count (web/render.js)."""
    if n >= 1_000_000:
        return f"{n / 1e6:.1f}M"
    if n >= 10_000:
        return f"{round(n / 1e3)}k"
    if n >= 1_000:
        return f"{n / 1e3:.1f}k"
    return str(n)


def test_a_reply_shows_what_its_turn_cost_live_and_after_a_reload(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner = signed_up(browser, server)
    app = create(owner, "A page about otters", "html")
    open_app(page, server.api, app["id"])
    send(page, "A page about otters")
    reply = '#messages .msg.ai:not([data-turn="running"])[data-turn]'
    page.wait_for_selector(reply, timeout=TURN_MS)
    entries = owner.get(f"/api/apps/{app['id']}/history").json()["entries"]
    (stored,) = [e for e in entries if e["role"] == "ai"]
    usage = stored["usage"]
    assert usage and usage["requests"] >= 1 and usage["estimated"] is False
    said = (
        f"{usage['requests']} requests · {compact(usage['inputTokens'])} tokens in · "
        f"{compact(usage['outputTokens'])} out"
    )
    line = page.locator(f"{reply} .usage")
    assert line.count() == 1 and line.inner_text() == said
    assert re.search(r"provider reported", line.get_attribute("title") or "")
    shot(page, "reply-usage")
    page.reload()
    page.wait_for_selector(f"{reply} .usage")
    assert page.locator(f"{reply} .usage").inner_text() == said
    assert page.errors == []


def test_a_reply_says_what_its_repair_rounds_cost(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    """A Vue build that fails (``[[flaw=syntax]]``) is repaired in a round of its own: the
    reply's line says what the repair cost, as the turn's rounds say it."""
    page, owner = signed_up(browser, server)
    prompt = "A Vue counter [[flaw=syntax]]"
    app = create(owner, prompt, "vue_project")
    open_app(page, server.api, app["id"])
    send(page, prompt)
    reply = '#messages .msg.ai:not([data-turn="running"])[data-turn]'
    page.wait_for_selector(f"{reply} .usage", timeout=TURN_MS)
    entries = owner.get(f"/api/apps/{app['id']}/history").json()["entries"]
    (stored,) = [e for e in entries if e["role"] == "ai"]
    repairs = [r for r in stored["usage"]["rounds"] if r["round"] > 0]
    assert repairs, stored["usage"]
    requests = sum(r["requests"] for r in repairs)
    tokens = sum(r["inputTokens"] + r["outputTokens"] for r in repairs)
    said = f"repairs ({len(repairs)}): {requests} requests, {compact(tokens)} tokens"
    assert said in page.locator(f"{reply} .usage").inner_text()
    assert page.errors == []
