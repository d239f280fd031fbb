"""A turn's events as a Server-Sent Events response."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from fastapi.responses import StreamingResponse

from zerocode.engine.events import sse

KEEPALIVE_SECONDS = 15.0
_END = object()


def event_stream(events: AsyncIterator[Any]) -> StreamingResponse:
    return StreamingResponse(
        frames(events),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def frames(
    events: AsyncIterator[Any], keepalive: float = KEEPALIVE_SECONDS
) -> AsyncIterator[bytes]:
    """The turn's events as SSE frames, and a comment line whenever nothing was sent for
    ``keepalive`` seconds: API Gateway closes a stream idle for 5 minutes, and a preview
    build on CodeBuild can take longer than that.

    One task drives the turn (so its context variables hold for the whole turn) and hands
    events over a small queue; when the client goes away that task is cancelled, which the
    engine treats as a disconnect and closes the turn."""
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=64)

    async def pump() -> None:
        try:
            async for event in events:
                await queue.put(event)
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
            if item is _END:
                return
            if isinstance(item, Exception):
                raise item
            yield sse(item)
    finally:
        task.cancel()
