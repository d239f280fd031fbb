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
from dataclasses import dataclass

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
        self, accounts: AccountService, limiter: RateLimiter, limits: FrontDoorLimits
    ) -> None:
        self.accounts, self.limiter, self.limits = accounts, limiter, limits

    def login(self, account: object, password: object, address: str | None) -> tuple[str, User]:
        self._count_attempt(address)
        key = account_key(account)
        state = self.limiter.peek(key, self.limits.failed_logins, self.limits.window_seconds)
        if not state.allowed:
            raise RateLimited(
                f"too many failed sign-ins to this account; try again in "
                f"{_minutes(state.retry_after)}",
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
            raise RateLimited(
                f"too many sign-in or registration attempts from this address; try again in "
                f"{_minutes(exc.retry_after)}",
                exc.retry_after,
            ) from None


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{round(seconds / 60)} min"
