"""Turns that outlive the connection (engine/turns.py), over the real local stores and the
offline model: a stop mid-work rebuilds the files it left; a log store that fails costs
the log, not the turn; and, with the log in a real Redis shared by two Turns (two API
containers), one sees, follows and stops the other's turn, and a turn whose process died
is closed for its follower with what the display says."""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REDIS_URL, redis_client_or_skip
from tests.integration.engine.test_engine import platform
from zerocode.adapters.inprocess.turn_log import InProcessTurnLog
from zerocode.apps.records import CodeGenType
from zerocode.bootstrap.platform import Platform
from zerocode.engine.events import TextEvent, TurnEvent
from zerocode.engine.turn_log import Logged
from zerocode.engine.turns import ServerStopping, Turns
from zerocode.memory.display import DisplayRole, DisplayStatus
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate


def names(entries: list[Logged]) -> list[str]:
    return [e.name for e in entries]


def done_of(entry: Logged) -> tuple[str, int]:
    """A done's status and turn (its usage, issue 43, has tests of its own)."""
    said = json.loads(entry.data)
    return said["status"], said["turn"]


async def collect(entries: AsyncIterator[Logged]) -> list[Logged]:
    return [e async for e in entries]


def test_a_turn_stopped_after_it_wrote_files_builds_them_and_says_why(tmp_path: Path) -> None:
    """Stopped after its first file, the half-written project is built all the same: it
    fails (no preview of it), so the preview is out of date, which the app then says."""
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("local", "A Vue notes app", CodeGenType.VUE_PROJECT))

    async def go() -> list[Logged]:
        turns = Turns(p.engine, InProcessTurnLog(), shared=False)
        running = await turns.start(app, "A Vue notes app [[pace=5]]", None)
        seen: list[Logged] = []
        async for entry in running.follow():
            seen.append(entry)
            if entry.name == "tool" and '"phase":"result","ok":true' in entry.data:
                await turns.cancel(app.id, running.turn)
        await running.ended.wait()
        assert await turns.current(app.id) is None
        assert await collect(turns.follow(app.id, 1)) == seen  # the log holds the same
        return seen

    seen = asyncio.run(go())
    stopped = names(seen).index("error")
    assert '"code":"stopped"' in seen[stopped].data
    assert names(seen)[stopped + 1 :] == ["build", "build", "done"]
    assert '"status":"failed"' in seen[-2].data  # the one file it wrote, built
    assert done_of(seen[-1]) == ("interrupted", 1)
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))
    last = p.display.page(app.id, limit=1).entries[0]
    assert last.role is DisplayRole.ERROR and last.status is DisplayStatus.INTERRUPTED
    assert "**Interrupted:** stopped by the user." in last.content
    assert "preview build failed" in last.content
    note = p.memory.units(app.id)[-1]
    assert note.kind is EntryKind.INTERRUPTED
    assert "stopped by the user" in str(note.messages[0].content)
    validate(p.memory.window(app.id, p.system_prompt(app)).messages)
    assert not p.publishing.preview_state(app).up_to_date
    assert p.engine.versions is not None and p.engine.versions.store.latest(app.id) is not None
    assert p.engine.lease.acquire(f"turn:{app.id}", "next", 5)  # the app is free


class FailingLog(InProcessTurnLog):
    """A log store that refuses every write (a full disk, an unreachable cache)."""

    async def append(self, app_id: str, turn: int, event: TurnEvent) -> Logged:
        raise OSError("no space left on device")

    async def append_many(self, app_id: str, turn: int, entries: Sequence[Logged]) -> None:
        raise OSError("no space left on device")


def test_a_log_store_that_fails_costs_the_log_not_the_turn(tmp_path: Path) -> None:
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("local", "A page about owls", CodeGenType.HTML))

    async def go() -> tuple[list[Logged], list[Logged]]:
        turns = Turns(p.engine, FailingLog(), shared=False)
        running = await turns.start(app, "A page about owls", None)
        live = await collect(running.follow())
        await running.ended.wait()
        return live, await collect(turns.follow(app.id, 1, after=4))

    live, later = asyncio.run(go())
    done = json.loads(live[-1].data)
    assert (done["status"], done["turn"]) == ("succeeded", 1)
    # The log has nothing; the display tells a later reader how the turn ended.
    assert len(later) == 1 and later[0].id == "1:5"
    assert done_of(later[0]) == ("succeeded", 1)


class HeldLog(InProcessTurnLog):
    """A store whose first append waits until the test lets it go (a slow round trip), and
    that fails every append from ``fail_from`` on; it keeps what each append was given."""

    def __init__(self, fail_from: int | None = None) -> None:
        super().__init__()
        self.gate, self.fail_from = asyncio.Event(), fail_from
        self.batches: list[list[int]] = []

    async def append_many(self, app_id: str, turn: int, entries: Sequence[Logged]) -> None:
        await self.gate.wait()
        if self.fail_from is not None and len(self.batches) >= self.fail_from:
            raise OSError("the cache went away")
        self.batches.append([e.seq for e in entries])
        await super().append_many(app_id, turn, entries)


async def _held_turn(p: Platform, log: HeldLog) -> tuple[list[Logged], list[Logged]]:
    """A turn whose log store holds its first append until the turn has queued every event
    before its done; what its stream got, and what a reader gets from the log after."""
    app = await p.create_app("local", "A page about owls", CodeGenType.HTML)
    turns = Turns(p.engine, log, shared=False, write_attempts=1)
    running = await turns.start(app, "A page about owls", None)  # its driver has yet to run
    queue, put = running.unwritten, running.unwritten.put_nowait

    def put_then_open(item: Logged | None) -> None:
        put(item)
        if item is None:  # the turn's last event before its done is queued
            log.gate.set()

    queue.put_nowait = put_then_open  # type: ignore[method-assign]
    live = await collect(running.follow())
    await running.ended.wait()
    return live, await collect(turns.follow(app.id, 1))


def test_events_queued_behind_a_slow_store_are_appended_in_one_batch(tmp_path: Path) -> None:
    log = HeldLog()
    live, later = asyncio.run(_held_turn(platform(tmp_path), log))
    assert [e.seq for e in live] == list(range(1, len(live) + 1)) and live[-1].done
    assert [seq for batch in log.batches for seq in batch] == [e.seq for e in live]
    # the first append holds whatever the writer had taken; the rest goes in one, then done
    assert len(log.batches) <= 3 < len(live)
    assert log.batches[-1] == [live[-1].seq]  # the done alone, once the rest is in
    assert later == live  # the log is the stream, id for id


def test_a_store_failing_mid_turn_is_reported_and_its_log_closed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The first batch is written, the next fails: the turn still ends for its stream, the
    failure is logged, and a later reader gets what was written, then the done the display
    gives (never a log that silently stops short)."""
    log = HeldLog(fail_from=1)
    live, later = asyncio.run(_held_turn(platform(tmp_path), log))
    assert json.loads(live[-1].data)["status"] == "succeeded"
    assert any("could not keep the log" in r.getMessage() for r in caplog.records)
    written = log.batches[0]
    assert [e.seq for e in later] == [*written, written[-1] + 1]
    assert later[:-1] == live[: len(written)]
    assert later[-1].done and json.loads(later[-1].data)["status"] == "succeeded"


def _redis_turns(p: Platform, prefix: str, **kwargs: Any) -> Turns:
    import redis.asyncio as aioredis

    from zerocode.adapters.redis.turn_log import RedisTurnLog

    log = RedisTurnLog(aioredis.Redis.from_url(REDIS_URL), prefix=prefix, block_ms=100)
    return Turns(p.engine, log, shared=True, **kwargs)


def test_another_container_sees_follows_and_stops_a_turn(tmp_path: Path) -> None:
    redis_client_or_skip()
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("local", "A page about herons", CodeGenType.HTML))
    prefix = f"zerocode:test:turns:{secrets.token_hex(4)}:"

    async def go() -> tuple[list[Logged], list[Logged]]:
        a = _redis_turns(p, prefix, watch_seconds=0.05)
        b = _redis_turns(p, prefix)
        running = await a.start(app, "Write it slowly [[slow]]", None)
        live = asyncio.create_task(collect(running.follow()))
        await anext(running.follow())  # the turn has begun
        await asyncio.sleep(0.3)  # the writer catches up
        current = await b.current(app.id)
        assert current is not None and current.turn == 1 and current.last_event_id
        followed = asyncio.create_task(collect(b.follow(app.id, 1)))
        await b.cancel(app.id, 1)  # B does not run it: the request goes through the log
        return await asyncio.wait_for(live, 20), await asyncio.wait_for(followed, 20)

    live, followed = asyncio.run(go())
    assert followed == live  # no gap, no duplicate, across containers
    assert done_of(live[-1]) == ("interrupted", 1)
    assert any('"code":"stopped"' in e.data for e in live)


def test_a_follower_closes_the_log_of_a_turn_whose_container_died(tmp_path: Path) -> None:
    redis_client_or_skip()
    p = platform(tmp_path, turn_lease_seconds=3)
    app = asyncio.run(p.create_app("local", "A page about gulls", CodeGenType.HTML))
    prefix = f"zerocode:test:turns:{secrets.token_hex(4)}:"

    async def go() -> list[Logged]:
        reader = _redis_turns(p, prefix)
        # What a dead container left: the lease (expiring) and a log without its done.
        assert p.engine.lease.acquire(f"turn:{app.id}", "dead", 1.5)
        for word in ("Here", " is"):
            await reader.log.append(app.id, 1, TextEvent(word))
        assert await reader.current(app.id) is not None  # alive while its lease is
        return await asyncio.wait_for(collect(reader.follow(app.id, 1, after=1)), 15)

    tail = asyncio.run(go())
    assert [e.id for e in tail] == ["1:2", "1:3"]
    assert done_of(tail[-1]) == ("interrupted", 1)


def test_a_reader_gets_done_only_once_the_log_has_it_and_the_app_is_free(
    tmp_path: Path,
) -> None:
    """So a client that sees done may start the next turn at once (no 409) and a reader
    elsewhere finds the same done in the log."""
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("local", "A page about owls", CodeGenType.HTML))

    async def go() -> None:
        log = InProcessTurnLog()
        turns = Turns(p.engine, log, shared=False)
        running = await turns.start(app, "A page about owls", None)
        async for entry in running.follow():
            if entry.done:  # nothing awaited between the done and these checks
                assert not p.engine.lease.held(f"turn:{app.id}")
                assert await log.last(app.id, 1) == entry
                assert await turns.current(app.id) is None
        again = await turns.start(app, "Thanks", None)
        # Turn 3: the first turn's checks block was told to the model in a note (turn 2).
        assert done_of([e async for e in again.follow()][-1]) == ("succeeded", 3)

    asyncio.run(go())


class _Batches(InProcessTurnLog):
    """The in-process log, keeping the numbers of each append's entries."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[int]] = []

    async def append_many(self, app_id: str, turn: int, entries: Sequence[Logged]) -> None:
        self.batches.append([e.seq for e in entries])
        await super().append_many(app_id, turn, entries)


def test_events_gathered_by_a_lingering_writer_are_all_logged_and_the_end_does_not_wait(
    tmp_path: Path,
) -> None:
    """A writer that would linger an hour: it appends when the turn's events are all queued,
    not an hour later (the turn ends, its done comes), in batches of consecutive entries;
    the log is the stream, id for id."""
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("local", "A page about owls", CodeGenType.HTML))

    async def go() -> tuple[list[Logged], list[Logged], _Batches]:
        log = _Batches()
        turns = Turns(p.engine, log, shared=False, write_linger=3600)
        running = await turns.start(app, "A page about owls", None)
        live = await asyncio.wait_for(collect(running.follow()), 120)  # a guard, not a timing
        return live, await collect(turns.follow(app.id, 1)), log

    live, later, log = asyncio.run(go())
    assert live[-1].done and json.loads(live[-1].data)["status"] == "succeeded"
    assert [seq for batch in log.batches for seq in batch] == [e.seq for e in live]
    assert len(live) < 256  # one batch (WRITE_BATCH) holds all before the done: and did
    assert len(log.batches) == 2 and log.batches[-1] == [live[-1].seq]
    assert later == live


class _SlowRenewals:
    """A lease whose renewals wait for the test (a busy thread pool runs them late); every
    hold lasts a minute, so only a release can free the app in time."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.holders = inner, set[str]()
        self.renewing, self.let_go = threading.Event(), threading.Event()
        self.landed = threading.Event()

    def acquire(self, key: str, holder: str, seconds: float) -> bool:
        if holder in self.holders:
            self.renewing.set()
            self.let_go.wait(10)
        self.holders.add(holder)
        held = bool(self.inner.acquire(key, holder, 60))
        if self.let_go.is_set():
            self.landed.set()
        return held

    def release(self, key: str, holder: str) -> None:
        self.inner.release(key, holder)

    def held(self, key: str) -> bool:
        return bool(self.inner.held(key))


def test_a_renewal_that_lands_after_the_turn_ended_does_not_hold_the_app(tmp_path: Path) -> None:
    """The keeper's renewal runs in a thread that cancelling the keeper does not stop: one
    that lands after the turn gave the lease back must give it back again, or the user's
    next message gets 409 for a whole lease (seen in CI under load)."""
    p = platform(tmp_path, turn_lease_seconds=3)
    app = asyncio.run(p.create_app("local", "A page about wrens", CodeGenType.HTML))
    lease = p.engine.lease = _SlowRenewals(p.engine.lease)

    async def go() -> str:
        turns = Turns(p.engine, InProcessTurnLog(), shared=False)
        running = await turns.start(app, "Write it slowly [[slow]]", None)
        entries = [e async for e in running.follow()]
        assert lease.renewing.is_set(), "a renewal was in flight when the turn ended"
        assert not lease.held(f"turn:{app.id}")
        lease.let_go.set()  # the late renewal lands now
        assert await asyncio.to_thread(lease.landed.wait, 10)
        await asyncio.sleep(0.2)  # what the renewal's thread does after its acquire
        again = await turns.start(app, "Thanks", None)  # Conflict (409) before the fix
        assert done_of([e async for e in again.follow()][-1])[1] == 3
        return entries[-1].data

    assert asyncio.run(go()).startswith('{"status":"succeeded","turn":1')


def test_a_stopping_server_refuses_new_turns_and_a_second_ctrl_c_stops_the_running_one(
    tmp_path: Path,
) -> None:
    """Turns.drain (the server's stop, entrypoints/stopping.py): a new turn is refused at once
    (503 server_stopping), the running one goes on until the bound or a second Ctrl-C (here),
    then it is stopped as interrupted, saying the server stopped."""
    p = platform(tmp_path)
    app = asyncio.run(p.create_app("local", "A page about voles", CodeGenType.HTML))
    other = asyncio.run(p.create_app("local", "A page about shrews", CodeGenType.HTML))

    async def go() -> tuple[bool, list[Logged]]:
        turns = Turns(p.engine, InProcessTurnLog(), shared=False)
        running = await turns.start(app, "Write it slowly [[slow]]", None)
        await anext(running.follow())  # the turn has begun
        cut = asyncio.Event()
        drain = asyncio.create_task(turns.drain(600, cut))
        await asyncio.sleep(0)  # the drain has begun: nothing starts any more
        with pytest.raises(ServerStopping) as refused:
            await turns.start(other, "Hello", None)
        assert refused.value.status == 503 and "the server is stopping" in refused.value.message
        assert not drain.done() and turns.running_here() == 1  # the turn goes on
        cut.set()
        return await drain, await collect(running.follow())

    ended, seen = asyncio.run(go())
    assert not ended
    assert '"message":"the server stopped before the turn ended"' in seen[-2].data
    assert done_of(seen[-1]) == ("interrupted", 1)
