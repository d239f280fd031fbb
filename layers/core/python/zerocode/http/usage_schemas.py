"""What the usage endpoints answer (issue 43; docs/api.md, "Usage")."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from zerocode.accounts.usage import DayUsage


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
    total = DayUsage(
        day=last,
        requests=sum(d.requests for d in days),
        input_tokens=sum(d.input_tokens for d in days),
        output_tokens=sum(d.output_tokens for d in days),
        cached_tokens=sum(d.cached_tokens for d in days),
        estimated=sum(d.estimated for d in days),
        cost_micros=sum(d.cost_micros for d in days),
        unpriced=sum(d.unpriced for d in days),
    ).to_json()
    del total["day"]
    return {"from": first, "to": last, "days": [d.to_json() for d in days], "total": total}
