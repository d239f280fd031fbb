"""Deploys: start one, list and read builds, roll back."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from zerocode.apps.records import App
from zerocode.bootstrap.platform import Platform
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
    made_from = _made_from(p, app) if page.builds else {}
    return BuildListOut(
        builds=[build_out(b, app, made_from.get(b.source_digest)) for b in page.builds],
        nextCursor=page.next_cursor,
    )


@router.get("/builds/{build_id}", response_model=BuildOut)
def build(app_id: str, build_id: str, app: OwnedApp, p: PlatformDep) -> BuildOut:
    # app_id is OwnedApp's, named here too so the OpenAPI document lists it first
    found = p.publishing.current(app.id, build_id)
    if found is None:
        raise NotFound(f"build {build_id} not found")
    return build_out(found, app, _made_from(p, app).get(found.source_digest))


def _made_from(p: Platform, app: App) -> dict[str, str]:
    """Source digest -> the newest version with those files, among the newest 50: what
    the console offers to restore with a rollback (which changes the site only)."""
    made: dict[str, str] = {}
    if p.engine.versions is not None:
        for v in p.engine.versions.store.list(app.id, None, 50):
            made.setdefault(v.digest, v.id)
    return made


@router.post("/rollback", response_model=AppOut)
async def rollback(app: OwnedApp, body: RollbackIn, p: PlatformDep) -> AppOut:
    """Serve an earlier successful deploy build again."""
    return app_out(await p.publishing.rollback(app, body.buildId), p.publishing.urls)
