"""An app's own end users (zerocode/data/end_users.py) on SQLite and on DynamoDB (moto):
sign-up and sign-in per app and space, sessions worth nothing elsewhere, throttled
guessing, removal that ends every session, and the seed records of a preview kept once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from zerocode.accounts.ratelimit import RateLimited
from zerocode.adapters.inprocess.ratelimit import InProcessRateLimiter
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.end_users import SqliteEndUserStore
from zerocode.adapters.sqlite.records import SqliteRecordStore
from zerocode.data.end_users import (
    SESSION_SECONDS,
    EndUserLimits,
    EndUsers,
    EndUserStore,
    UsernameTaken,
    UsersFull,
    WrongPassword,
)
from zerocode.data.model import parse
from zerocode.data.records import Query, RecordStore
from zerocode.data.service import DataService
from zerocode.errors import InvalidInput

ADA = {"username": "Ada", "password": "a long password"}


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


@dataclass
class Stores:
    """The end users' and the records' stores over one database."""

    users: Callable[[], EndUserStore]
    records: Callable[[], RecordStore]


@pytest.fixture(params=["sqlite", "dynamodb"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Stores:
    if request.param == "sqlite":
        database = SqliteDatabase(tmp_path / "data.sqlite")
        return Stores(lambda: SqliteEndUserStore(database), lambda: SqliteRecordStore(database))
    request.getfixturevalue("aws")
    import boto3

    from tests.integration.backends import OneRequestAtATime
    from zerocode.adapters.dynamodb.app_data import create_app_data_table
    from zerocode.adapters.dynamodb.end_users import DynamoEndUserStore
    from zerocode.adapters.dynamodb.records import DynamoRecordStore

    client = OneRequestAtATime(boto3.client("dynamodb", region_name="us-east-1"))
    create_app_data_table(client, "app-data")
    return Stores(
        lambda: DynamoEndUserStore(client, "app-data"),
        lambda: DynamoRecordStore(client, "app-data"),
    )


def users_on(db: Stores, **limits: int) -> tuple[EndUsers, Clock]:
    clock = Clock()
    limiter = InProcessRateLimiter(now=clock)
    return EndUsers(db.users(), limiter, EndUserLimits(**limits), now=clock), clock


def test_a_session_is_worth_nothing_at_another_app_or_space(db: Stores) -> None:
    users, _ = users_on(db)
    session, user = users.sign_up("app1", "preview", ADA, "10.0.0.1")
    assert user.username == "ada" and user.password_hash.startswith("scrypt$")
    assert "password" not in str(user.shown()) and user.shown()["username"] == "ada"
    assert users.visitor("app1", "preview", session.token) == user
    assert users.visitor("app1", "live", session.token) is None
    assert users.visitor("app2", "preview", session.token) is None
    assert users.visitor("app1", "preview", session.token + "x") is None
    assert users.visitor("app1", "preview", "x" * 500) is None
    with pytest.raises(UsernameTaken):
        users.sign_up("app1", "preview", {**ADA, "username": "ADA"}, "10.0.0.2")
    users.sign_up("app1", "live", ADA, "10.0.0.1")  # another space: another person
    users.sign_up("app2", "preview", ADA, "10.0.0.1")  # another app too


def test_sessions_expire_and_sign_out_and_removal_end_them(db: Stores) -> None:
    users, clock = users_on(db)
    first, user = users.sign_up("app1", "live", ADA, None)
    second, _ = users.sign_in("app1", "live", ADA, None)
    users.sign_out("app1", "live", first.token)
    assert users.visitor("app1", "live", first.token) is None
    assert users.visitor("app1", "live", second.token) == user
    clock.t += SESSION_SECONDS + 1
    assert users.visitor("app1", "live", second.token) is None
    third, _ = users.sign_in("app1", "live", ADA, None)
    users.remove("app1", "live", user.id)
    assert users.visitor("app1", "live", third.token) is None
    with pytest.raises(WrongPassword):
        users.sign_in("app1", "live", ADA, None)


@pytest.mark.parametrize(
    "body",
    [
        None,
        [],
        {"username": "ab", "password": "a long password"},
        {"username": "has space", "password": "a long password"},
        {"username": "-dash", "password": "a long password"},
        {"username": "ada", "password": "short"},
        {"username": "ada", "password": "x" * 129},
        {"username": 5, "password": "a long password"},
        {"username": "ada"},
    ],
)
def test_a_bad_sign_up_is_refused_saying_why(db: Stores, body: object) -> None:
    users, _ = users_on(db)
    with pytest.raises(InvalidInput):
        users.sign_up("app1", "live", body, None)
    assert users.page("app1", "live", None, 10) == ([], None)


def test_guessing_a_password_is_paused_per_user_and_per_address(db: Stores) -> None:
    users, clock = users_on(db, failed_logins=3, attempts=6)
    users.sign_up("app1", "live", ADA, "10.0.0.1")
    wrong = {**ADA, "password": "not her password"}
    for n in range(3):
        with pytest.raises(WrongPassword):
            users.sign_in("app1", "live", wrong, f"10.0.1.{n}")
    with pytest.raises(RateLimited) as paused:  # the right password too, till it passes
        users.sign_in("app1", "live", ADA, "10.0.2.1")
    assert "paused after 3 wrong passwords" in paused.value.message
    clock.t += 15 * 60 + 1
    users.sign_in("app1", "live", ADA, "10.0.2.1")
    for n in range(6):  # one address: 6 attempts, whoever they are for
        with pytest.raises(WrongPassword):
            users.sign_in(
                "app1", "live", {"username": f"nobody{n}", "password": "x" * 8}, "10.9.9.9"
            )
    with pytest.raises(RateLimited) as address:
        users.sign_up("app1", "live", {**ADA, "username": "eve"}, "10.9.9.9")
    assert "from this address" in address.value.message
    users.sign_up("app2", "live", {**ADA, "username": "eve"}, "10.9.9.9")  # another app's


def test_at_most_so_many_users_even_when_sign_ups_race(db: Stores) -> None:
    users, _ = users_on(db, most=5)
    made, refused = [], []

    def sign_up(n: int) -> None:
        try:
            users.sign_up("app1", "live", {"username": f"user{n}", "password": "x" * 8}, None)
            made.append(n)
        except UsersFull:
            refused.append(n)

    threads = [threading.Thread(target=sign_up, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 5 and len(refused) == 3
    page, cursor = users.page("app1", "live", None, 3)
    assert len(page) == 3 and cursor == page[-1].username
    rest, end = users.page("app1", "live", cursor, 3)
    assert len(rest) == 2 and end is None


def test_a_preview_is_seeded_once_and_again_after_a_reset(db: Stores) -> None:
    model = parse(
        b'{"collections": {"entries": {"fields": {"m": {"type": "text"}},'
        b' "rules": {"list": "public", "read": "public", "create": "public",'
        b' "update": "public", "delete": "public"},'
        b' "seed": [{"m": "one"}, {"m": "two"}, {"m": "three"}]}}}'
    )
    records = db.records()
    service = DataService(records)

    def listed() -> list[str]:
        page = records.list("app1", "preview", "entries", Query(limit=100))
        return [r.fields["m"] for r in page.records]

    service.seed_preview("app1", model)
    assert listed() == ["one", "two", "three"]  # in the file's order
    first = records.list("app1", "preview", "entries", Query(limit=1)).records[0]
    records.delete("app1", "preview", "entries", first.id)
    DataService(records).seed_preview("app1", model)  # another process: already seeded
    assert listed() == ["two", "three"]  # a deleted seed record stays deleted
    assert records.count("app1", "live", "entries") == 0  # seeds fill previews only
    assert service.reset_preview("app1", model) == 2
    assert listed() == ["one", "two", "three"]
