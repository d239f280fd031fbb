"""A lean HTTP/1.1 client for the many-streams benchmark (bench/turn.py): one POST whose
SSE answer is read straight off the socket by an asyncio Protocol.

Why: 200 streams read with httpx cost the benchmark about 2.1 s of CPU per 200-stream run,
about half of what the server spent on them (4.4 to 5.2 s; this client: about 0.4 s), on the
same two cores. A client that cannot keep up delays its own reading, and the delay counted
as the server's added latency. This client does what a browser's network layer does for
one stream, and no more: each line of the body is stamped with the time its bytes arrived
(``data_received``), before anything else is done with it. It is not kinder to the server:
the bytes must have arrived.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any


class _Reader(asyncio.Protocol):
    """One request, its response's status and its body's lines with their arrival times."""

    def __init__(self, request: bytes, finished: asyncio.Future[None]) -> None:
        self.request, self.finished = request, finished
        self.status, self.chunked, self.length = 0, False, -1  # -1: to the connection's end
        self.head_done, self.received = False, 0
        self.raw, self.body = bytearray(), bytearray()
        self.lines: list[tuple[float, bytes]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.perf_counter()
        self.raw += data
        if not self.head_done:
            end = self.raw.find(b"\r\n\r\n")
            if end < 0:
                return
            status, *fields = bytes(self.raw[:end]).decode("latin-1").split("\r\n")
            self.status = int(status.split()[1])
            headers = {
                k.strip().lower(): v.strip() for k, _, v in (f.partition(":") for f in fields)
            }
            self.chunked = "chunked" in headers.get("transfer-encoding", "").lower()
            self.length = int(headers.get("content-length", -1))
            del self.raw[: end + 4]
            self.head_done = True
        if self.chunked:
            while (eol := self.raw.find(b"\r\n")) >= 0:
                size = int(bytes(self.raw[:eol]).split(b";")[0], 16)
                if size == 0:
                    return self._finish()
                if len(self.raw) < eol + 2 + size + 2:
                    return
                self._body(self.raw[eol + 2 : eol + 2 + size], now)
                del self.raw[: eol + 2 + size + 2]
        else:
            self.received += len(self.raw)
            self._body(self.raw, now)
            self.raw.clear()
            if 0 <= self.length <= self.received:
                self._finish()

    def _body(self, data: bytes | bytearray, now: float) -> None:
        self.body += data
        while (eol := self.body.find(b"\n")) >= 0:
            self.lines.append((now, bytes(self.body[:eol]).rstrip(b"\r")))
            del self.body[: eol + 1]

    def _finish(self) -> None:
        if self.body:
            self.lines.append((time.perf_counter(), bytes(self.body)))
            self.body.clear()
        if not self.finished.done():
            self.finished.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.finished.done():
            return
        if self.chunked or not self.head_done:  # cut before its end
            self.finished.set_exception(exc or ConnectionError("the server closed early"))
        else:
            self._finish()


async def post(
    host: str, port: int, path: str, headers: dict[str, str], body: dict[str, Any]
) -> tuple[int, list[tuple[float, str]]]:
    """POST ``body`` as JSON; the status and the body's lines, each with the time (perf
    counter) its bytes arrived."""
    payload = json.dumps(body).encode()
    head = [
        f"POST {path} HTTP/1.1",
        f"Host: {host}:{port}",
        "Accept: text/event-stream",
        "Content-Type: application/json",
        f"Content-Length: {len(payload)}",
        "Connection: close",
        *(f"{k}: {v}" for k, v in headers.items()),
    ]
    request = ("\r\n".join(head) + "\r\n\r\n").encode() + payload
    loop = asyncio.get_running_loop()
    finished: asyncio.Future[None] = loop.create_future()
    transport, reader = await loop.create_connection(lambda: _Reader(request, finished), host, port)
    try:
        await finished
    finally:
        transport.close()
    return reader.status, [(at, line.decode()) for at, line in reader.lines]
