"""SSE framing: ids on every frame, keep-alive comments on a quiet stream, and a client
going away ends the reading (the turn is not the reader's to end)."""

from __future__ import annotations

import asyncio
import contextlib
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


def test_a_held_stream_answers_only_once_its_turn_has_ended_even_when_the_client_left() -> None:
    """On Lambda the invocation lasts as long as the response and the turn runs inside it:
    a client that goes away must not end the response before the turn ends (TurnStream's
    ``hold``). Checked for both ways Starlette learns of a disconnect."""
    from starlette.types import Message

    from zerocode.http.sse import TurnStream

    async def go(spec: str) -> tuple[float, float]:
        ended = asyncio.Event()
        sent_first = asyncio.Event()

        async def follower() -> AsyncIterator[Logged]:
            yield logged(1, 1, TextEvent("working"))
            await asyncio.sleep(30)  # the client leaves long before this

        async def receive() -> Message:
            await sent_first.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.body" and message.get("body"):
                sent_first.set()
                if spec == "2.4":
                    raise OSError("the client is gone")  # how 2.4 servers say it

        async def turn_ends_later() -> None:
            await asyncio.sleep(0.3)
            ended.set()

        loop = asyncio.get_running_loop()
        start = loop.time()
        finisher = asyncio.create_task(turn_ends_later())
        scope = {"type": "http", "asgi": {"spec_version": spec}}
        response = TurnStream(follower(), hold=ended.wait)
        with contextlib.suppress(Exception):  # 2.4: ClientDisconnect, the server's to handle
            await response(scope, receive, send)
        answered = loop.time() - start
        await finisher
        return answered, 0.3

    for spec in ("2.3", "2.4"):
        answered, turn = asyncio.run(go(spec))
        assert answered >= turn - 0.01, spec
        assert answered < 5, spec  # and not the follower's 30 s: it was closed


def test_an_unheld_stream_answers_as_soon_as_the_client_leaves() -> None:
    from starlette.types import Message

    from zerocode.http.sse import TurnStream

    async def go() -> float:
        async def follower() -> AsyncIterator[Logged]:
            yield logged(1, 1, TextEvent("working"))
            await asyncio.sleep(30)

        async def receive() -> Message:
            await asyncio.sleep(0.05)
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            pass

        loop = asyncio.get_running_loop()
        start = loop.time()
        await TurnStream(follower())({"type": "http"}, receive, send)
        return loop.time() - start

    assert asyncio.run(go()) < 2


def test_frames_queued_meanwhile_go_out_as_one_chunk_each_with_its_id() -> None:
    """A reader behind under load sends what has queued in one write, frame by frame
    the same bytes; an error after some entries comes after their frames."""
    entries = [logged(2, n, TextEvent(f"t{n}")) for n in range(1, 6)]

    async def turn() -> AsyncIterator[Logged]:
        for entry in entries:
            yield entry
        raise OSError("the log went away")

    async def go() -> tuple[list[bytes], BaseException | None]:
        out = cast(AsyncGenerator[bytes, None], _frames(turn(), keepalive=5))
        got: list[bytes] = []
        try:  # the pump never waits on this follower: all is queued before the first read
            async for chunk in out:
                got.append(chunk)
        except OSError as exc:
            return got, exc
        return got, None

    chunks, error = asyncio.run(go())
    assert b"".join(chunks) == b"".join(e.frame() for e in entries)
    assert len(chunks) < len(entries)
    assert isinstance(error, OSError)


def test_a_turn_running_here_is_written_in_order_a_batch_per_wake_with_keepalives() -> None:
    """A Following (a turn running in this process) is framed without a reading task: what
    came since the last write goes out as one chunk, frames in order with their ids; a
    keep-alive while nothing comes; the stream ends with the done, never past it."""
    from zerocode.engine.turn_log import Entries

    async def go() -> list[bytes]:
        entries = Entries()
        entries.add(logged(2, 1, TextEvent("one")))
        stream = cast(AsyncGenerator[bytes, None], _frames(entries.follow(), keepalive=0.01))
        got = [await anext(stream)]  # what was there already
        got.append(await anext(stream))  # nothing comes: a keep-alive
        entries.extend([logged(2, 2, TextEvent("two")), logged(2, 3, TextEvent("three"))])
        got.append(await anext(stream))  # both, in one chunk
        entries.extend([logged(2, 4, DoneEvent("succeeded", 2))])
        got += [frame async for frame in stream]
        return got

    got = asyncio.run(go())
    assert got[0] == logged(2, 1, TextEvent("one")).frame()
    assert got[1] == b": keep-alive\n\n"
    assert (
        got[2] == logged(2, 2, TextEvent("two")).frame() + logged(2, 3, TextEvent("three")).frame()
    )
    assert got[3:] == [logged(2, 4, DoneEvent("succeeded", 2)).frame()]


def test_a_following_gives_each_entry_once_however_it_is_read() -> None:
    """Batches and iteration mixed, from a point mid-log: every entry after it once, in
    order, through the done; nothing after it, and a follower from past the done gets
    nothing at all."""
    from zerocode.engine.turn_log import Entries

    async def go() -> tuple[list[int], list[Logged]]:
        entries = Entries()
        entries.extend([logged(1, n, TextEvent(f"t{n}")) for n in range(1, 5)])
        following = entries.follow(1)
        seen = [(await anext(following)).seq]  # 2: the iterator reads 2..4 at once
        seen += [e.seq for e in await following.batch()]  # the rest of what it read
        waiting = asyncio.create_task(following.batch())
        await asyncio.sleep(0)
        assert not waiting.done()  # nothing new: it waits
        entries.extend([logged(1, 5, TextEvent("t5")), logged(1, 6, DoneEvent("succeeded", 1))])
        seen += [e.seq for e in await waiting]
        seen += [e.seq async for e in following]
        assert following.over and await following.batch() == []
        return seen, [e async for e in entries.follow(6)]

    seen, past = asyncio.run(go())
    assert seen == [2, 3, 4, 5, 6]
    assert past == []
