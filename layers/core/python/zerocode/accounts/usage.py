"""What model requests cost, kept (issue 43): each request as it ends, and sums per app and
per account per day.

A turn counts its own requests as they come (engine/usage.py) and says them in ``done``;
the ledger keeps them durably, so a turn cut short by a crash still has its count, and an
app's or an account's spending can be shown by day and, later, held to a budget. Days are
UTC. A request's count is its provider's word, or the platform's estimate where the
provider said nothing (``estimated``).
"""

from __future__ import annotations

import calendar
import datetime as dt
import time
from dataclasses import dataclass
from typing import Literal, Protocol

from zerocode.accounts.ratelimit import RateLimited

Scope = Literal["app", "account"]
MAX_DAYS = 366  # the longest range one read may ask for
MICROS = 1_000_000  # costs are kept in millionths of a US dollar (whole numbers add exactly)


@dataclass(frozen=True)
class Price:
    """What a model's provider charges, in US dollars per million tokens: input, output,
    and cached input (the input rate where the provider has none of its own)."""

    input: float
    output: float
    cached: float | None = None

    def micros(self, input_tokens: int, output_tokens: int, cached_tokens: int) -> int:
        """A request's cost in millionths of a dollar (tokens x $/M tokens = micro-dollars)."""
        fresh = max(0, input_tokens - cached_tokens)
        cached_rate = self.input if self.cached is None else self.cached
        cost = fresh * self.input + cached_tokens * cached_rate + output_tokens * self.output
        return round(cost)


def usd(micros: int) -> float:
    return round(micros / MICROS, 6)


@dataclass(frozen=True, kw_only=True)
class Spent:
    """One model request, as recorded."""

    account: str
    app_id: str
    turn: int
    round: int  # the repair round (0: before any repair)
    model: str  # the model name the request went to ("" when not known)
    at: float  # when it ended (epoch seconds)
    input_tokens: int
    output_tokens: int
    cached_tokens: int = 0
    estimated: bool = False
    cost_micros: int | None = None  # None: no price is set for its model (never invented)

    @property
    def day(self) -> str:
        return day_of(self.at)


@dataclass(frozen=True, kw_only=True)
class DayUsage:
    """The requests and tokens of one scope (an app, an account) on one UTC day."""

    day: str  # YYYY-MM-DD
    requests: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    estimated: int  # how many of the requests were counted by the platform
    cost_micros: int = 0  # of the requests whose model has a price
    unpriced: int = 0  # requests whose model has no price: no cost is claimed for them

    def to_json(self) -> dict[str, int | str | float | None]:
        return {
            "day": self.day,
            "requests": self.requests,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cachedTokens": self.cached_tokens,
            "estimatedRequests": self.estimated,
            "costUsd": usd(self.cost_micros) if self.unpriced < self.requests else None,
            "unpricedRequests": self.unpriced,
        }


class UsageLedger(Protocol):
    def record(self, spent: Spent) -> None:
        """Keep one request: in the turn's list and in its app's and account's day."""
        ...

    def of_turn(self, app_id: str, turn: int) -> list[Spent]:
        """A turn's requests, in the order they were recorded."""
        ...

    def days(self, scope: Scope, key: str, first: str, last: str) -> list[DayUsage]:
        """The days from ``first`` to ``last`` (inclusive, YYYY-MM-DD) with any request,
        oldest first."""
        ...

    def delete_app(self, app_id: str) -> None:
        """The app's requests and days (M8); its owner's days keep what was spent, which a
        budget still counts."""
        ...


def day_of(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(at))


class QuotaExceeded(RateLimited):
    """An account's token budget is spent (429 ``quota_exceeded``): which budget, how many
    tokens, and when it resets (``lockout``; Retry-After)."""

    code = "quota_exceeded"


@dataclass(frozen=True)
class Budgets:
    """Tokens (input and output) an account may spend per UTC day and per UTC month
    (``ZEROCODE_TOKENS_PER_DAY``, ``ZEROCODE_TOKENS_PER_MONTH``; None: no limit)."""

    per_day: int | None = None
    per_month: int | None = None

    def over(self, ledger: UsageLedger, account: str, now: float) -> QuotaExceeded | None:
        """The budget the account has spent, or None while it may go on."""
        today = dt.datetime.fromtimestamp(now, dt.UTC).date()
        if self.per_day is not None:
            used = _tokens(ledger.days("account", account, today.isoformat(), today.isoformat()))
            if used >= self.per_day:
                return _spent("day", self.per_day, used, today + dt.timedelta(days=1), now)
        if self.per_month is not None:
            first = today.replace(day=1)
            used = _tokens(ledger.days("account", account, first.isoformat(), today.isoformat()))
            if used >= self.per_month:
                days = calendar.monthrange(today.year, today.month)[1]
                return _spent("month", self.per_month, used, first + dt.timedelta(days=days), now)
        return None


def _tokens(days: list[DayUsage]) -> int:
    return sum(d.input_tokens + d.output_tokens for d in days)


def _spent(period: str, budget: int, used: int, resets: dt.date, now: float) -> QuotaExceeded:
    until = dt.datetime.combine(resets, dt.time(), dt.UTC)
    wait = max(1.0, until.timestamp() - now)
    return QuotaExceeded(
        f"this account's token budget of {budget:,} per {period} is spent ({used:,} used); "
        f"it resets at {until:%Y-%m-%d %H:%M} UTC",
        wait,
        lockout={
            "reason": f"tokens_per_{period}",
            "after": budget,
            "until": until.strftime("%Y-%m-%dT%H:%M:%SZ"),
        },
    )
