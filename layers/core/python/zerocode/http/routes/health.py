"""The platform's health and what it runs."""

from __future__ import annotations

from fastapi import APIRouter

from zerocode import __version__
from zerocode.http.deps import PlatformDep
from zerocode.http.schemas import HealthOut

router = APIRouter(tags=["platform"])


@router.get("/api/health", response_model=HealthOut)
def health(p: PlatformDep) -> HealthOut:
    return HealthOut(
        status="ok",
        version=__version__,
        mode=p.settings.mode,
        model=p.model.description,
        builds=p.build_isolation,
        offlineModel=bool(getattr(p.model, "offline", False)),
    )
