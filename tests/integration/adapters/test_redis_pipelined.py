"""Every turn's appends in one pipeline per round trip (adapters/redis/pipelined.py), against
a real Redis: the answers reach their own callers, a script the server forgot is loaded and
its calls sent again, an error is its own caller's alone, and a cancelled caller's call is
still made."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from tests.conftest import REDIS_URL, redis_client_or_skip
from zerocode.adapters.redis.pipelined import PipelinedScript
from zerocode.adapters.redis.turn_log import RedisTurnLog
from zerocode.engine.events import TextEvent
from zerocode.engine.turn_log import logged

# Appends ARGV[1] to the list KEYS[1]; returns its new length. Fails on ARGV[1] == 'bad'.
PUSH = """
if ARGV[1] == 'bad' then return redis.error_reply('bad value') end
return redis.call('RPUSH', KEYS[1], ARGV[1])
"""


@pytest.fixture
def prefix() -> Iterator[str]:
    sync = redis_client_or_skip()
    name = f"zerocode:test:pipelined:{secrets.token_hex(4)}:"
    yield name
    for key in sync.scan_iter(f"{name}*"):
        sync.delete(key)


def test_calls_of_many_callers_share_pipelines_and_each_gets_its_answer(prefix: str) -> None:
    async def main() -> None:
        client = aioredis.Redis.from_url(REDIS_URL)
        push = PipelinedScript(client, PUSH)

        async def caller(n: int) -> list[int]:
            return [await push([f"{prefix}{n}"], [f"v{i}"]) for i in range(5)]

        answers = await asyncio.gather(*(caller(n) for n in range(200)))
        assert answers == [[1, 2, 3, 4, 5]] * 200  # each caller's own list, in its order
        # 1,000 calls: the first went alone, then each pipeline took all that waited.
        assert push.pipelines <= 10, push.pipelines
        assert await client.lrange(f"{prefix}7", 0, -1) == [b"v0", b"v1", b"v2", b"v3", b"v4"]
        await client.aclose()

    asyncio.run(main())


def test_a_script_the_server_forgot_is_loaded_and_its_calls_sent_again(prefix: str) -> None:
    async def main() -> None:
        client = aioredis.Redis.from_url(REDIS_URL)
        source = PUSH + f"-- {secrets.token_hex(8)}\n"  # a script this Redis never saw
        push = PipelinedScript(client, source)
        assert await client.script_exists(push.sha) == [False]
        both = await asyncio.gather(push([f"{prefix}a"], ["x"]), push([f"{prefix}a"], ["y"]))
        assert sorted(both) == [1, 2]
        assert await client.script_exists(push.sha) == [True]
        assert sorted(await client.lrange(f"{prefix}a", 0, -1)) == [b"x", b"y"]  # once each
        await client.aclose()

    asyncio.run(main())


def test_an_error_is_its_callers_alone(prefix: str) -> None:
    async def main() -> None:
        client = aioredis.Redis.from_url(REDIS_URL)
        push = PipelinedScript(client, PUSH)
        said: tuple[Any, ...] = await asyncio.gather(
            push([f"{prefix}g"], ["x"]),
            push([f"{prefix}g"], ["bad"]),
            push([f"{prefix}o"], ["z"]),
            return_exceptions=True,
        )
        good, bad, other = said
        assert (good, other) == (1, 1)
        assert isinstance(bad, ResponseError) and "bad value" in str(bad)
        await client.aclose()

    asyncio.run(main())


def test_a_connection_failure_reaches_every_caller_of_the_pipeline() -> None:
    async def main() -> None:
        client = aioredis.Redis.from_url("redis://127.0.0.1:9/0", socket_connect_timeout=1)
        push = PipelinedScript(client, PUSH)
        said = await asyncio.gather(
            *(push(["k"], [str(i)]) for i in range(3)), return_exceptions=True
        )
        assert all(isinstance(s, RedisConnectionError) for s in said), said
        await client.aclose()

    asyncio.run(main())


def test_a_cancelled_callers_append_is_made_and_the_log_stays_in_step(prefix: str) -> None:
    """The writer of a turn that is cancelled while its batch is in flight: the batch is
    written all the same, and a retry of it (the writer's next attempt) is no duplicate."""

    async def main() -> None:
        client = aioredis.Redis.from_url(REDIS_URL)
        log = RedisTurnLog(client, prefix=prefix, block_ms=100)
        await log.begin("app", 1)
        batch = [logged(1, n, TextEvent(text=f"t{n}")) for n in (1, 2)]
        task = asyncio.create_task(log.append_many("app", 1, batch))
        await asyncio.sleep(0)  # queued: its pipeline is on its way
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await log.append_many("app", 1, batch)  # the retry: already there, not written twice
        assert [e.seq for e in await log.read("app", 1)] == [1, 2]
        await client.aclose()

    asyncio.run(main())
