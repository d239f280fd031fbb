"""The builds' aggregate caps sized from the machine, and build slots shared per user (no I/O)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter

import pytest

from zerocode.adapters.local.build_shares import BuildShares, NoBuildSlot, Ticket, pick
from zerocode.adapters.local.build_slice import PERIOD, own_paths, size, slots

GIB, MIB = 1 << 30, 1 << 20


def test_the_aggregate_is_half_the_smaller_of_ram_and_the_servers_limit() -> None:
    machine = size(24 * GIB, None, 2, 192_739)
    assert machine.memory_bytes == 12 * GIB
    assert machine.cpu_quota_us == 3 * PERIOD // 2 and machine.cpus == 1.5
    assert machine.processes == 4096  # a quarter of threads-max, at most 4,096
    # The red team's server sat in a 400 MiB cgroup: its builds get 200 MiB together.
    assert size(24 * GIB, 400 * MIB, 2, 192_739).memory_bytes == 200 * MIB
    # A limit above the RAM changes nothing; one core still gets one CPU; few threads.
    small = size(4 * GIB, 64 * GIB, 1, 1000)
    assert (small.memory_bytes, small.cpus, small.processes) == (2 * GIB, 1.0, 250)


def test_slots_fit_the_aggregate_memory_and_two_per_core() -> None:
    assert slots(size(24 * GIB, None, 2, 10**6), 2 * GIB, 2) == 4  # 6 fit; 2 cores
    assert slots(size(24 * GIB, None, 16, 10**6), 2 * GIB, 16) == 6  # memory bounds it
    assert slots(size(24 * GIB, 400 * MIB, 2, 10**6), 2 * GIB, 2) == 1  # never 0


def test_own_paths_reads_v1_hybrid_and_v2() -> None:
    hybrid = "9:name=systemd:/\n4:memory:/process_api/877d\n2:cpu,cpuacct:/\n0::/\n"
    paths = own_paths(hybrid)
    assert paths["memory"] == "/process_api/877d"
    assert paths["cpu"] == paths["cpuacct"] == "/" and paths[""] == "/"
    assert own_paths("0::/system.slice/zerocode.service\n") == {
        "": "/system.slice/zerocode.service"
    }


def test_pick_serves_the_user_with_fewest_builds_running_then_the_oldest() -> None:
    waiting = [Ticket("alice", "a1", 0), Ticket("alice", "a2", 1), Ticket("bob", "b1", 2)]
    by_user, by_app = Counter({"alice": 1}), Counter({"a1": 1})
    assert pick(waiting, by_user, by_app, 2) is waiting[2]  # bob has none running
    assert pick(waiting, Counter(), Counter(), 2) is waiting[0]  # even: the oldest
    # alice at her cap and bob gone: nobody may go.
    assert pick(waiting[:2], Counter({"alice": 2}), Counter(), 2) is None
    # Same user: the app with fewer builds running first.
    assert pick(waiting[:2], Counter({"alice": 1}), Counter({"a1": 1}), 2) is waiting[1]


def test_a_user_at_the_cap_waits_while_another_user_builds_then_is_refused_saying_why() -> None:
    async def main() -> None:
        shares = BuildShares(slots=3, per_user=1, wait=0.2)
        order: list[str] = []
        async with shares.slot("alice", "a1"):
            with pytest.raises(NoBuildSlot, match=r"you already have 1 builds running"):
                async with shares.slot("alice", "a2"):
                    order.append("alice again")  # never: she is at her cap
            async with shares.slot("bob", "b1"):
                order.append("bob")
        assert order == ["bob"]
        assert shares.running == 0 and not shares.waiting

    asyncio.run(main())


def test_a_freed_slot_goes_to_the_user_with_fewer_builds_not_the_first_in_line() -> None:
    async def main() -> None:
        shares = BuildShares(slots=2, per_user=2, wait=5)
        hold = asyncio.Event()
        served: list[str] = []

        async def build(user: str, app: str) -> None:
            async with shares.slot(user, app):
                served.append(user)
                await hold.wait()

        first = [asyncio.create_task(build("alice", f"a{i}")) for i in range(2)]
        await asyncio.sleep(0)
        queued = [
            asyncio.create_task(build("alice", "a3")),  # in line first
            asyncio.create_task(build("bob", "b1")),
        ]
        await asyncio.sleep(0)
        assert served == ["alice", "alice"] and len(shares.waiting) == 2
        first[0].cancel()  # one of alice's builds ends: the slot goes to bob
        with contextlib.suppress(asyncio.CancelledError):
            await first[0]
        assert shares.by_user == Counter({"alice": 1, "bob": 1})
        assert [(t.user, t.app) for t in shares.waiting] == [("alice", "a3")]
        hold.set()
        await asyncio.gather(first[1], *queued)
        assert served == ["alice", "alice", "bob", "alice"] and shares.running == 0

    asyncio.run(main())


def test_a_full_server_refuses_after_the_bound_naming_the_slots() -> None:
    async def main() -> None:
        shares = BuildShares(slots=1, per_user=2, wait=0.05)
        async with shares.slot("alice", "a1"):
            with pytest.raises(NoBuildSlot, match=r"all 1 build slots of this server"):
                async with shares.slot("bob", "b1"):
                    pass
        async with shares.slot("bob", "b1"):  # freed: bob goes at once
            assert shares.running == 1

    asyncio.run(main())
