"""A turn's events as a Server-Sent Events response, each frame with its ``id:``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from fastapi.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

from zerocode.engine.turn_log import Following, Logged

KEEPALIVE_SECONDS = 15.0
_END = object()
HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


class TurnStream(StreamingResponse):
    """A turn's SSE stream. ``hold``: once the stream is over, however it ended (the client
    may have gone), wait for it before the response is complete. On Lambda the invocation
    lasts exactly as long as the response, and the turn runs inside it, so the response
    must not be complete before the turn is (docs/engine.md, "Turns outlive the
    connection")."""

    def __init__(
        self,
        entries: AsyncIterator[Logged],
        hold: Callable[[], Awaitable[Any]] | None = None,
        keepalive: float = KEEPALIVE_SECONDS,
    ) -> None:
        super().__init__(frames(entries, keepalive), media_type="text/event-stream")
        self.headers.update(HEADERS)
        self.hold = hold

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            with anyio.CancelScope(shield=True):
                closing = getattr(self.body_iterator, "aclose", None)
                if closing is not None:
                    await closing()  # stop following at once (the turn goes on)
                if self.hold is not None:
                    await self.hold()


async def frames(
    entries: AsyncIterator[Logged], keepalive: float = KEEPALIVE_SECONDS
) -> AsyncIterator[bytes]:
    """The entries as SSE frames, and a comment line whenever nothing was sent for
    ``keepalive`` seconds: API Gateway closes a stream idle for 5 minutes, and a preview
    build on CodeBuild can take longer than that.

    One task reads the entries and hands them over a small queue, so waiting for the next
    one can be timed without cancelling the reader; when the client goes away that task is
    cancelled, which ends the reading, not the turn. Whatever has queued by the time the
    response is ready for more goes out as one chunk (one send through the ASGI stack and
    one socket write, not one per event): a stream that fell behind under load catches up
    instead of paying per event. A :class:`Following` (a turn running here) needs no such
    task: its own wait can be timed."""
    if isinstance(entries, Following):
        async for written in _following(entries, keepalive):
            yield written
        return
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=64)

    async def pump() -> None:
        try:
            async for entry in entries:
                await queue.put(entry)
        except Exception as exc:  # surfaced to the consumer, which re-raises it
            await queue.put(exc)
        await queue.put(_END)

    task = asyncio.create_task(pump())
    try:
        while True:
            try:
                async with asyncio.timeout(keepalive):  # a timer, not a task per event
                    item = await queue.get()
            except TimeoutError:
                yield b": keep-alive\n\n"
                continue
            chunk: list[bytes] = []
            while isinstance(item, Logged):
                chunk.append(item.frame())
                item = None if queue.empty() else queue.get_nowait()
            if chunk:
                yield b"".join(chunk)
            if item is _END:
                return
            if isinstance(item, Exception):
                raise item
    finally:
        task.cancel()


async def _following(entries: Following, keepalive: float) -> AsyncIterator[bytes]:
    """:func:`frames` of a turn running in this process: all that came since the last
    write as one chunk."""
    while True:
        batch = await entries.batch(keepalive)
        if batch:
            yield b"".join([entry.frame() for entry in batch])
        elif entries.over:
            return
        else:
            yield b": keep-alive\n\n"
