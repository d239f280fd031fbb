"""What model requests cost, kept (issue 43): each request as it ends, and sums per app, per
account and per model per day; the token budgets held against them, the platform's or an
admin's for one account.

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from zerocode.accounts.ratelimit import RateLimited

Scope = Literal["app", "account"]
Group = Literal["account", "model"]  # the platform's totals (an admin's view), by
MAX_DAYS = 366  # the longest range one read may ask for
MICROS = 1_000_000  # costs are kept in millionths of a US dollar (whole numbers add exactly)
# What a day of usage counts (DayUsage's fields besides its day), each a whole number.
COUNTS = (
    "requests",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "estimated",
    "cost_micros",
    "unpriced",
)


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


@dataclass(frozen=True, kw_only=True)
class Tally:
    """One account's or one model's sums on one day (what the platform's totals add)."""

    group: Group
    key: str  # the account (user id), or the model's name ("" when not known)
    usage: DayUsage


@dataclass(frozen=True)
class AccountBudget:
    """Tokens (input and output) an account may spend per UTC day and per UTC month (None:
    no limit for that period; both None: unlimited; 0: nothing at all)."""

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


class BudgetStore(Protocol):
    """An admin's budget for one account, kept in place of the platform's."""

    def budget_of(self, account: str) -> AccountBudget | None:
        """The account's own budget, or None: the platform's applies."""
        ...

    def set_budget(self, account: str, budget: AccountBudget) -> None: ...

    def clear_budget(self, account: str) -> None:
        """The platform's budget applies again (nothing to clear is no error)."""
        ...


class UsageLedger(BudgetStore, Protocol):
    def record(self, spent: Spent) -> None:
        """Keep one request: in the turn's list and in its app's, account's and model's
        day (one transaction: the days always add up to the requests)."""
        ...

    def of_turn(self, app_id: str, turn: int) -> list[Spent]:
        """A turn's requests, in the order they were recorded."""
        ...

    def days(self, scope: Scope, key: str, first: str, last: str) -> list[DayUsage]:
        """The days from ``first`` to ``last`` (inclusive, YYYY-MM-DD) with any request,
        oldest first."""
        ...

    def tallies(self, first: str, last: str) -> list[Tally]:
        """Every account's and every model's sums on each day from ``first`` to ``last``
        (inclusive) that had a request, in no order (an admin's totals: :func:`totals`)."""
        ...

    def delete_app(self, app_id: str) -> None:
        """The app's requests and days (M8); its owner's days keep what was spent, which a
        budget still counts, and so do the models' days."""
        ...


def day_of(at: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(at))


class QuotaExceeded(RateLimited):
    """An account's token budget is spent (429 ``quota_exceeded``): which budget, how many
    tokens, and when it resets (``lockout``; Retry-After)."""

    code = "quota_exceeded"


@dataclass(frozen=True)
class Budgets:
    """The platform's token budgets per account per UTC day and month
    (``ZEROCODE_TOKENS_PER_DAY``, ``ZEROCODE_TOKENS_PER_MONTH``; None: no limit), and where
    an admin set an account's own, that one in their place (:class:`BudgetStore`, read on
    each check, so a change holds from the next model request)."""

    per_day: int | None = None
    per_month: int | None = None

    @property
    def platform(self) -> AccountBudget:
        return AccountBudget(self.per_day, self.per_month)

    def of(self, ledger: UsageLedger, account: str) -> AccountBudget:
        """The budget that holds for ``account``: its own if an admin set one."""
        own = ledger.budget_of(account)
        return self.platform if own is None else own

    def over(self, ledger: UsageLedger, account: str, now: float) -> QuotaExceeded | None:
        """The budget the account has spent, or None while it may go on."""
        return self.of(ledger, account).over(ledger, account, now)


@dataclass(frozen=True)
class Totals:
    """The platform's usage over a range: per account and per model, most tokens first,
    and in all (every request has one account, so the accounts add up to the total)."""

    accounts: list[tuple[str, DayUsage]] = field(default_factory=list)
    models: list[tuple[str, DayUsage]] = field(default_factory=list)
    total: DayUsage = field(default_factory=lambda: summed([]))


def totals(tallies: Iterable[Tally]) -> Totals:
    """The days of each account and each model, added up."""
    groups: dict[Group, dict[str, list[DayUsage]]] = {"account": {}, "model": {}}
    for tally in tallies:
        groups[tally.group].setdefault(tally.key, []).append(tally.usage)

    def ranked(group: Group) -> list[tuple[str, DayUsage]]:
        sums = [(key, summed(days)) for key, days in groups[group].items()]
        return sorted(sums, key=lambda s: (-(s[1].input_tokens + s[1].output_tokens), s[0]))

    accounts = ranked("account")
    return Totals(accounts, ranked("model"), summed(u for _, u in accounts))


def summed(days: Iterable[DayUsage], day: str = "") -> DayUsage:
    """Days added up into one (``day``: what to call it)."""
    kept = list(days)
    return DayUsage(day=day, **{c: sum(getattr(d, c) for d in kept) for c in COUNTS})


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
