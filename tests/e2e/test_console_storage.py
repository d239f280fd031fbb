"""The console's storage banner (issue 29) in real headless Chromium against the real
server on a 24 MB tmpfs that must keep 4 MB free: shown while /api/health says "degraded"
(at load, on the 30 s check, right after an answer with the code storage_unavailable),
gone once it says "ok", in English and Chinese, with the reason for an admin only. The
page's clock is Playwright's, so the 30 s checks take no wall time."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chromium_browser
from tests.e2e.test_accounts import make_admin
from tests.tmpfs import ballast, tmpfs

BANNER = "#storage-banner"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with tmpfs(tmp_path_factory.mktemp("storage") / "data", "24m") as data:
        srv = Server(data)
        srv.env.update({"ZEROCODE_MIN_FREE_MB": "4", "ZEROCODE_HEALTH_PROBE_SECONDS": "0.2"})
        srv.start()
        try:
            yield srv
        finally:
            srv.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as chromium:
        yield chromium


def page_at(browser: Any, server: Server, hash_: str, locale: str = "en-US") -> Any:
    """A page on the console with a controlled clock (installed before the first script)."""
    page = browser.new_context(locale=locale).new_page()
    page.clock.install()
    page.goto(f"{server.api}/console/{hash_}")
    page.wait_for_selector("#nav a, #nav button")
    return page


def settled(server: Server, status: str) -> None:
    """Wait until the server's cached probe (0.2 s here) says ``status``."""
    deadline = time.monotonic() + 5
    while httpx.get(f"{server.api}/api/health").json()["status"] != status:
        assert time.monotonic() < deadline, f"health did not become {status}"
        time.sleep(0.05)


def banner(page: Any, *, shown: bool) -> str:
    state = "visible" if shown else "hidden"
    page.wait_for_selector(BANNER, state=state, timeout=10_000)
    return str(page.inner_text(BANNER)) if shown else ""


def test_the_banner_follows_health_at_load_and_every_30_seconds(
    browser: Any, server: Server
) -> None:
    page = page_at(browser, server, "#/login")
    page.clock.fast_forward(1000)
    banner(page, shown=False)
    weight = ballast(server.data_dir, leave_mb=2)
    try:
        settled(server, "degraded")
        page.clock.fast_forward("00:31")  # the periodic check
        said = banner(page, shown=True)
        assert said.startswith("Storage is short of room or cannot be written.")
        assert "what was saved is safe" in said and "Why" not in said  # no reason: not an admin
        chinese = page_at(browser, server, "#/login", locale="zh-CN")  # at load
        assert banner(chinese, shown=True).startswith("存储空间不足或无法写入。")
    finally:
        weight.unlink()
    settled(server, "ok")
    page.clock.fast_forward("00:31")
    banner(page, shown=False)
    chinese.clock.fast_forward("00:31")
    banner(chinese, shown=False)


def test_an_admin_reads_why_and_a_storage_error_checks_at_once(
    browser: Any, server: Server
) -> None:
    account = f"root-{secrets.token_hex(3)}"
    make_admin(server, account)
    page = page_at(browser, server, "#/login")
    page.fill("input[name=account]", account)
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    page.wait_for_selector("#prompt")
    banner(page, shown=False)
    weight = ballast(server.data_dir, leave_mb=2)
    try:
        settled(server, "degraded")

        # The app is created; its first turn is refused by the server itself (503
        # storage_unavailable: the disk reserve cannot be kept beside 2 MB free).
        page.fill("#prompt", "A page about newts")
        page.click("#create")
        said = banner(page, shown=True)  # no clock moved: the error itself asked health
        assert f"Why: the data directory {Path(server.data_dir)} has " in said
        assert "below the minimum of 4 MB (ZEROCODE_MIN_FREE_MB)" in said
    finally:
        weight.unlink()
    settled(server, "ok")
    page.clock.fast_forward("00:31")
    banner(page, shown=False)
