"""The TurnLog contract, for every adapter: in process, Redis Streams (a real Redis) and
DynamoDB (moto). Numbering from one, closed at ``done``, replays after any point, followers
that see appends from another instance (another process, another container) with no gap and
no duplicate, the same wire form everywhere, a log begun afresh, and a stop request that
reaches another instance."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import REDIS_URL, redis_client_or_skip
from zerocode.adapters.dynamodb.turn_log import DynamoTurnLog, create_turn_events_table
from zerocode.adapters.inprocess.turn_log import InProcessTurnLog
from zerocode.adapters.redis.turn_log import RedisTurnLog
from zerocode.engine.events import BuildEvent, DoneEvent, TextEvent, TurnEvent
from zerocode.engine.turn_log import TurnLog, logged

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
        yield lambda: DynamoTurnLog(
            boto3.client("dynamodb", region_name="us-east-1"), "turn-events", poll_seconds=0.01
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
