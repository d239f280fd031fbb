"""The front door: sign-in and registration throttled per account and per client address.

Two limits, both sliding windows on the platform's RateLimiter (in-process, Redis or
DynamoDB, as configured), so they hold in both modes and across Lambda containers:

- **Per account**: at most ``failed_logins`` failed sign-ins in any window. Past it every
  sign-in to that account is refused with 429 *before* the password is checked, the right
  password too (otherwise the answer would still tell a guesser when a guess was right),
  until the oldest failure leaves the window. Only failures count, so signing in often is
  never refused. The key is a hash of the lowercased account name, whether or not the
  account exists, so the answer says nothing about which accounts exist.
- **Per client address**: at most ``attempts`` sign-in and registration attempts, failed
  or not, in any window. This bounds guessing across many accounts from one address,
  registration spam, and the scrypt work one address can make the platform do.

A refused attempt is not counted (the limiter's rule), so hammering never extends the wait.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from zerocode.accounts.ratelimit import RateLimited, RateLimiter, enforce
from zerocode.accounts.service import AccountService, InvalidCredentials, User


@dataclass(frozen=True)
class FrontDoorLimits:
    failed_logins: int = 5  # per account per window
    attempts: int = 20  # sign-ins and registrations per client address per window
    window_seconds: float = 15 * 60


def account_key(account: object) -> str:
    """The limiter key of an account's failed sign-ins: bounded in size whatever was sent."""
    name = account.lower() if isinstance(account, str) else repr(type(account))
    return "login-failed:" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:32]


def address_key(address: str) -> str:
    return "front-door:" + hashlib.sha256(address.encode("utf-8", "replace")).hexdigest()[:32]


class FrontDoor:
    def __init__(
        self,
        accounts: AccountService,
        limiter: RateLimiter,
        limits: FrontDoorLimits,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.accounts, self.limiter, self.limits = accounts, limiter, limits
        self.now = now  # the clock a lockout's end is told by (the limiter's, in tests)

    def login(self, account: object, password: object, address: str | None) -> tuple[str, User]:
        self._count_attempt(address)
        key = account_key(account)
        state = self.limiter.peek(key, self.limits.failed_logins, self.limits.window_seconds)
        if not state.allowed:
            raise _locked(
                self.now(),
                f"this account is locked after {self.limits.failed_logins} wrong passwords",
                "wrong_passwords",
                self.limits.failed_logins,
                state.retry_after,
            )
        try:
            return self.accounts.login(account, password)
        except InvalidCredentials:
            self.limiter.hit(key, self.limits.failed_logins, self.limits.window_seconds)
            raise

    def register(
        self, account: object, password: object, name: object, address: str | None
    ) -> User:
        self._count_attempt(address)
        return self.accounts.register(account, password, name)

    def _count_attempt(self, address: str | None) -> None:
        """Without an address (no socket peer, no gateway context) only the account limit
        applies: one shared bucket for every such caller would let one lock out all."""
        if address is None:
            return
        try:
            enforce(
                self.limiter,
                address_key(address),
                self.limits.attempts,
                self.limits.window_seconds,
            )
        except RateLimited as exc:
            raise _locked(
                self.now(),
                f"sign-in and registration from this address are paused after "
                f"{self.limits.attempts} attempts",
                "attempts_from_address",
                self.limits.attempts,
                exc.retry_after,
            ) from None


def _locked(now: float, what: str, reason: str, after: int, retry_after: float) -> RateLimited:
    """A lockout said as what happened and when it ends ("... ; try again at 19:42 UTC (in 15
    minutes)"), with the same facts as data for a client to word in its own language."""
    until = datetime.fromtimestamp(math.ceil(now + max(1.0, retry_after)), UTC)
    message = f"{what}; try again at {until:%H:%M} UTC (in {_duration(retry_after)})"
    lockout: dict[str, object] = {
        "reason": reason,
        "after": after,
        "until": until.isoformat().replace("+00:00", "Z"),
    }
    return RateLimited(message, retry_after, lockout)


def _duration(seconds: float) -> str:
    if seconds < 90:
        n = max(1, math.ceil(seconds))
        return f"{n} second{'s' if n != 1 else ''}"
    n = round(seconds / 60)
    return f"{n} minutes"
