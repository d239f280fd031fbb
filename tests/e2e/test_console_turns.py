"""The console and turns that outlive the connection (issue 24), in real headless Chromium
against a real server with the offline model: a reload in the middle of a turn reattaches to
it and shows it to its end, once; a stream cut by the network resumes after the last event
seen (nothing lost, nothing drawn twice); Stop ends a turn interrupted and Retry sends its
message again as a new turn; a preview older than the files says so, turns Edit mode off and
is rebuilt on request. ``[[slow]]`` makes the offline model stream 100 text deltas 50 ms
apart ("1… 2… … 100… ", ~5 s) before it writes the page."""

from __future__ import annotations

import contextlib
import re
import secrets
import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create
from tests.e2e.test_console_ui import (  # noqa: F401 (browser is a fixture)
    TURN_MS,
    api_for,
    browser,
    new_page,
    shot,
)

LIVE_MS = 30_000  # the slow preamble takes ~5 s
SLOW_TEXT = "".join(f"{i}… " for i in range(1, 101))

# The text of the reply being drawn live, kept by the page itself (installed before the
# console's scripts, so it survives a reload): what the stream drew before the stored reply
# is drawn over it.
LIVE = """
window.__live = "";
new MutationObserver(() => {
  const answer = document.querySelector('#messages .msg.ai[data-turn="running"] .answer');
  if (answer) window.__live = answer.textContent;
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def live_text(page: Any) -> str:
    return str(page.evaluate("window.__live"))


def wait_live(page: Any, part: str) -> None:
    """Until the reply being drawn shows ``part`` ("7… ")."""
    page.wait_for_function("part => window.__live.includes(part)", arg=part, timeout=LIVE_MS)


def signed_up(chromium: Any, server: Server, origin: str | None = None) -> tuple[Any, httpx.Client]:
    """A console page with a new account signed up and in (the console served at ``origin``,
    the server's own by default), and an API client with its token."""
    page = new_page(chromium)
    page.context.add_init_script(LIVE)
    page.goto(f"{origin or server.api}/console/#/register")
    page.fill("input[name=account]", f"turns-{secrets.token_hex(4)}")
    page.fill("input[name=password]", "correct horse")
    page.click("button[type=submit]")
    page.wait_for_selector("#prompt")
    return page, api_for(page, server)


def history(owner: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    entries = owner.get(f"/api/apps/{app_id}/history?limit=50").json()["entries"]
    return list(reversed(entries))  # oldest first


def open_app(page: Any, origin: str, app_id: str) -> None:
    page.goto(f"{origin}/console/#/apps/{app_id}")
    page.wait_for_selector("#message")


def send(page: Any, message: str) -> None:
    page.fill("#message", message)
    page.click("#send")


def test_a_reload_mid_turn_reattaches_and_shows_the_turn_to_its_end_once(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner = signed_up(browser, server)
    app = create(owner, "A page about otters", "html")
    open_app(page, server.api, app["id"])
    send(page, "Write it slowly [[slow]]")
    wait_live(page, "3… ")
    page.wait_for_selector("#stop", state="visible")

    page.reload()
    page.wait_for_selector("#stop", state="visible")  # reattached: the turn runs on
    assert page.is_disabled("#send")
    shot(page, "turns-0-reattached-running")
    wait_live(page, "60… ")  # replayed from its start, then followed live
    page.wait_for_selector('#messages .msg.ai[data-turn="succeeded"]', timeout=TURN_MS)
    assert live_text(page).startswith(SLOW_TEXT)  # every delta, each once
    page.frame_locator("#preview").locator("h1").first.wait_for()
    assert page.is_hidden("#stop") and page.is_enabled("#send")
    assert page.locator("#messages .msg.user").count() == 1  # the history's, not redrawn
    assert page.locator("#messages .msg.ai").count() == 1
    shot(page, "turns-1-reattached")

    entries = history(owner, app["id"])
    assert [(e["turn"], e["role"], e["status"]) for e in entries] == [
        (1, "user", "ok"),
        (1, "ai", "ok"),
    ]
    # A reload after the end draws the stored reply: the same one, still once.
    page.reload()
    page.wait_for_selector('#messages .msg.ai[data-turn="succeeded"]')
    assert page.locator("#messages .msg.ai").count() == 1
    assert page.is_hidden("#preview-stale") and page.locator(".retry").count() == 0
    assert page.errors == []


def test_stop_ends_the_turn_interrupted_and_retry_sends_its_message_again(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner = signed_up(browser, server)
    app = create(owner, "A page about herons", "html")
    assert chat(owner, app["id"], app["initPrompt"]).done is not None
    open_app(page, server.api, app["id"])
    page.frame_locator("#preview").locator("h1", has_text="Herons").wait_for()

    message = 'Change the title to "Slow Herons" [[slow]]'
    send(page, message)
    wait_live(page, "2… ")
    page.click("#stop")
    stopped = page.wait_for_selector('#messages .msg.ai[data-turn="interrupted"]', timeout=TURN_MS)
    assert "stopped by the user" in stopped.inner_text()
    # Stopped before it wrote anything (issue 38): nothing kept to say, no undo offered.
    page.wait_for_selector("#messages .msg.ai .retry[data-wrote='']")
    assert page.locator(".turn-kept, .undo-turn").count() == 0
    assert page.is_hidden("#stop") and page.is_enabled("#send")
    shot(page, "turns-2-stopped")

    # Retry survives a reload: it is drawn from the history too.
    page.reload()
    page.wait_for_selector('#messages .msg.ai[data-turn="interrupted"] .retry')
    page.click(".retry")
    page.wait_for_selector("#stop", state="visible")
    page.wait_for_function(
        "() => document.querySelectorAll('#messages [data-turn=\"succeeded\"]').length === 2",
        timeout=TURN_MS,
    )
    assert page.locator(".retry").count() == 0
    page.frame_locator("#preview").locator("h1", has_text="Slow Herons").wait_for()
    asked = {e["turn"]: e for e in history(owner, app["id"]) if e["role"] == "user"}
    assert sorted(asked) == [1, 3, 4]  # turn 2: the note on what turn 1's checks block did
    assert asked[4]["content"] == asked[3]["content"] == message
    assert asked[4]["element"] == asked[3]["element"]
    replies = [e for e in history(owner, app["id"]) if e["role"] != "user"]
    assert [(e["turn"], e["status"]) for e in replies] == [(1, "ok"), (3, "interrupted"), (4, "ok")]
    assert page.errors == []


class CuttingProxy:
    """A TCP proxy in front of the server whose open connections can be cut at once, as a
    dropped network cuts them (the server sees its clients go; the browser, its streams
    break)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream))
            with self.lock:
                self.open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for s in (source, sink):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> int:
        """Close every open connection; how many there were."""
        with self.lock:
            cut, self.open = self.open, []
        for s in cut:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()
        return len(cut)

    def close(self) -> None:
        self.listener.close()
        self.cut()


@pytest.fixture
def proxy(server: Server) -> Iterator[CuttingProxy]:
    p = CuttingProxy(server.port)
    yield p
    p.close()


def test_a_stream_cut_by_the_network_resumes_with_nothing_lost_or_repeated(
    browser: Any,  # noqa: F811
    server: Server,
    proxy: CuttingProxy,
) -> None:
    origin = f"http://127.0.0.1:{proxy.port}"
    page, owner = signed_up(browser, server, origin)
    app = create(owner, "A page about voles", "html")
    open_app(page, origin, app["id"])
    send(page, "Write it slowly [[slow]]")
    wait_live(page, "5… ")
    assert proxy.cut() >= 2  # the chat's stream among them
    wait_live(page, "40… ")  # resumed, on a new connection
    page.wait_for_selector('#messages .msg.ai[data-turn="succeeded"]', timeout=TURN_MS)
    assert live_text(page).startswith(SLOW_TEXT)
    assert live_text(page).count("1… 2… 3… ") == 1
    assert page.locator("#messages .msg.ai").count() == 1
    page.frame_locator("#preview").locator("h1").first.wait_for()
    assert page.errors == []


def test_a_preview_older_than_the_files_says_so_and_is_rebuilt(
    browser: Any,  # noqa: F811
    server: Server,
) -> None:
    page, owner = signed_up(browser, server)
    app = create(owner, "A page about badgers", "html")
    assert chat(owner, app["id"], app["initPrompt"]).done is not None
    # The files change behind the preview's back, as a turn cut off by a dead server leaves them.
    index = server.data_dir / "workspaces" / app["id"] / "index.html"
    index.write_text(index.read_text().replace("Badgers", "Badgers Rebuilt"))
    assert owner.get(f"/api/apps/{app['id']}/preview").json()["upToDate"] is False

    open_app(page, server.api, app["id"])
    notice = page.wait_for_selector("#preview-stale", state="visible")
    assert "Preview out of date" in notice.inner_text()
    assert page.is_disabled("#edit")
    # the old page, not "Badgers Rebuilt"
    page.frame_locator("#preview").locator("h1", has_text=re.compile("^Badgers$")).wait_for()
    shot(page, "turns-3-stale")

    page.click("#rebuild")
    page.wait_for_selector("#preview-stale", state="hidden")
    page.frame_locator("#preview").locator("h1", has_text="Badgers Rebuilt").wait_for()
    assert page.is_enabled("#edit")
    assert owner.get(f"/api/apps/{app['id']}/preview").json()["upToDate"] is True
    assert page.errors == []
