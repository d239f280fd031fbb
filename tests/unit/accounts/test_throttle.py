"""The front door: failed sign-ins per account, attempts per address (accounts/throttle.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from zerocode.accounts.ratelimit import RateLimited
from zerocode.accounts.service import InvalidCredentials, Role, User
from zerocode.accounts.throttle import FrontDoor, FrontDoorLimits, account_key
from zerocode.adapters.inprocess.ratelimit import InProcessRateLimiter

T0 = 1_700_000_000.0
WINDOW = 900.0


class Clock:
    def __init__(self) -> None:
        self.at = T0

    def __call__(self) -> float:
        return self.at


@dataclass
class FakeAccounts:
    """Accounts whose password is always "right", counting the checks made."""

    token_seconds: float = 3600
    checks: list[str] = field(default_factory=list)
    registered: list[str] = field(default_factory=list)

    def login(self, account: object, password: object) -> tuple[str, User]:
        self.checks.append(str(account))
        if password != "right":
            raise InvalidCredentials("wrong account or password")
        return "token", User(
            id="id-" + str(account),
            account=str(account),
            name=str(account),
            role=Role.USER,
            password_hash="",
        )

    def register(self, account: object, password: object, name: object = None) -> User:
        self.registered.append(str(account))
        return User(
            id="id", account=str(account), name=str(account), role=Role.USER, password_hash=""
        )

    def authenticate(self, token: str | None) -> User | None:
        return None

    def logout(self, token: str) -> None:
        return None

    def make_admin(self, account: str) -> User:
        raise NotImplementedError

    def account_of(self, user_id: str) -> str | None:
        return None

    def list_users(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> tuple[list[User], str | None]:
        return [], None


def door(clock: Clock, failed: int = 5, attempts: int = 20) -> tuple[FrontDoor, FakeAccounts]:
    accounts = FakeAccounts()
    limiter = InProcessRateLimiter(now=clock)
    limits = FrontDoorLimits(failed, attempts, WINDOW)
    return FrontDoor(accounts, limiter, limits, now=clock), accounts


def status(front: FrontDoor, account: str, password: str, address: str | None) -> int:
    try:
        front.login(account, password, address)
    except RateLimited:
        return 429
    except InvalidCredentials:
        return 401
    return 200


def test_failed_sign_ins_lock_the_account_even_for_the_right_password() -> None:
    clock = Clock()
    front, accounts = door(clock)
    got = [status(front, "bob-1", "wrong", f"10.0.0.{i}") for i in range(8)]
    assert got == [401] * 5 + [429] * 3  # from eight addresses: the account counts
    assert len(accounts.checks) == 5  # refused attempts never reach the password check
    with pytest.raises(RateLimited, match="this account") as caught:
        front.login("BOB-1", "right", "10.0.1.1")  # the right password, any case
    assert caught.value.retry_after == WINDOW
    # What happened and when it ends, in words and as data (T0 is 22:13:20 UTC).
    assert caught.value.message == (
        "this account is locked after 5 wrong passwords; try again at 22:28 UTC (in 15 minutes)"
    )
    assert caught.value.lockout == {
        "reason": "wrong_passwords",
        "after": 5,
        "until": "2023-11-14T22:28:20Z",
    }
    assert front.login("amy-1", "right", "10.0.1.1")[1].account == "amy-1"  # others are free
    clock.at = T0 + WINDOW  # the failures left the window
    assert front.login("bob-1", "right", "10.0.1.1")[0] == "token"


def test_successful_sign_ins_never_lock_an_account() -> None:
    clock = Clock()
    front, _ = door(clock, attempts=1000)
    for _ in range(50):
        assert front.login("carol-1", "right", "10.0.0.1")[0] == "token"


def test_unknown_accounts_are_locked_alike() -> None:
    front, _ = door(Clock(), failed=2)
    statuses = [status(front, "nobody-here", "x", "10.0.0.1") for _ in range(3)]
    assert statuses == [401, 401, 429]


def test_attempts_per_address_count_sign_ins_and_registrations() -> None:
    clock = Clock()
    front, accounts = door(clock, attempts=4)
    front.register("new-1", "pw", None, "10.0.0.9")
    front.register("new-2", "pw", None, "10.0.0.9")
    front.login("new-1", "right", "10.0.0.9")
    assert status(front, "new-2", "wrong", "10.0.0.9") == 401
    with pytest.raises(RateLimited, match="this address") as caught:
        front.register("new-3", "pw", None, "10.0.0.9")
    assert 0 < caught.value.retry_after <= WINDOW
    assert accounts.registered == ["new-1", "new-2"]
    assert front.register("new-3", "pw", None, "10.0.0.10").account == "new-3"  # another one
    clock.at = T0 + WINDOW
    assert front.register("new-4", "pw", None, "10.0.0.9").account == "new-4"


def test_no_address_means_only_the_account_limit() -> None:
    front, _ = door(Clock(), attempts=1)
    for _ in range(5):
        assert front.login("dan-1", "right", None)[0] == "token"


def test_the_account_key_is_bounded_and_case_blind() -> None:
    assert account_key("Bob-1") == account_key("bob-1")
    assert account_key("bob-1") != account_key("bob-2")
    assert len(account_key("x" * 1_000_000)) == len(account_key("a"))
    assert account_key(None) == account_key(None)
