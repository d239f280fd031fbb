"""What ``GET /api/apps/{appId}/analytics`` answers (issue 44, point 4; docs/api.md,
"Analytics"): the site's page views, visitors and bots' views per UTC day, and their sum."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from zerocode.publishing.visits import DayVisits, VisitReport


class VisitDayOut(BaseModel):
    day: str  # YYYY-MM-DD, UTC
    views: int  # page views by people
    visitors: int  # distinct visitors that day (a daily salted hash: docs/api.md)
    botViews: int  # page views by crawlers, previews of links, tools: counted apart


class VisitTotalOut(BaseModel):
    views: int
    visitors: int  # the days' visitors added up: no visitor is recognised across days
    botViews: int


class AnalyticsOut(BaseModel):
    """Every UTC day from ``from`` to ``to`` (today), oldest first, zeros included, and
    their total."""

    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    days: list[VisitDayOut]
    total: VisitTotalOut


def analytics_out(found: VisitReport) -> dict[str, object]:
    """The JSON body (``from`` is a keyword in Python: the model's field is ``from_``)."""
    return {
        "from": found.first,
        "to": found.last,
        "days": [d.to_json() for d in found.days],
        "total": _counts(found.total),
    }


def _counts(total: DayVisits) -> dict[str, object]:
    counts: dict[str, object] = {**total.to_json()}
    del counts["day"]
    return counts
