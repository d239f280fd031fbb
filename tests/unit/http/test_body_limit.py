"""Bodies are bounded before they are read whole (http/limits.py), as pure ASGI."""

from __future__ import annotations

import asyncio
import json
from collections.abc import MutableMapping
from typing import Any

from zerocode.http.limits import BodyLimit

LIMIT = 1000


class Recorder:
    """An app that reads the whole body and answers 200 with its length."""

    def __init__(self) -> None:
        self.called = False
        self.read = b""
        self.disconnected = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.called = True
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                self.disconnected = True
                break
            self.read += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": str(len(self.read)).encode()})


def call(
    chunks: list[bytes], headers: list[tuple[bytes, bytes]]
) -> tuple[Recorder, list[dict[str, Any]], int]:
    app, sent, pulled = Recorder(), [], [0]
    queue = list(chunks)

    async def receive() -> dict[str, Any]:
        pulled[0] += 1
        body = queue.pop(0) if queue else b""
        return {"type": "http.request", "body": body, "more_body": bool(queue)}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope = {"type": "http", "method": "POST", "path": "/api/users/login", "headers": headers}
    asyncio.run(BodyLimit(app, LIMIT)(scope, receive, send))
    return app, sent, pulled[0]


def answer(sent: list[dict[str, Any]]) -> tuple[int, Any]:
    starts = [m for m in sent if m["type"] == "http.response.start"]
    assert len(starts) == 1, sent
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return starts[0]["status"], json.loads(body)


def test_a_declared_length_over_the_limit_is_refused_unread() -> None:
    app, sent, pulled = call([b"x" * 10], [(b"content-length", b"30000000")])
    status, body = answer(sent)
    assert status == 413 and body["error"]["code"] == "payload_too_large"
    assert "30,000,000" in body["error"]["message"]
    assert not app.called and pulled == 0


def test_a_streamed_body_is_cut_off_where_it_passes_the_limit() -> None:
    chunks = [b"x" * 400] * 100  # 40 kB, no content-length (chunked)
    app, sent, pulled = call(chunks, [])
    status, body = answer(sent)  # only the 413: what the app said after is dropped
    assert status == 413 and body["error"]["code"] == "payload_too_large"
    assert app.disconnected and len(app.read) <= LIMIT and pulled == 3


def test_bodies_within_the_limit_pass_untouched() -> None:
    app, sent, _ = call([b"x" * 600, b"y" * 400], [])
    assert app.read == b"x" * 600 + b"y" * 400
    assert sent[0]["status"] == 200
    app, sent, _ = call([b"z" * LIMIT], [(b"content-length", str(LIMIT).encode())])
    assert sent[0]["status"] == 200 and len(app.read) == LIMIT
