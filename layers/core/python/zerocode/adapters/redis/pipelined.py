"""One Lua script's calls from every turn of a process, sent together: one pipeline per
round trip (issue 40, point 4).

Each running turn's writer appends its batch with one script call. At 200 turns that was
thousands of separate calls a second, each paying redis-py's per-command work (a connection
taken from the pool and given back, a reply awaited) on the event loop that also streams
the turns. Here a call waits for the pipeline in flight, if any, and goes out with every
call that came meanwhile: the busier the process, the larger each pipeline, and no call
waits longer than one round trip for its turn.

Calls are ``EVALSHA`` by the script's digest; a server that does not know the script yet
(started or flushed since) answers NOSCRIPT, and those calls are sent again once it is
loaded. The caller's script must be idempotent (the turn log's is: a batch already written
answers what is there).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import NoScriptError

Arg = str | bytes | int | float


@dataclass
class _Call:
    keys: Sequence[str]
    args: Sequence[Arg]
    answer: asyncio.Future[Any]


@dataclass
class _State:
    loop: asyncio.AbstractEventLoop
    waiting: list[_Call] = field(default_factory=list)
    sending: asyncio.Task[None] | None = None


class PipelinedScript:
    """``await script(keys, args)``: the script's answer, as ``Script.__call__`` gives it,
    its call sent in the next pipeline with every other call waiting then."""

    def __init__(self, client: aioredis.Redis, source: str) -> None:
        self.client, self.source = client, source
        self.sha = hashlib.sha1(source.encode()).hexdigest()
        self._state: _State | None = None
        self.pipelines = 0  # sent so far (for tests and benchmarks)

    async def __call__(self, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        loop = asyncio.get_running_loop()
        state = self._state
        if state is None or state.loop is not loop:  # a client is used on one loop at a time
            state = self._state = _State(loop)
        call = _Call(keys, args, loop.create_future())
        state.waiting.append(call)
        if state.sending is None or state.sending.done():
            state.sending = loop.create_task(self._send(state))
        return await call.answer

    async def _send(self, state: _State) -> None:
        while state.waiting:
            calls, state.waiting = state.waiting, []
            try:
                again = await self._pipeline(calls)
                if again:  # the server did not know the script: loaded, then sent again
                    await self.client.script_load(self.source)
                    again = await self._pipeline(again)
                for call in again:
                    _settle(call, NoScriptError("the script could not be loaded"))
            except asyncio.CancelledError:  # the loop is closing: so are the calls
                for call in calls + state.waiting:
                    call.answer.cancel()
                raise
            except Exception as exc:  # every caller of the pipeline is told
                for call in calls:
                    _settle(call, exc)

    async def _pipeline(self, calls: list[_Call]) -> list[_Call]:
        """``calls`` in one pipeline; answers each, and returns those the server did not
        run because it does not know the script."""
        pipe = self.client.pipeline(transaction=False)
        for call in calls:
            pipe.execute_command("EVALSHA", self.sha, len(call.keys), *call.keys, *call.args)
        answers = await pipe.execute(raise_on_error=False)
        self.pipelines += 1
        unknown = []
        for call, answer in zip(calls, answers, strict=True):
            if isinstance(answer, NoScriptError):
                unknown.append(call)
            elif isinstance(answer, Exception):
                _settle(call, answer)
            else:
                _settle(call, None, answer)
        return unknown


def _settle(call: _Call, error: BaseException | None, answer: Any = None) -> None:
    if call.answer.done():  # its caller was cancelled: the call went out all the same
        return
    if error is not None:
        call.answer.set_exception(error)
    else:
        call.answer.set_result(answer)
