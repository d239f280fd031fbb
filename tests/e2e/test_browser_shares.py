"""The checking browser shared between users, through the real local server (issue 37,
points 2 and 3): a scripted model gives each user's app its page and checks. User A's page
spins after load while user B's suite runs: B's checks all pass the first time and no repair
round starts for B; A's check names A's page. Two users' slow suites while a third user's
turn runs: the third's page and checks are checked, all passing, within the bound
docs/security.md states ("The checking browser": 3 contexts × HOLD_SECONDS)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.e2e.conftest import Server, Turn, create, parse_sse, signed_in
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.adapters.local.browser_pool import HOLD_SECONDS

# Spins once loaded, deterministically: the runtime check's look at the page (it reads
# document.body) spins, and so does a timer 50 ms after load.
SPIN = (
    "<h1>Spins</h1><script>addEventListener('load', () => {"
    " Object.defineProperty(document, 'body', { get() { for (;;) {} } });"
    " setTimeout(() => { for (;;) {} }, 50); })</script>"
)
FINE = "<h1>Fine</h1>"


def page(kind: str) -> str:
    """The answer for an app of ``kind`` (its request says ``[[spin]]``, ``[[slow]]``, or
    neither): one page and its checks, slow ones waiting 4 × 1 s before they look."""
    body = SPIN if kind == "spin" else FINE
    waits = [{"wait": 1000}] * (4 if kind == "slow" else 0)
    checks = [
        {
            "description": f"the heading shows ({n})",
            "steps": waits,
            "expect": [{"text": {"css": "h1"}, "equals": "Fine"}],
        }
        for n in range(1, 4 if kind in ("slow", "suite") else 3)
    ]
    html = f"<!doctype html><html><body>{body}</body></html>"
    return f"Here it is.\n\n```html\n{html}\n```\n\n```checks\n{json.dumps(checks)}\n```"


class PagesModel:
    """An OpenAI-compatible model that answers every request of an app with its page."""

    def __init__(self) -> None:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                said = " ".join(str(m.get("content")) for m in body["messages"])
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in model.chunks(said):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def chunks(self, said: str) -> list[dict[str, Any]]:
        kind = next((k for k in ("spin", "slow", "suite") if f"[[{k}]]" in said), "plain")
        return [
            _chunk({"role": "assistant", "content": page(kind)}),
            _chunk({}, "stop"),
        ]


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "c", "object": "chat.completion.chunk", "model": "pages", "choices": [choice]}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    chromium_or_skip()
    model = PagesModel()
    model.thread.start()
    srv = Server(tmp_path_factory.mktemp("zerocode-browser-shares"))
    srv.env.update(
        {
            "ZEROCODE_MODEL_BASE_URL": model.base_url,
            "ZEROCODE_MODEL_API_KEY": "sk-test",
            "ZEROCODE_MODEL_CODE": "pages",
            "ZEROCODE_MODEL_ROUTING": "pages",
            "ZEROCODE_MODEL_VUE": "pages",
            "ZEROCODE_RUNTIME_CHECK": "1",
        }
    )
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()
        model.server.shutdown()
        model.server.server_close()


class Chat(threading.Thread):
    """A user's turn in a thread of its own; ``checking`` is set at its first check verdict
    (its suite is running: it holds a context of the browser)."""

    def __init__(self, server: Server, kind: str) -> None:
        super().__init__(daemon=True)
        self.client = signed_in(server, kind)
        self.app = create(self.client, f"A page [[{kind}]]", "html")
        self.kind = kind
        self.checking = threading.Event()
        self.turn: Turn | None = None
        self.seconds = 0.0

    def run(self) -> None:
        began = time.monotonic()
        path = f"/api/apps/{self.app['id']}/chat"
        with self.client.stream("POST", path, json={"message": f"A page [[{self.kind}]]"}) as r:
            assert r.status_code == 200
            self.turn = parse_sse(_watch(r.iter_lines(), self.checking.set))
        self.seconds = time.monotonic() - began
        self.checking.set()

    def ended(self) -> Turn:
        if self.ident is not None:  # run in a thread of its own (else, already run here)
            self.join(600)
        assert self.turn is not None and self.turn.done is not None, self.turn
        return self.turn

    def history(self) -> str:
        entries = self.client.get(f"/api/apps/{self.app['id']}/history").json()["entries"]
        return str(entries[0]["content"])


def _watch(lines: Iterator[str], seen: Callable[[], None]) -> Iterator[str]:
    for line in lines:
        if line == "event: check":
            seen()
        yield line


def first_round_passes(turn: Turn, n: int) -> None:
    assert [c["status"] for c in turn.checks] == ["passed"] * n, turn.checks
    assert all(c["round"] == 0 for c in turn.checks) and turn.repairs == [], turn.repairs
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.done


def test_a_spinning_page_of_one_user_never_fails_another_users_suite(server: Server) -> None:
    spinner, other = Chat(server, "spin"), Chat(server, "suite")
    spinner.start()
    other.start()
    b = other.ended()
    a = spinner.ended()
    first_round_passes(b, 3)
    assert "✓ the page loads in a browser without errors" in other.history()
    # A's own page failed A's own check, naming it; A's repair rounds are its own.
    assert a.repairs and a.repairs[0]["kind"] == "runtime", a.repairs
    assert "the page / did not answer" in spinner.history(), spinner.history()
    for chat in (spinner, other):
        chat.client.close()


def test_two_slow_suites_leave_a_third_users_checks_within_the_bound(server: Server) -> None:
    slow = [Chat(server, "slow"), Chat(server, "slow")]
    for chat in slow:
        chat.start()
    for chat in slow:  # both suites hold a context of the browser
        assert chat.checking.wait(300)
    third = Chat(server, "plain")
    third.run()  # here, while the two suites run
    turn = third.ended()
    first_round_passes(turn, 2)
    assert "✓ the page loads in a browser without errors" in third.history()
    # Its three contexts (the runtime check, two checks) each within HOLD_SECONDS of asking.
    assert third.seconds < 3 * HOLD_SECONDS, third.seconds
    for chat in slow:  # the slow suites pass too, at their own pace
        first_round_passes(chat.ended(), 3)
    for chat in (*slow, third):
        chat.client.close()
