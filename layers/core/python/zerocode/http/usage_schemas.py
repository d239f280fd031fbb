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


class UsageTotalOut(BaseModel):
    requests: int
    inputTokens: int
    outputTokens: int
    cachedTokens: int
    estimatedRequests: int


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
    listed = [d.to_json() for d in days]
    fields = ("requests", "inputTokens", "outputTokens", "cachedTokens", "estimatedRequests")
    total = {f: sum(int(d[f]) for d in listed) for f in fields}
    return {"from": first, "to": last, "days": listed, "total": total}
