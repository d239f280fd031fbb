"""Lease contract, run against every adapter: at most one holder per key until it expires."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.backends import OneRequestAtATime, run_together
from zerocode.apps.lease import Lease

T0 = 1_700_000_000.0
TTL = 30.0

# (now=None) -> a Lease on the same storage as every other lease the factory made
LeaseFactory = Callable[..., Lease]


class Clock:
    def __init__(self, at: float = T0) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


@pytest.fixture(params=["sqlite", "dynamodb"])
def leases(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LeaseFactory]:
    if request.param == "sqlite":
        from zerocode.adapters.sqlite.database import SqliteDatabase
        from zerocode.adapters.sqlite.lease import SqliteLease

        dbs: list[SqliteDatabase] = []

        def sqlite_lease(now: Callable[[], float] | None = None) -> Lease:
            # One connection per lease object, as separate processes would have.
            dbs.append(SqliteDatabase(tmp_path / "zc.sqlite3"))
            return SqliteLease(dbs[-1], now=now or Clock())

        yield sqlite_lease
        for db in dbs:
            db.close()
        return
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.dynamodb.lease import DynamoLease, create_leases_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_leases_table(client, "zc-leases")
    create_leases_table(client, "zc-leases")  # idempotent: a second start must not fail

    # moto does not apply a conditional write atomically; real DynamoDB does. One wrapper
    # (one lock) for every lease: a lock per lease would serialise nothing.
    serial = OneRequestAtATime(client)

    def dynamo_lease(now: Callable[[], float] | None = None) -> Lease:
        return DynamoLease(serial, "zc-leases", now=now or Clock())

    yield dynamo_lease


def test_free_lease_is_taken_and_then_refused_to_others(leases: LeaseFactory) -> None:
    lease = leases()
    assert lease.acquire("app-1", "turn-a", TTL) is True
    assert lease.acquire("app-1", "turn-b", TTL) is False
    assert leases().acquire("app-1", "turn-b", TTL) is False  # another process, same answer


def test_holder_renews(leases: LeaseFactory) -> None:
    clock = Clock()
    lease = leases(clock)
    assert lease.acquire("app-1", "turn-a", TTL)
    clock.at = T0 + TTL - 1
    assert lease.acquire("app-1", "turn-a", TTL) is True
    clock.at = T0 + TTL + 1  # past the first expiry, inside the renewed one
    assert lease.acquire("app-1", "turn-b", TTL) is False


def test_expired_lease_is_taken_over(leases: LeaseFactory) -> None:
    clock = Clock()
    lease = leases(clock)
    assert lease.acquire("app-1", "turn-a", TTL)
    clock.at = T0 + TTL - 0.001
    assert lease.acquire("app-1", "turn-b", TTL) is False
    clock.at = T0 + TTL  # expiry is inclusive: at expires_at the lease is free
    assert lease.acquire("app-1", "turn-b", TTL) is True
    assert lease.acquire("app-1", "turn-a", TTL) is False


def test_release_by_a_non_holder_does_not_free_it(leases: LeaseFactory) -> None:
    clock = Clock()
    lease = leases(clock)
    assert lease.acquire("app-1", "turn-a", TTL)
    lease.release("app-1", "turn-b")
    assert lease.acquire("app-1", "turn-c", TTL) is False
    # A turn whose lease expired and was taken over must not free the new holder's lease.
    clock.at = T0 + TTL + 1
    assert lease.acquire("app-1", "turn-b", TTL)
    lease.release("app-1", "turn-a")
    assert lease.acquire("app-1", "turn-c", TTL) is False


def test_release_by_the_holder_frees_it(leases: LeaseFactory) -> None:
    lease = leases()
    assert lease.acquire("app-1", "turn-a", TTL)
    lease.release("app-1", "turn-a")
    assert lease.acquire("app-1", "turn-b", TTL) is True


def test_release_of_a_free_key_is_harmless(leases: LeaseFactory) -> None:
    lease = leases()
    lease.release("never-taken", "turn-a")
    assert lease.acquire("never-taken", "turn-a", TTL) is True


def test_keys_are_independent(leases: LeaseFactory) -> None:
    lease = leases()
    assert lease.acquire("app-1", "turn-a", TTL)
    assert lease.acquire("app-2", "turn-b", TTL) is True
    lease.release("app-2", "turn-b")
    assert lease.acquire("app-1", "turn-b", TTL) is False
    assert lease.acquire("app-2", "turn-c", TTL) is True


@pytest.mark.parametrize("round_", range(3))
def test_racing_threads_have_exactly_one_winner(leases: LeaseFactory, round_: int) -> None:
    threads_n = 8
    contenders = [leases() for _ in range(threads_n)]
    results = run_together(
        threads_n, lambda i: contenders[i].acquire(f"app-{round_}", f"turn-{i}", TTL), timeout=30
    )
    winners = [i for i, won in results.items() if won]
    assert len(winners) == 1
    loser = next(i for i in range(threads_n) if i != winners[0])
    assert contenders[loser].acquire(f"app-{round_}", f"turn-{loser}", TTL) is False


def test_held_says_whether_someone_holds_it_now(leases: LeaseFactory) -> None:
    """What a reader of a turn's log asks before it calls the turn dead (engine/turns.py)."""
    clock = Clock()
    lease, other = leases(clock), leases(clock)
    assert not other.held("app-1")
    assert lease.acquire("app-1", "turn-a", TTL)
    assert other.held("app-1") and not other.held("app-2")
    clock.at = T0 + TTL  # expired: nobody holds it, though its row may remain
    assert not other.held("app-1")
    assert lease.acquire("app-1", "turn-b", TTL)
    lease.release("app-1", "turn-b")
    assert not other.held("app-1")
