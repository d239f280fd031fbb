"""Deploys: start one, list and read builds, roll back; the preview's state and its
rebuild."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Path, Query

from zerocode.apps.records import App, AppStore
from zerocode.apps.versions import Versions
from zerocode.engine.rebuild import rebuild_preview
from zerocode.engine.suite_view import gate_deploy
from zerocode.engine.turn import Engine
from zerocode.errors import NotFound
from zerocode.http.deps import (
    BuildsDep,
    Caller,
    EngineDep,
    MaybeVersionsDep,
    OwnedApp,
    PublishingDep,
    QuotaDep,
    UrlsDep,
    WorkspaceDep,
)
from zerocode.http.long_routes import waits
from zerocode.http.report_schemas import (
    BuildReportOut,
    PublishReportOut,
    build_report_out,
    report_out,
)
from zerocode.http.routes.data import MaybeDataView
from zerocode.http.schemas import (
    AppOut,
    BuildListOut,
    BuildOut,
    DeployIn,
    DeployOut,
    PreviewOut,
    RestoreBuildOut,
    RollbackIn,
    app_out,
    build_out,
)
from zerocode.publishing.builds import BUILD_ID_PATTERN, Build, BuildPurpose, is_build_id, snapshot
from zerocode.publishing.report_runner import ReportView
from zerocode.publishing.service import Publishing

router = APIRouter(prefix="/api/apps/{app_id}", tags=["deploy"])


@router.post("/deploy", status_code=202, response_model=DeployOut)
async def deploy(
    app: OwnedApp,
    user: Caller,
    publishing: PublishingDep,
    engine: EngineDep,
    workspace: WorkspaceDep,
    quota: QuotaDep,
    view: MaybeDataView,
    body: DeployIn | None = None,
) -> DeployOut:
    """Snapshot the source and build it; the site flips to it only if it succeeds. With
    ``requireChecks`` (or the app's setting) the acceptance checks must have passed on these
    files (409 ``checks_failed`` otherwise); the suite's state is recorded for the build.
    A data model that would hide live records is 409 ``data_hidden``, naming them, unless
    ``confirmDataChanges`` (nothing is deleted either way)."""
    required = (
        app.require_checks if body is None or body.requireChecks is None else body.requireChecks
    )
    tally = None
    source = await asyncio.to_thread(snapshot, workspace, app.id)
    if view is not None and not (body is not None and body.confirmDataChanges):
        await asyncio.to_thread(view.check_deploy, app, source.files)
    if engine.checks is not None:
        digest = source.digest
        checks = engine.checks
        tally = await asyncio.to_thread(
            lambda: gate_deploy(checks, app.id, digest, required=required)
        )
    await quota.charge("deploy", user.id)
    build = await publishing.start_deploy(app)
    if tally is not None and engine.checks is not None:
        await asyncio.to_thread(engine.checks.stamp_deploy, app.id, build.id, tally)
    return DeployOut(buildId=build.id, state=build.state)


@router.get("/preview", response_model=PreviewOut)
async def preview(app: OwnedApp, publishing: PublishingDep) -> PreviewOut:
    """Whether the preview shows the files as they are now. When it does not (a turn was
    cut off, a build failed), the console says "preview out of date" and offers Rebuild,
    and a chat naming an element of the preview is refused (409)."""
    state = await asyncio.to_thread(publishing.preview_state, app)
    return PreviewOut(buildId=state.build_id, upToDate=state.up_to_date)


@router.post("/preview", response_model=PreviewOut, openapi_extra=waits("build"))
async def rebuild(
    app: OwnedApp, user: Caller, engine: EngineDep, publishing: PublishingDep, quota: QuotaDep
) -> PreviewOut:
    """Build the files as they are now into the preview (409 while a turn runs; its end
    rebuilds anyway). Answers when the build has finished, successful or not. A preview
    that is up to date is not built again (and costs nothing); a rebuild counts against
    the deploy quota, as any build a user asks for."""
    state = await asyncio.to_thread(publishing.preview_state, app)
    if state.up_to_date:
        return PreviewOut(buildId=state.build_id, upToDate=True)
    await quota.charge("deploy", user.id)
    build = await rebuild_preview(engine, app)
    state = await asyncio.to_thread(publishing.preview_state, app)
    return PreviewOut(
        buildId=state.build_id,
        upToDate=state.up_to_date,
        build=RestoreBuildOut(id=build.id, state=build.state, error=build.error),
    )


@router.get("/builds", response_model=BuildListOut)
def builds(
    app: OwnedApp,
    builds: BuildsDep,
    publishing: PublishingDep,
    versions: MaybeVersionsDep,
    engine: EngineDep,
    # a build id, as the previous page's nextCursor gave it
    cursor: Annotated[str | None, Query(json_schema_extra={"pattern": BUILD_ID_PATTERN})] = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
    purpose: BuildPurpose | None = None,
) -> BuildListOut:
    page = builds.list(app.id, cursor, limit, purpose)
    app = _after(publishing.apps, app)
    made_from = _made_from(versions, app) if page.builds else {}
    stamps = _stamps(engine, app) if page.builds else {}
    reports = _reports(publishing, page.builds)
    return BuildListOut(
        builds=[
            build_out(b, app, made_from.get(b.source_digest), stamps.get(b.id), reports.get(b.id))
            for b in page.builds
        ],
        nextCursor=page.next_cursor,
    )


@router.get("/builds/{build_id}", response_model=BuildOut)
def build(
    app_id: str,
    build_id: str,
    app: OwnedApp,
    publishing: PublishingDep,
    versions: MaybeVersionsDep,
    engine: EngineDep,
) -> BuildOut:
    # app_id is OwnedApp's, named here too so the OpenAPI document lists it first
    found = publishing.current(app.id, build_id)
    if found is None:
        raise NotFound(f"build {build_id} not found")
    app = _after(publishing.apps, app)
    version = _made_from(versions, app).get(found.source_digest)
    return build_out(found, app, version, _stamps(engine, app).get(found.id))


@router.get("/deploys/{build_id}/report", response_model=PublishReportOut)
def deploy_report(
    app_id: str,
    build_id: Annotated[str, Path(json_schema_extra={"pattern": BUILD_ID_PATTERN})],
    app: OwnedApp,
    publishing: PublishingDep,
) -> PublishReportOut:
    """A deploy build's publish report (issue 44): the Lighthouse-style checks the platform
    ran on it once it was published, each passed, failed (what is wrong, where, what to
    change) or not run (why). ``pending`` while it is made (poll again), ``none`` when there
    is none (``why``). 404 for a build of another app, or a preview build."""
    # app_id is OwnedApp's, named here too so the OpenAPI document lists it first
    found = publishing.builds.get(app.id, build_id) if is_build_id(build_id) else None
    if found is None or found.purpose is not BuildPurpose.DEPLOY:
        raise NotFound(f"deploy build {build_id} not found")
    if publishing.reports is None:
        return report_out(app.id, found.id, ReportView("none", why=REPORTS_OFF))
    return report_out(app.id, found.id, publishing.reports.view(found))


REPORTS_OFF = "publish reports are off on this platform (ZEROCODE_PUBLISH_REPORT=0)"


def _reports(publishing: Publishing, builds: list[Build]) -> dict[str, BuildReportOut]:
    """Each deploy build's report, in short (one read for the page)."""
    if publishing.reports is None:
        return {}
    found = publishing.reports.summaries(builds)
    return {b: build_report_out(state, summary) for b, (state, summary) in found.items()}


def _after(apps: AppStore, app: App) -> App:
    """The app read again after its builds were: a deploy is published, then recorded
    succeeded (publishing/service.py), so a build read as succeeded is published in this
    read; the app read before it (for the owner's check) may not show it published yet."""
    return apps.get(app.id) or app


def _stamps(engine: Engine, app: App) -> dict[str, dict[str, int]]:
    """Each deploy build's acceptance checks, as recorded when it was asked for."""
    if engine.checks is None:
        return {}
    return {k: v.to_json() for k, v in engine.checks.deploy_stamps(app.id).items()}


def _made_from(versions: Versions | None, app: App) -> dict[str, str]:
    """Source digest -> the newest version with those files, among the newest 50: what
    the console offers to restore with a rollback (which changes the site only)."""
    return versions.made_from(app.id) if versions is not None else {}


@router.post("/rollback", response_model=AppOut)
async def rollback(
    app: OwnedApp, body: RollbackIn, publishing: PublishingDep, urls: UrlsDep
) -> AppOut:
    """Serve an earlier successful deploy build again."""
    return app_out(await publishing.rollback(app, body.buildId), urls)
