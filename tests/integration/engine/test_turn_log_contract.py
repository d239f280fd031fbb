"""The TurnLog contract, for every adapter: in process, Redis Streams (a real Redis) and
DynamoDB (moto). Numbering from one, closed at ``done``, replays after any point, followers
that see appends from another instance (another process, another container) with no gap and
no duplicate, the same wire form everywhere, a log begun afresh, and a stop request that
reaches another instance."""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import REDIS_URL, redis_client_or_skip
from tests.integration.backends import OneRequestAtATime
from zerocode.adapters.dynamodb.turn_log import DynamoTurnLog, create_turn_events_table
from zerocode.adapters.inprocess.turn_log import InProcessTurnLog
from zerocode.adapters.redis.turn_log import RedisTurnLog
from zerocode.engine.events import BuildEvent, DoneEvent, TextEvent, TurnEvent
from zerocode.engine.turn_log import Logged, OutOfStep, TurnLog, logged

Factory = Callable[[], TurnLog]  # a new instance over the same storage


@pytest.fixture(params=["inprocess", "redis", "dynamodb"])
def logs(request: pytest.FixtureRequest) -> Iterator[Factory]:
    if request.param == "dynamodb":
        yield from _dynamodb()
    elif request.param == "inprocess":
        shared = InProcessTurnLog()  # one process: every "instance" is the same log
        yield lambda: shared
    else:
        redis_client_or_skip()
        import redis.asyncio as aioredis

        prefix = f"zerocode:test:turnlog:{secrets.token_hex(4)}:"

        def redis() -> TurnLog:
            client = aioredis.Redis.from_url(REDIS_URL)
            return RedisTurnLog(client, prefix=prefix, block_ms=200)

        yield redis


def _dynamodb() -> Iterator[Factory]:
    """moto's DynamoDB in this process; each instance its own client."""
    import boto3
    from moto import mock_aws

    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_turn_events_table(client, "turn-events")
        moto = threading.Lock()  # one backend for every instance's client (OneRequestAtATime)
        yield lambda: DynamoTurnLog(
            OneRequestAtATime(boto3.client("dynamodb", region_name="us-east-1"), moto),
            "turn-events",
            poll_seconds=0.01,
        )


EVENTS: list[TurnEvent] = [
    TextEvent("Here is "),
    TextEvent("a page — ✓"),
    BuildEvent(status="running", buildId="b1"),
    BuildEvent(status="succeeded", buildId="b1"),
]


def test_appends_number_from_one_replay_after_a_point_and_close_at_done(logs: Factory) -> None:
    async def go() -> None:
        log = logs()
        assert await log.last("app1", 1) is None
        assert [e async for e in log.follow("app1", 1)] == []
        entries = [await log.append("app1", 1, e) for e in EVENTS]
        assert [e.seq for e in entries] == [1, 2, 3, 4]
        assert entries == [logged(1, n, e) for n, e in enumerate(EVENTS, start=1)]
        assert await log.last("app1", 1) == entries[-1] and await log.last("app1", 2) is None
        done = await log.append("app1", 1, DoneEvent("succeeded", 1))
        assert done.seq == 5 and done.done
        with pytest.raises(ValueError, match="has ended"):
            await log.append("app1", 1, TextEvent("late"))
        assert await log.read("app1", 1, after=3) == [entries[3], done]
        assert await log.read("app1", 1, after=5) == []
        assert [e.seq async for e in log.follow("app1", 1, after=2)] == [3, 4, 5]
        assert await log.last("app1", 1) == done
        assert (await log.append("app1", 2, TextEvent("next turn"))).seq == 1
        assert (await log.append("app2", 1, TextEvent("another app"))).seq == 1

    asyncio.run(go())


def test_a_follower_of_another_instance_misses_nothing_and_repeats_nothing(
    logs: Factory,
) -> None:
    """The writer and two followers on separate instances (for Redis and DynamoDB: separate
    clients, as another process or container would have); one follower joins late."""

    async def go() -> tuple[list[int], list[int]]:
        writer, early, late = logs(), logs(), logs()
        await writer.append("app1", 7, TextEvent("start"))

        async def follow(log: TurnLog, after: int) -> list[int]:
            return [e.seq async for e in log.follow("app1", 7, after)]

        first = asyncio.create_task(follow(early, 0))
        for n in range(40):
            await writer.append("app1", 7, TextEvent(f"t{n}"))
            if n % 7 == 0:
                await asyncio.sleep(0.02)
        second = asyncio.create_task(follow(late, 20))
        await asyncio.sleep(0.05)
        await writer.append("app1", 7, DoneEvent("succeeded", 7))
        return await asyncio.wait_for(asyncio.gather(first, second), 10)

    early_seen, late_seen = asyncio.run(go())
    assert early_seen == list(range(1, 43))
    assert late_seen == list(range(21, 43))


def test_the_wire_form_is_the_same_in_every_store(logs: Factory) -> None:
    async def go() -> list[Any]:
        log = logs()
        for event in [*EVENTS, DoneEvent("failed", 3)]:
            await log.append("app1", 3, event)
        return [e.frame() for e in await log.read("app1", 3)]

    frames = asyncio.run(go())
    expected = [logged(3, n, e).frame() for n, e in enumerate(EVENTS, start=1)]
    assert frames[:4] == expected
    assert frames[4] == b'id: 3:5\nevent: done\ndata: {"status":"failed","turn":3}\n\n'


def test_begin_drops_a_log_left_under_the_number_and_its_stop_request(logs: Factory) -> None:
    """A turn that ended before its number was taken leaves a closed log; the next turn,
    which gets the same number, begins it afresh (and a stop asked of the old one does not
    stop the new one)."""

    async def go() -> None:
        log, other = logs(), logs()
        await log.append("app1", 4, TextEvent("never saved"))
        await log.append("app1", 4, DoneEvent("failed", 0))
        await other.request_stop("app1", 4)
        assert await log.stop_requested("app1", 4)
        await log.begin("app1", 4)
        assert await other.last("app1", 4) is None
        assert not await other.stop_requested("app1", 4)
        assert (await log.append("app1", 4, TextEvent("the real turn 4"))).seq == 1
        await log.begin("app1", 9)  # nothing to drop: fine

    asyncio.run(go())


def test_a_stop_request_reaches_another_instance_and_names_one_turn(logs: Factory) -> None:
    async def go() -> None:
        runner, canceller = logs(), logs()
        await runner.append("app1", 2, TextEvent("working"))
        assert not await runner.stop_requested("app1", 2)
        await canceller.request_stop("app1", 2)
        assert await runner.stop_requested("app1", 2)
        assert not await runner.stop_requested("app1", 3)
        assert not await runner.stop_requested("app2", 2)
        # the request is not an event: the log reads as before
        assert [e.seq for e in await runner.read("app1", 2)] == [1]
        assert (await runner.last("app1", 2)) == logged(2, 1, TextEvent("working"))

    asyncio.run(go())


def _batch(turn: int, first: int, count: int, *, done: bool = False) -> list[Logged]:
    """``count`` text entries numbered from ``first`` (the last a done when ``done``)."""
    events: list[TurnEvent] = [TextEvent(f"t{first + i}") for i in range(count)]
    if done:
        events[-1] = DoneEvent("succeeded", turn)
    return [logged(turn, first + i, e) for i, e in enumerate(events)]


def test_batches_keep_every_entry_its_own_id_and_a_reader_resumes_mid_batch(
    logs: Factory,
) -> None:
    """A writer appends batches of 1, 5 and 3 events and a batch ending in done; readers on
    another instance resuming inside a batch get exactly the rest."""

    async def go() -> None:
        writer, reader = logs(), logs()
        batches = [_batch(6, 1, 1), _batch(6, 2, 5), _batch(6, 7, 3), _batch(6, 10, 2, done=True)]
        for batch in batches:
            await writer.append_many("app1", 6, batch)
        everything = [e for batch in batches for e in batch]
        assert await reader.read("app1", 6) == everything
        for after in (0, 1, 3, 6, 8, 10, 11):
            assert await reader.read("app1", 6, after) == everything[after:]
            assert [e async for e in reader.follow("app1", 6, after)] == everything[after:]
        assert await reader.last("app1", 6) == everything[-1]
        with pytest.raises(ValueError, match="has ended"):
            await writer.append_many("app1", 6, _batch(6, 12, 2))

    asyncio.run(go())


def test_a_batch_out_of_step_is_refused_whole_and_a_retried_one_is_not_repeated(
    logs: Factory,
) -> None:
    async def go() -> None:
        log = logs()
        first = _batch(2, 1, 3)
        await log.append_many("app1", 2, first)
        await log.append_many("app1", 2, first)  # the retry of a batch that was written
        with pytest.raises(OutOfStep):
            await log.append_many("app1", 2, _batch(2, 6, 2))  # would leave a gap
        with pytest.raises(OutOfStep):
            await log.append_many("app1", 2, _batch(2, 3, 2))  # would repeat 3
        with pytest.raises(ValueError, match="consecutive"):
            await log.append_many("app1", 2, [*_batch(2, 4, 1), *_batch(2, 6, 1)])
        assert await log.read("app1", 2) == first
        await log.append_many("app1", 2, _batch(2, 4, 1, done=True))
        assert [e.seq for e in await log.read("app1", 2)] == [1, 2, 3, 4]

    asyncio.run(go())


def test_followers_of_another_instance_see_concurrent_batches_whole_and_in_order(
    logs: Factory,
) -> None:
    """Two turns written in batches at once, each followed by two readers on other
    instances (one joins late): every reader gets its turn's entries, no gap, no
    duplicate."""

    async def go() -> dict[int, list[list[int]]]:
        writers = {turn: logs() for turn in (1, 2)}

        async def write(turn: int) -> None:
            seq = 2
            for size in (1, 4, 2, 7, 1, 3):
                await writers[turn].append_many("app9", turn, _batch(turn, seq, size))
                seq += size
                await asyncio.sleep(0.01)
            await writers[turn].append_many("app9", turn, _batch(turn, seq, 1, done=True))

        async def follow(turn: int, after: int) -> list[int]:
            return [e.seq async for e in logs().follow("app9", turn, after)]

        await asyncio.gather(*(writers[t].append("app9", t, TextEvent("s")) for t in (1, 2)))
        readers = {t: [asyncio.create_task(follow(t, 0))] for t in (1, 2)}
        writing = asyncio.gather(write(1), write(2))
        await asyncio.sleep(0.03)
        for turn in (1, 2):
            readers[turn].append(asyncio.create_task(follow(turn, 5)))
        await asyncio.wait_for(writing, 10)
        return {t: await asyncio.wait_for(asyncio.gather(*readers[t]), 10) for t in (1, 2)}

    seen = asyncio.run(go())
    for turn in (1, 2):
        early, late = seen[turn]
        assert early == list(range(1, 21)), turn  # "s", 18 in batches, done
        assert late == list(range(6, 21)), turn
