"""The console while its server cannot be reached (issue 38, "Shutdown in order"), in real
headless Chromium against a real server that is stopped and started again: the banner shows
once a request gets no answer, Send says the server cannot be reached (never "Failed to
fetch"), and the banner goes once the server answers again. The page's clock is
Playwright's, so the retries' waits take no wall time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, chromium_browser, create, signed_in

BANNER = "#reach-banner"


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium_browser() as chromium:
        yield chromium


def test_the_banner_shows_while_the_server_is_away_and_goes_when_it_answers(
    browser: Any, tmp_path: Path
) -> None:
    server = Server(tmp_path)
    server.start()
    try:
        client = signed_in(server)
        app = create(client, "A page about wrens", "html")
        page = browser.new_context(locale="en-US").new_page()
        page.clock.install()
        token = client.headers["Authorization"].removeprefix("Bearer ")
        page.goto(f"{server.api}/console/#/login")
        page.evaluate("t => localStorage.setItem('zc_token', t)", token)
        page.goto(f"{server.api}/console/#/apps/{app['id']}")
        page.wait_for_selector("#message", state="visible")
        assert page.is_hidden(BANNER)

        server.stop()  # SIGTERM: nothing runs, so it stops at once
        page.fill("#message", "Make it blue")
        page.click("#send")
        page.wait_for_selector(BANNER, state="visible")
        assert page.inner_text(BANNER) == "The server cannot be reached; retrying…"
        toast = page.wait_for_selector("#toast.error", state="visible")
        said = toast.inner_text()
        assert said.startswith("The server cannot be reached; retrying.") and "fetch" not in said
        assert page.input_value("#message") == "Make it blue"  # kept, to send again
        page.clock.run_for(60_000)  # retries while it is away: the banner stays
        assert page.is_visible(BANNER)

        server.start()
        page.clock.run_for(30_000)  # the next retry (at most 30 s after the one before)
        page.wait_for_selector(BANNER, state="hidden")
        client.close()
    finally:
        server.stop()
