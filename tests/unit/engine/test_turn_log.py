"""The turn event log: ids, wire form, and followers that miss nothing and repeat nothing,
whatever the interleaving of appends and reads (the in-process log; the port's contract)."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.properties import examples
from zerocode.adapters.inprocess.turn_log import InProcessTurnLog
from zerocode.engine.events import (
    BuildEvent,
    DoneEvent,
    ErrorEvent,
    TextEvent,
    ToolEvent,
    TurnEvent,
    sse,
)
from zerocode.engine.turn_log import Logged, interrupted, logged, parse_event_id, polled

SOME: list[TurnEvent] = [
    TextEvent("Here is "),
    TextEvent("a page ✓\n"),
    ToolEvent(id="c1", name="write_file", phase="call", ok=None, path="index.html", summary="w"),
    BuildEvent(status="running", buildId="b1"),
    BuildEvent(status="failed", buildId="b1", error="no index.html"),
    ErrorEvent("build_failed", "the build failed"),
]


def test_an_entry_is_the_live_frame_with_its_id() -> None:
    for seq, event in enumerate([*SOME, DoneEvent("succeeded", 3)], start=1):
        entry = logged(3, seq, event)
        assert entry.id == f"3:{seq}"
        assert entry.frame() == f"id: 3:{seq}\n".encode() + sse(event)
    assert logged(3, 7, DoneEvent("failed", 3)).done
    assert interrupted(3, 9).frame().endswith(b'"status":"interrupted","turn":3}\n\n')


@pytest.mark.parametrize(
    ("value", "seq"),
    [("4:12", 12), (" 4:0 ", 0), ("3:12", None), ("4:", None), ("x", None), ("4:-1", None)],
)
def test_a_last_event_id_names_a_sequence_number_of_its_own_turn_only(
    value: str, seq: int | None
) -> None:
    assert parse_event_id(value, 4) == seq


def test_append_numbers_from_one_and_closes_at_done() -> None:
    async def go() -> None:
        log = InProcessTurnLog()
        assert await log.last("a", 1) is None
        entries = [await log.append("a", 1, e) for e in SOME]
        assert [e.seq for e in entries] == list(range(1, len(SOME) + 1))
        done = await log.append("a", 1, DoneEvent("succeeded", 1))
        assert done.done and done.seq == len(SOME) + 1 and await log.last("a", 1) == done
        with pytest.raises(ValueError, match="has ended"):
            await log.append("a", 1, TextEvent("late"))
        assert [e.seq for e in await log.read("a", 1, after=4)] == [5, 6, 7]
        assert await log.read("a", 2) == [] and await log.read("b", 1) == []
        other = await log.append("a", 2, TextEvent("turn two"))  # each turn its own log
        assert other.seq == 1

    asyncio.run(go())


def test_following_an_unknown_turn_ends_at_once() -> None:
    async def go() -> list[Logged]:
        return [e async for e in InProcessTurnLog().follow("a", 1)]

    assert asyncio.run(go()) == []


@settings(max_examples=examples(200))
@given(
    count=st.integers(min_value=0, max_value=30),
    afters=st.lists(st.integers(min_value=-2, max_value=35), min_size=1, max_size=4),
    starts=st.lists(st.integers(min_value=0, max_value=31), min_size=4, max_size=4),
    pauses=st.lists(st.booleans(), min_size=31, max_size=31),
)
def test_followers_get_exactly_what_came_after_their_point_whenever_they_join(
    count: int, afters: list[int], starts: list[int], pauses: list[bool]
) -> None:
    """A writer appends ``count`` events and ``done``, yielding to the loop at random
    points; followers join after random appends, each from its own point. Each gets the
    entries after that point, in order, through ``done``: no gap, no duplicate."""

    async def go() -> None:
        log = InProcessTurnLog()
        await log.append("a", 1, TextEvent("first"))  # the log exists before anyone follows
        got: dict[int, list[int]] = {}

        async def follower(index: int, after: int) -> None:
            got[index] = [e.seq async for e in log.follow("a", 1, after)]

        tasks: list[asyncio.Task[None]] = []
        for n in range(count + 1):
            for index, after in enumerate(afters):
                if starts[index] == n:
                    tasks.append(asyncio.create_task(follower(index, after)))
            event: TurnEvent = TextEvent(f"t{n}") if n < count else DoneEvent("succeeded", 1)
            await log.append("a", 1, event)
            if pauses[n]:
                await asyncio.sleep(0)
        for index, after in enumerate(afters):  # late joiners read a finished log
            if starts[index] > count:
                tasks.append(asyncio.create_task(follower(index, after)))
        await asyncio.wait_for(asyncio.gather(*tasks), 5)
        last = count + 2  # "first", count events, done
        for index, after in enumerate(afters):  # past the end of a finished log: nothing
            assert got[index] == list(range(max(after, 0) + 1, last + 1)), (index, after)

    asyncio.run(go())


def test_finished_logs_are_dropped_after_their_time_and_past_the_bound() -> None:
    now = [0.0]

    async def go() -> None:
        log = InProcessTurnLog(keep_seconds=60, max_turns=3, clock=lambda: now[0])
        await log.append("a", 1, DoneEvent("succeeded", 1))
        await log.append("a", 2, TextEvent("still running"))
        now[0] = 61
        await log.append("a", 3, TextEvent("a new turn prunes"))
        assert await log.last("a", 1) is None  # finished more than a minute ago
        await log.append("a", 4, DoneEvent("failed", 4))
        await log.append("a", 5, TextEvent("x"))  # a fourth log: the oldest finished goes
        for running in (2, 3, 5):
            assert await log.last("a", running) is not None
        assert await log.last("a", 4) is None  # running logs are never dropped
        with pytest.raises(ValueError):
            InProcessTurnLog(keep_seconds=0)

    asyncio.run(go())


def test_a_polled_follower_reads_a_done_written_between_its_read_and_its_check() -> None:
    """The race a polling store has: the read sees 1..3, then ``done`` (4) is written, then
    the check finds the log ended. The follower must read once more, not stop at 3."""
    entries = [logged(2, n, TextEvent(f"t{n}")) for n in (1, 2, 3)]
    done = logged(2, 4, DoneEvent("succeeded", 2))
    written = list(entries)

    async def read(after: int) -> list[Logged]:
        found = [e for e in written if e.seq > after]
        if done not in written:
            written.append(done)  # written just after this read answered
        return found

    async def ended_at() -> int | None:
        return 4 if done in written else None

    async def go() -> list[int]:
        return [e.seq async for e in polled(read, ended_at, 0, 0.01)]

    assert asyncio.run(go()) == [1, 2, 3, 4]

    async def past_the_end() -> list[int]:
        return [e.seq async for e in polled(read, ended_at, 4, 0.01)]

    assert asyncio.run(past_the_end()) == []


@settings(max_examples=examples(200))
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=8), min_size=1, max_size=8),
    afters=st.lists(st.integers(min_value=0, max_value=40), min_size=1, max_size=4),
    starts=st.lists(st.integers(min_value=0, max_value=8), min_size=4, max_size=4),
)
def test_followers_of_batched_appends_get_exactly_the_rest_wherever_they_resume(
    sizes: list[int], afters: list[int], starts: list[int]
) -> None:
    """Batches of random sizes (the last ends in done); followers join between batches
    from random points, mid-batch included: each gets every entry after its point, in
    order, each with its own id."""

    async def go() -> None:
        log = InProcessTurnLog()
        total = sum(sizes)
        entries = [
            logged(1, n, TextEvent(f"t{n}") if n < total else DoneEvent("succeeded", 1))
            for n in range(1, total + 1)
        ]
        got: dict[int, list[Logged]] = {}

        async def follower(index: int, after: int) -> None:
            got[index] = [e async for e in log.follow("a", 1, after)]

        await log.append_many("a", 1, entries[:1])  # the log exists before anyone follows
        tasks, seq = [], 1
        for n, size in enumerate(sizes):
            for index, after in enumerate(afters):
                if starts[index] == n:
                    tasks.append(asyncio.create_task(follower(index, after)))
            batch = entries[seq : seq + size] if n else entries[1:size]
            if batch:
                await log.append_many("a", 1, batch)
            seq += len(batch)
            await asyncio.sleep(0)
        for index, after in enumerate(afters):
            if starts[index] >= len(sizes):
                tasks.append(asyncio.create_task(follower(index, after)))
        await asyncio.wait_for(asyncio.gather(*tasks), 5)
        assert await log.read("a", 1) == entries
        for index, after in enumerate(afters):
            assert got[index] == entries[after:], (index, after)

    asyncio.run(go())
