"""The platform's health and what it runs."""

from __future__ import annotations

from fastapi import APIRouter

from zerocode import __version__
from zerocode.http.deps import OPTIONAL_AUTH, FactsDep, MaybeCaller
from zerocode.http.schemas import HealthOut

router = APIRouter(tags=["platform"])


@router.get(
    "/api/health",
    response_model=HealthOut,
    response_model_exclude_none=True,
    openapi_extra=OPTIONAL_AUTH,
)
def health(facts: FactsDep, user: MaybeCaller) -> HealthOut:
    """Anyone learns the status, version, mode and whether the offline model answers (the
    console says so before sign-in); only admins learn which model endpoint answers and how
    builds and the browser are isolated (registration is open, so being signed in vouches
    for nothing)."""
    admin = user is not None and user.is_admin
    return HealthOut(
        status="ok",
        version=__version__,
        mode=facts.mode,
        offlineModel=facts.offline_model,
        model=facts.model if admin else None,
        builds=facts.builds if admin else None,
        browser=facts.browser if admin else None,
    )
