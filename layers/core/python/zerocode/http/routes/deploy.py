"""Deploys: start one, list and read builds, roll back."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from zerocode.errors import NotFound
from zerocode.http.deps import Caller, OwnedApp, PlatformDep
from zerocode.http.schemas import (
    AppOut,
    BuildListOut,
    BuildOut,
    DeployOut,
    RollbackIn,
    app_out,
    build_out,
)
from zerocode.publishing.builds import BuildPurpose

router = APIRouter(prefix="/api/apps/{app_id}", tags=["deploy"])


@router.post("/deploy", status_code=202, response_model=DeployOut)
async def deploy(app: OwnedApp, user: Caller, p: PlatformDep) -> DeployOut:
    """Snapshot the source and build it; the site flips to it only if it succeeds."""
    p.quota("deploy", user.id)
    build = await p.publishing.start_deploy(app)
    return DeployOut(buildId=build.id, state=build.state)


@router.get("/builds", response_model=BuildListOut)
def builds(
    app: OwnedApp,
    p: PlatformDep,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
    purpose: BuildPurpose | None = None,
) -> BuildListOut:
    page = p.builds.list(app.id, cursor, limit, purpose)
    return BuildListOut(
        builds=[build_out(b, app) for b in page.builds], nextCursor=page.next_cursor
    )


@router.get("/builds/{build_id}", response_model=BuildOut)
def build(app_id: str, build_id: str, app: OwnedApp, p: PlatformDep) -> BuildOut:
    # app_id is OwnedApp's, named here too so the OpenAPI document lists it first
    found = p.publishing.current(app.id, build_id)
    if found is None:
        raise NotFound(f"build {build_id} not found")
    return build_out(found, app)


@router.post("/rollback", response_model=AppOut)
async def rollback(app: OwnedApp, body: RollbackIn, p: PlatformDep) -> AppOut:
    """Serve an earlier successful deploy build again."""
    return app_out(await p.publishing.rollback(app, body.buildId), p.publishing.urls)
