"""What model requests cost, by day: an app's (its owner's view) and the caller's own account
(issue 43; docs/api.md, "Usage"). Days are UTC; a range is at most a year."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from typing import Annotated

from fastapi import APIRouter, Depends, Query

from zerocode.accounts.usage import MAX_DAYS, Scope, UsageLedger, day_of
from zerocode.errors import InvalidInput, NotFound
from zerocode.http.deps import Caller, EngineDep, OwnedApp
from zerocode.http.usage_schemas import UsageOut, usage_out

router = APIRouter(tags=["usage"])
DEFAULT_DAYS = 30  # without a range: the last 30 days, today included
DayParam = Annotated[
    str | None,
    Query(pattern=r"^\d{4}-\d{2}-\d{2}$", description="a UTC day, YYYY-MM-DD"),
]


def asked_range(
    from_: Annotated[DayParam, Query(alias="from")] = None, to: DayParam = None
) -> tuple[str, str]:
    """The days asked for (``?from=&to=``), checked (:func:`day_range`)."""
    return day_range(from_, to, today=day_of(time.time()))


Range = Annotated[tuple[str, str], Depends(asked_range)]


@router.get("/api/apps/{app_id}/usage", response_model=UsageOut)
async def app_usage(app: OwnedApp, engine: EngineDep, days: Range) -> dict[str, object]:
    """The app's model requests and tokens per day (its turns and repair rounds)."""
    return await _days(engine.usage, "app", app.id, days)


@router.get("/api/users/me/usage", response_model=UsageOut)
async def my_usage(user: Caller, engine: EngineDep, days: Range) -> dict[str, object]:
    """The caller's model requests and tokens per day, over all their apps (deleted ones
    included: what was spent stays spent)."""
    return await _days(engine.usage, "account", user.id, days)


async def _days(
    ledger: UsageLedger | None, scope: Scope, key: str, days: tuple[str, str]
) -> dict[str, object]:
    if ledger is None:
        raise NotFound("model usage is not kept on this platform")
    found = await asyncio.to_thread(ledger.days, scope, key, *days)
    return usage_out(*days, found)


def day_range(first: str | None, last: str | None, *, today: str) -> tuple[str, str]:
    """The range asked for, or the last :data:`DEFAULT_DAYS` days up to ``last`` (today by
    default); InvalidInput for a day that is not one, a range backwards or over a year."""
    end = _day(last or today, "to")
    start = _day(first, "from") if first else end - dt.timedelta(days=DEFAULT_DAYS - 1)
    if start > end:
        raise InvalidInput(f"from ({start}) is after to ({end})")
    if (end - start).days + 1 > MAX_DAYS:
        raise InvalidInput(f"a range is at most {MAX_DAYS} days; ask for less")
    return start.isoformat(), end.isoformat()


def _day(value: str, name: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise InvalidInput(f"{name}: {value[:20]!r} is not a day (YYYY-MM-DD)") from None
