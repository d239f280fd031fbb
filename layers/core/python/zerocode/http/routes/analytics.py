"""A published site's visits, by day (issue 44, point 4; docs/api.md, "Analytics"): page
views, visitors and bots' views of the app's site, for its owner. Days are UTC."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from zerocode.http.deps import OwnedApp, VisitsDep
from zerocode.http.visit_schemas import AnalyticsOut, analytics_out
from zerocode.publishing.visits import DEFAULT_DAYS, MAX_DAYS

router = APIRouter(tags=["analytics"])
Days = Annotated[
    int,
    Query(
        ge=1,
        le=MAX_DAYS,
        description=f"how many UTC days, today included (1 to {MAX_DAYS})",
    ),
]


@router.get("/api/apps/{app_id}/analytics", response_model=AnalyticsOut)
async def app_analytics(
    app: OwnedApp, visits: VisitsDep, days: Days = DEFAULT_DAYS
) -> dict[str, object]:
    """The site's page views, distinct visitors and bots' views on each of the last
    ``days`` UTC days (zeros included), and their total. Previews are never counted."""
    return analytics_out(await visits.report(app.id, days))
