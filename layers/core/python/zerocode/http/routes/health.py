"""The platform's health and what it runs."""

from __future__ import annotations

from fastapi import APIRouter

from zerocode import __version__
from zerocode.http.deps import OPTIONAL_AUTH, FactsDep, MaybeCaller, StorageHealthDep
from zerocode.http.schemas import HealthOut

router = APIRouter(tags=["platform"])


@router.get(
    "/api/health",
    response_model=HealthOut,
    response_model_exclude_none=True,
    openapi_extra=OPTIONAL_AUTH,
)
def health(facts: FactsDep, user: MaybeCaller, storage: StorageHealthDep) -> HealthOut:
    """Anyone learns the status ("degraded" while storage cannot take a write or the data
    directory is below ZEROCODE_MIN_FREE_MB), version, mode and whether the offline model
    answers (the console says so before sign-in); only admins learn why it is degraded,
    which model endpoint answers and how builds and the browser are isolated (registration
    is open, so being signed in vouches for nothing; paths and free space are the
    operator's business)."""
    admin = user is not None and user.is_admin
    return HealthOut(
        status="ok" if storage.ok else "degraded",
        version=__version__,
        mode=facts.mode,
        offlineModel=facts.offline_model,
        model=facts.model if admin else None,
        builds=facts.builds if admin else None,
        browser=facts.browser if admin else None,
        reason=storage.reason if admin else None,
    )
