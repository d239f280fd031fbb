"""What the usage endpoints answer (issue 43; docs/api.md, "Usage"), an admin's among them:
an account's own budget, the platform's totals."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from zerocode.accounts.usage import AccountBudget, DayUsage, Totals, summed

MAX_TOKENS = 10**12  # the largest budget an admin may set (tokens per day or month)
Tokens = Annotated[int, Field(strict=True, ge=0, le=MAX_TOKENS)]


class UsageDayOut(BaseModel):
    day: str  # YYYY-MM-DD, UTC
    requests: int
    inputTokens: int
    outputTokens: int
    cachedTokens: int
    estimatedRequests: int  # requests whose provider reported nothing: counted by the platform
    # What the priced requests cost (US dollars; null when none had a price), and how many
    # had none: their cost is not claimed.
    costUsd: float | None
    unpricedRequests: int


class UsageTotalOut(BaseModel):
    requests: int
    inputTokens: int
    outputTokens: int
    cachedTokens: int
    estimatedRequests: int
    costUsd: float | None
    unpricedRequests: int


class UsageOut(BaseModel):
    """The days from ``from`` to ``to`` (UTC, inclusive) with any model request, oldest
    first, and their total."""

    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    days: list[UsageDayOut]
    total: UsageTotalOut


def usage_out(first: str, last: str, days: list[DayUsage]) -> dict[str, object]:
    """The JSON body (``from`` is a keyword in Python: the model's field is ``from_``)."""
    return {
        "from": first,
        "to": last,
        "days": [d.to_json() for d in days],
        "total": _counts(summed(days)),
    }


class BudgetIn(BaseModel):
    """An account's own budget, in place of the platform's: tokens (input and output) per
    UTC day and per UTC month; null: no limit for that period (both null: unlimited), 0:
    none at all. Both are required: the override is whole."""

    model_config = ConfigDict(extra="forbid")
    tokensPerDay: Tokens | None
    tokensPerMonth: Tokens | None


class BudgetOut(BaseModel):
    tokensPerDay: int | None
    tokensPerMonth: int | None


class SpentTokensOut(BaseModel):
    today: int  # input and output tokens, UTC
    thisMonth: int


class AccountBudgetOut(BaseModel):
    """An account's budgets: its own (null: none set, the platform's applies), the
    platform's, the one in force, and what it has spent against it."""

    userId: str
    account: str
    override: BudgetOut | None
    platform: BudgetOut
    effective: BudgetOut
    spent: SpentTokensOut


def budget_out(budget: AccountBudget) -> BudgetOut:
    return BudgetOut(tokensPerDay=budget.per_day, tokensPerMonth=budget.per_month)


class AccountUsageOut(UsageTotalOut):
    userId: str
    account: str | None  # its account name (null: the user is gone, or past the named ones)


class ModelUsageOut(UsageTotalOut):
    model: str  # as the requests named it ("" when not known)


class AdminUsageOut(BaseModel):
    """The platform's model requests from ``from`` to ``to``: per account (most tokens
    first, at most ``limit`` of them; ``accountCount``: how many spent anything), per model,
    and in all."""

    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    accounts: list[AccountUsageOut]
    accountCount: int
    models: list[ModelUsageOut]
    total: UsageTotalOut


def admin_usage_out(
    first: str, last: str, found: Totals, names: dict[str, str | None], limit: int
) -> dict[str, object]:
    return {
        "from": first,
        "to": last,
        "accounts": [
            {"userId": key, "account": names.get(key), **_counts(u)}
            for key, u in found.accounts[:limit]
        ],
        "accountCount": len(found.accounts),
        "models": [{"model": key, **_counts(u)} for key, u in found.models],
        "total": _counts(found.total),
    }


def _counts(usage: DayUsage) -> dict[str, object]:
    counts: dict[str, object] = {**usage.to_json()}
    del counts["day"]
    return counts
