"""What model requests cost, kept (issue 43): each request as it ends, and sums per app and
per account per day.

A turn counts its own requests as they come (engine/usage.py) and says them in ``done``;
the ledger keeps them durably, so a turn cut short by a crash still has its count, and an
app's or an account's spending can be shown by day and, later, held to a budget. Days are
UTC. A request's count is its provider's word, or the platform's estimate where the
provider said nothing (``estimated``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal, Protocol

Scope = Literal["app", "account"]
MAX_DAYS = 366  # the longest range one read may ask for


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

    def to_json(self) -> dict[str, int | str]:
        return {
            "day": self.day,
            "requests": self.requests,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cachedTokens": self.cached_tokens,
            "estimatedRequests": self.estimated,
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
