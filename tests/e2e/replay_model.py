"""An OpenAI-compatible model server that replays provider fixtures for the real server.

``tests/fixtures/providers/`` holds what providers send on the wire (streams and HTTP
errors). This server answers ``POST /v1/chat/completions`` with them: each generation request
(the app's turn) takes the next scripted response of a queue, byte for byte and in small
pieces; once the queue is empty, generation requests get a plain final-text stream, so a
turn whose fixture made tool calls can finish. Requests for the platform's own small jobs
(routing, naming, summaries; told apart by the system prompt's marker) get a short text.
Every request body is recorded, so tests can check what went back to the model.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from zerocode.engine.prompts import marker_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"
# System prompts of the platform's side requests, not of a turn's work.
SIDE_JOBS = {"routing": "html", "naming": "Provider replay", "summary": "Earlier: small talk."}
PIECE = 7  # bytes per write: events and UTF-8 characters arrive cut anywhere


@dataclass(frozen=True)
class Canned:
    """One HTTP response: an SSE body (status 200), or an error with its headers."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def fixture_stream(name: str) -> Canned:
    """A ``.sse`` fixture's body as the provider sends it (our ``#`` header stripped)."""
    lines = (FIXTURES / name).read_bytes().split(b"\n")
    start = 0
    while start < len(lines) and lines[start].startswith(b"#"):
        start += 1
    return Canned(body=b"\n".join(lines[start + 1 :]))  # and the blank line after the header


def fixture_error(name: str, **headers: str) -> Canned:
    """A ``.json`` fixture's error response; ``headers`` override a copy of its headers
    (``retry_after="1"`` sets ``retry-after``), never the file."""
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    merged = {str(k).lower(): str(v) for k, v in data["headers"].items()}
    merged.update({k.replace("_", "-"): v for k, v in headers.items()})
    return Canned(int(data["status"]), merged, json.dumps(data["body"]).encode())


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "chatcmpl-replay",
        "object": "chat.completion.chunk",
        "created": 1754000000,
        "model": "replay",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + b"\n\n"


def text_stream(text: str) -> Canned:
    """A plain streamed answer: the text in two deltas, finish_reason stop, [DONE]."""
    half = len(text) // 2
    body = (
        _chunk({"role": "assistant", "content": text[:half]})
        + _chunk({"content": text[half:]})
        + _chunk({}, "stop")
        + b"data: [DONE]\n\n"
    )
    return Canned(body=body)


@dataclass(frozen=True)
class Request:
    """One request as the model received it."""

    kind: str  # the system prompt's marker: vue_project, html, routing, naming, ...
    body: dict[str, Any]
    at: float  # time.monotonic() on arrival

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body["messages"])

    @property
    def chars(self) -> int:
        return len(json.dumps(self.body["messages"], ensure_ascii=False))

    @property
    def text(self) -> str:
        return json.dumps(self.body, ensure_ascii=False)


FINAL = "All done: that is the change."


class ReplayModel:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Canned] = deque()
        self.final = text_stream(FINAL)
        self.requests: list[Request] = []
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["content-length"]))
                canned = model._answer(json.loads(raw))
                self.send_response(canned.status)
                if canned.status != 200:
                    for name, value in canned.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(canned.body)))
                    self.end_headers()
                    self.wfile.write(canned.body)
                    return
                self.send_header("content-type", "text/event-stream; charset=utf-8")
                self.end_headers()  # HTTP/1.0: the body ends when the connection closes
                for start in range(0, len(canned.body), PIECE):
                    self.wfile.write(canned.body[start : start + PIECE])
                    self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> ReplayModel:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def reset(self, *responses: Canned, final: Canned | None = None) -> None:
        """Script the next generation requests; later ones get ``final`` (a plain text)."""
        with self._lock:
            self._queue = deque(responses)
            self.final = final or text_stream(FINAL)
            self.requests = []

    def script(self, *responses: Canned, final: Canned | None = None) -> None:
        """Script the next generation requests, keeping the requests recorded so far."""
        with self._lock:
            self._queue = deque(responses)
            self.final = final or text_stream(FINAL)

    @property
    def generations(self) -> list[Request]:
        """The requests of turns' work (not routing, naming or summaries)."""
        with self._lock:
            return [r for r in self.requests if r.kind not in SIDE_JOBS]

    def _answer(self, body: dict[str, Any]) -> Canned:
        messages = body.get("messages") or [{}]
        first = messages[0]
        system = first.get("content") if first.get("role") == "system" else None
        kind = (marker_of(system) if isinstance(system, str) else None) or "unmarked"
        with self._lock:
            self.requests.append(Request(kind, body, time.monotonic()))
            if kind in SIDE_JOBS:
                return text_stream(SIDE_JOBS[kind])
            return self._queue.popleft() if self._queue else self.final
