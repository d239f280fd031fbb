"""The fair queue of the checking browser's contexts (issue 37, point 3), as policy alone: who
gets the next context when they are scarce, deterministic, no I/O; then its bounded wait."""

from __future__ import annotations

import asyncio

import pytest

from zerocode.adapters.local.browser_shares import (
    BUSY,
    BrowserBusy,
    FairQueue,
    Shares,
    Tenant,
    Ticket,
)

A1, A2, B1, C1 = Tenant("a", "1"), Tenant("a", "2"), Tenant("b", "1"), Tenant("c", "1")


def held(shares: Shares) -> dict[str, int]:
    return {user: n for user, n in shares.by_user.items() if n}


def test_a_free_context_is_given_at_once_and_the_rest_wait() -> None:
    shares = Shares(capacity=2, user_most=2)
    first, got = shares.ask(A1)
    assert got == [first] and first.granted
    second, got = shares.ask(B1)
    assert got == [second]
    third, got = shares.ask(C1)
    assert got == [] and not third.granted and shares.waiting == [third]
    assert shares.release(first) == [third]  # the freed context goes to the one waiting
    assert held(shares) == {"b": 1, "c": 1}


def test_a_freed_context_goes_to_the_user_holding_fewest_not_the_oldest_request() -> None:
    """User a holds two contexts and asked for more first; user c, who holds none, asked
    later: each context that frees goes to c first, then b's, then a's."""
    shares = Shares(capacity=3, user_most=3)
    a_holds = [shares.ask(A1)[0], shares.ask(A2)[0]]
    b_holds = shares.ask(B1)[0]
    assert shares.held == 3
    a_more = shares.ask(A1)[0]  # oldest waiter, but a holds the most
    b_more = shares.ask(B1)[0]
    c_first = shares.ask(C1)[0]
    assert shares.release(a_holds[0]) == [c_first]  # c holds none
    assert shares.release(b_holds) == [b_more]  # b holds none now, a one
    assert shares.release(c_first) == [a_more]
    assert held(shares) == {"a": 2, "b": 1}


def test_within_a_user_the_app_holding_fewer_goes_first() -> None:
    """App 1 of user a holds a context and asked for another first; app 2 asked later and
    holds none: b's context, when it frees, goes to app 2."""
    shares = Shares(capacity=2, user_most=2)
    shares.ask(A1)
    b_holds = shares.ask(B1)[0]
    more_of_1 = shares.ask(A1)[0]
    first_of_2 = shares.ask(A2)[0]
    assert shares.release(b_holds) == [first_of_2]
    assert not more_of_1.granted and shares.waiting == [more_of_1]


def test_no_user_holds_more_than_its_most_even_with_contexts_free() -> None:
    """One is always left for another user: user a alone gets user_most of them."""
    shares = Shares(capacity=3, user_most=2)
    asked = [shares.ask(A1)[0] for _ in range(3)]
    assert [t.granted for t in asked] == [True, True, False]
    late = shares.ask(B1)[0]
    assert late.granted  # the one left, at once
    assert shares.release(asked[0]) == [asked[2]]


def test_a_withdrawn_wait_or_a_second_release_changes_nothing() -> None:
    shares = Shares(capacity=1, user_most=1)
    holding = shares.ask(A1)[0]
    waiting = shares.ask(B1)[0]
    assert shares.release(waiting) == [] and shares.waiting == []
    assert shares.release(holding) == []
    assert shares.release(holding) == [] and shares.held == 0
    assert isinstance(shares.ask(C1)[0], Ticket)


def test_shares_need_a_context() -> None:
    with pytest.raises(ValueError):
        Shares(capacity=0, user_most=1)


def test_a_wait_past_its_bound_is_busy_and_leaves_no_trace() -> None:
    """The one context stays held: the other's bounded wait ends in BrowserBusy (said as
    "not checked: the checking browser was busy"), and its request is withdrawn."""

    async def run() -> tuple[str, int, bool]:
        queue = FairQueue(capacity=1, user_most=1)
        release = asyncio.Event()
        inside = asyncio.Event()

        async def hold() -> None:
            async with queue.turn(A1, wait=1):
                inside.set()
                await release.wait()

        holder = asyncio.create_task(hold())
        await inside.wait()
        with pytest.raises(BrowserBusy) as busy:
            async with queue.turn(B1, wait=0.01):
                pass
        waiting = len(queue.shares.waiting)
        release.set()
        await holder
        async with queue.turn(C1, wait=0.01):
            free_again = queue.shares.held == 1
        return str(busy.value), waiting, free_again

    said, waiting, free_again = asyncio.run(run())
    assert said.startswith(BUSY) and waiting == 0 and free_again


def test_the_queue_lets_a_user_holding_none_in_before_an_older_request() -> None:
    """In the event loop: user a holds both contexts and asked for a third first; user c
    asked after; the first context a frees goes to c."""

    async def run() -> list[str]:
        queue = FairQueue(capacity=2, user_most=2)
        order: list[str] = []
        gates = {name: asyncio.Event() for name in ("a1", "a2", "a3", "c")}

        async def one(tenant: Tenant, name: str) -> None:
            async with queue.turn(tenant, wait=30):
                order.append(name)
                await gates[name].wait()

        tasks = [asyncio.create_task(one(A1, "a1")), asyncio.create_task(one(A2, "a2"))]
        await asyncio.sleep(0)  # each task runs to its first wait: both are in
        tasks.append(asyncio.create_task(one(A1, "a3")))
        await asyncio.sleep(0)
        tasks.append(asyncio.create_task(one(C1, "c")))
        await asyncio.sleep(0)  # a3, then c, wait
        assert order == ["a1", "a2"] and len(queue.shares.waiting) == 2
        for gate in gates.values():
            gate.set()
        await asyncio.gather(*tasks)
        return order

    assert asyncio.run(run()) == ["a1", "a2", "c", "a3"]
