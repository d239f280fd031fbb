"""SSE framing: ids on every frame, keep-alive comments on a quiet stream, and a client
going away ends the reading (the turn is not the reader's to end)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from typing import cast

from zerocode.engine.events import DoneEvent, TextEvent
from zerocode.engine.turn_log import Logged, logged
from zerocode.http.sse import frames as _frames


def test_a_quiet_stream_gets_keepalive_comments_between_events() -> None:
    async def turn() -> AsyncIterator[Logged]:
        yield logged(3, 1, TextEvent("hello"))
        await asyncio.sleep(0.35)
        yield logged(3, 2, DoneEvent("succeeded", 3))

    async def collect() -> list[bytes]:
        return [frame async for frame in _frames(turn(), keepalive=0.1)]

    frames = asyncio.run(collect())
    assert frames[0].startswith(b"id: 3:1\ndata: ") and b"hello" in frames[0]
    assert frames[-1].startswith(b"id: 3:2\nevent: done\n")
    keepalives = frames[1:-1]
    assert 2 <= len(keepalives) <= 4 and set(keepalives) == {b": keep-alive\n\n"}


def test_a_client_going_away_stops_the_reading() -> None:
    cancelled = asyncio.Event()

    async def follower() -> AsyncIterator[Logged]:
        try:
            yield logged(1, 1, TextEvent("working"))
            await asyncio.sleep(30)
            yield logged(1, 2, DoneEvent("succeeded", 1))
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def disconnect_after_first_frame() -> None:
        frames = cast(AsyncGenerator[bytes, None], _frames(follower(), keepalive=5))
        assert b"working" in await frames.__anext__()
        await frames.aclose()  # what the server does when the client disconnects
        await asyncio.wait_for(cancelled.wait(), timeout=2)

    asyncio.run(disconnect_after_first_frame())
