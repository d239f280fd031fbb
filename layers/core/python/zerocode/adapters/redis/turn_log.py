"""TurnLog in Redis/Valkey Streams: turns' events for every API container (ElastiCache).

On AWS a reader's request may land in another Lambda container than the turn's, so the
log lives in the cache: one stream per turn, ``{prefix}{appId}:{turn}``, each event an entry
whose id is ``0-{seq}`` (explicit ids must grow; this makes a ``Last-Event-ID`` an entry
id). Appending is one Lua script, so the next number and the closed check are atomic across
containers; the turn's writer appends all it has queued with one call of another script
(each event still an entry and an id of its own), and the calls of every turn of the process
go out together, one pipeline per round trip (:mod:`.pipelined`). A replay is
``XRANGE`` after an id; a follower then blocks in ``XREAD`` for the next entries (a bounded
block, so it also notices a turn that ended, or a log that expired, while it waited). The
stream expires ``keep_seconds`` after its last append. A request to stop the turn is the
key ``{stream}:stop``, which the turn's process polls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import redis.asyncio as aioredis

from zerocode.adapters.redis.pipelined import PipelinedScript
from zerocode.engine.events import TurnEvent
from zerocode.engine.turn_log import KEEP_SECONDS, Logged, OutOfStep, check_batch, logged

# KEYS[1] the stream; ARGV: name, data, keep seconds. Returns the new seq, or -1 if closed.
_APPEND = """
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local seq = 1
if #last > 0 then
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'name' and fields[i + 1] == 'done' then return -1 end
  end
  seq = tonumber(string.sub(last[1][1], 3)) + 1
end
redis.call('XADD', KEYS[1], '0-' .. seq, 'name', ARGV[1], 'data', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return seq
"""
# KEYS[1] the stream; ARGV: keep seconds, the first entry's seq, then name and data of each
# entry. Writes them only when the stream's newest entry is the one before the first and not
# a done; returns the newest seq after (the batch's last when written, or already there),
# or -1 if the log is closed.
_APPEND_MANY = """
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local seq = 0
local first = tonumber(ARGV[2])
local count = (#ARGV - 2) / 2
if #last > 0 then
  seq = tonumber(string.sub(last[1][1], 3))
  if seq == first + count - 1 then return seq end
  local fields = last[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'name' and fields[i + 1] == 'done' then return -1 end
  end
end
if seq ~= first - 1 then return seq end
for i = 0, count - 1 do
  redis.call('XADD', KEYS[1], '0-' .. (first + i), 'name', ARGV[3 + 2 * i], 'data', ARGV[4 + 2 * i])
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return first + count - 1
"""
BLOCK_MS = 5_000


class RedisTurnLog:
    def __init__(
        self,
        client: aioredis.Redis,
        keep_seconds: int = KEEP_SECONDS,
        prefix: str = "zerocode:turnlog:",
        block_ms: int = BLOCK_MS,
    ) -> None:
        self.client, self.keep_seconds, self.prefix = client, keep_seconds, prefix
        self.block_ms = block_ms
        self._append = client.register_script(_APPEND)
        self._append_many = PipelinedScript(client, _APPEND_MANY)

    def _key(self, app_id: str, turn: int) -> str:
        return f"{self.prefix}{app_id}:{turn}"

    async def append(self, app_id: str, turn: int, event: TurnEvent) -> Logged:
        draft = logged(turn, 0, event)
        seq = int(
            await self._append(
                keys=[self._key(app_id, turn)], args=[draft.name, draft.data, self.keep_seconds]
            )
        )
        if seq < 0:
            raise ValueError(f"turn {turn} of app {app_id} has ended: its log is closed")
        return Logged(turn=turn, seq=seq, name=draft.name, data=draft.data)

    async def append_many(self, app_id: str, turn: int, entries: Sequence[Logged]) -> None:
        check_batch(entries)
        if not entries:
            return
        fields = [part for entry in entries for part in (entry.name, entry.data)]
        newest = int(
            await self._append_many(
                [self._key(app_id, turn)], [self.keep_seconds, entries[0].seq, *fields]
            )
        )
        if newest < 0:
            raise ValueError(f"turn {turn} of app {app_id} has ended: its log is closed")
        if newest != entries[-1].seq:
            raise OutOfStep(f"turn {turn} of app {app_id}: {entries[0].id} after {newest}")

    async def read(self, app_id: str, turn: int, after: int = 0) -> list[Logged]:
        # redis-py's annotations of stream replies are looser than what it returns
        found: Any = await self.client.xrange(self._key(app_id, turn), min=f"(0-{max(after, 0)}")
        return [_entry(turn, raw) for raw in found]

    async def follow(self, app_id: str, turn: int, after: int = 0) -> AsyncIterator[Logged]:
        key = self._key(app_id, turn)
        if not await self._known(app_id, turn):
            return
        seen = max(after, 0)
        for entry in await self.read(app_id, turn, seen):
            seen = entry.seq
            yield entry
            if entry.done:
                return
        while True:
            if await self._closed(key):  # a done at or before ``seen``, or a log begun afresh
                for entry in await self.read(app_id, turn, seen):  # what came meanwhile
                    yield entry
                return
            answer: Any = await self.client.xread({key: f"0-{seen}"}, block=self.block_ms)
            for _, entries in answer or []:
                for raw in entries:
                    entry = _entry(turn, raw)
                    seen = entry.seq
                    yield entry
                    if entry.done:
                        return
            if not answer and not await self._known(app_id, turn):
                return  # expired while nothing came

    async def _closed(self, key: str) -> bool:
        last: Any = await self.client.xrevrange(key, count=1)
        return bool(last) and _field(last[0][1], "name") == "done"

    async def _known(self, app_id: str, turn: int) -> bool:
        return bool(await self.client.exists(self._key(app_id, turn)))

    async def last(self, app_id: str, turn: int) -> Logged | None:
        found: Any = await self.client.xrevrange(self._key(app_id, turn), count=1)
        return _entry(turn, found[0]) if found else None

    async def begin(self, app_id: str, turn: int) -> None:
        key = self._key(app_id, turn)
        await self.client.delete(key, key + ":stop")

    async def request_stop(self, app_id: str, turn: int) -> None:
        await self.client.set(self._key(app_id, turn) + ":stop", b"1", ex=self.keep_seconds)

    async def stop_requested(self, app_id: str, turn: int) -> bool:
        return bool(await self.client.exists(self._key(app_id, turn) + ":stop"))


def _field(fields: dict[Any, Any], name: str) -> str:
    value = fields.get(name.encode(), fields.get(name, b""))
    return value.decode() if isinstance(value, bytes) else str(value)


def _entry(turn: int, raw: tuple[Any, dict[Any, Any]]) -> Logged:
    ident = raw[0].decode() if isinstance(raw[0], bytes) else str(raw[0])
    return Logged(
        turn=turn,
        seq=int(ident.split("-", 1)[1]),
        name=_field(raw[1], "name"),
        data=_field(raw[1], "data"),
    )
