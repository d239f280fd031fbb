"""An app's acceptance checks: the suite with its runs, a failed check's screenshot, a
check retired from the console, and a run of the checks asked for now (docs/api.md,
"Acceptance checks")."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Response

from zerocode.apps.records import App
from zerocode.engine.check_suite import CheckStore, check_number
from zerocode.engine.suite_follow import follow, running, settled
from zerocode.engine.suite_update import update_by_user
from zerocode.engine.suite_view import retire_by_user, suite_json
from zerocode.errors import Conflict, NotFound, PreviewOutOfDate
from zerocode.http.check_schemas import CheckOut, RetireIn
from zerocode.http.deps import (
    Caller,
    EngineDep,
    MaybeVersionsDep,
    OwnedApp,
    PublishingDep,
    QuotaDep,
)
from zerocode.http.long_routes import waits
from zerocode.http.suite_schemas import ChecksOut, SuiteCheckOut
from zerocode.publishing.builds import Build
from zerocode.publishing.service import Publishing

router = APIRouter(prefix="/api/apps/{app_id}/checks", tags=["checks"])


def _store(engine: EngineDep) -> CheckStore:
    if engine.checks is None:
        raise NotFound("acceptance checks are not kept on this platform")
    return engine.checks


@router.get("", response_model=ChecksOut)
async def checks(app: OwnedApp, engine: EngineDep, versions: MaybeVersionsDep) -> ChecksOut:
    """The suite: each check with its newest verdict and history, the newest runs, and
    whether a run is under way (after an edit, a restore or a rebuild)."""
    body = await asyncio.to_thread(suite_json, _store(engine), versions, app.id)
    return ChecksOut(requireChecks=app.require_checks, running=running(app.id), **body)


@router.get(
    "/{check_id}/runs/{run}/screenshot",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}, "description": "the page when it failed"}},
)
async def screenshot(app: OwnedApp, engine: EngineDep, check_id: str, run: int) -> Response:
    """The page as a failed check left it (owner or admin; never cached by others)."""
    shot = None
    if check_number(check_id) is not None and 0 < run < 2**31:
        shot = await asyncio.to_thread(_store(engine).screenshot, app.id, run, check_id)
    if shot is None:
        raise NotFound("no screenshot of that check in that run")
    return Response(
        shot,
        media_type="image/png",
        headers={"Cache-Control": "private, max-age=86400", "X-Content-Type-Options": "nosniff"},
    )


@router.post("/{check_id}/retire", response_model=CheckOut)
async def retire(
    app: OwnedApp, engine: EngineDep, versions: MaybeVersionsDep, check_id: str, body: RetireIn
) -> CheckOut:
    """Retire a check from the console: it stops applying; the model is told (M9)."""
    _store(engine)
    retired = await retire_by_user(engine, app.id, check_id, body.reason)
    listed = await asyncio.to_thread(suite_json, _store(engine), versions, app.id)
    return CheckOut(**next(c for c in listed["checks"] if c["id"] == retired.id))


@router.post("/run", response_model=ChecksOut, openapi_extra=waits("build"))
async def run_now(
    app: OwnedApp,
    user: Caller,
    engine: EngineDep,
    versions: MaybeVersionsDep,
    publishing: PublishingDep,
    quota: QuotaDep,
) -> ChecksOut:
    """Run the app's live checks against its preview now (owner or admin; the console's
    "Run checks now"); answers with the suite once the run is recorded. A run already under
    way is awaited, not repeated; a new one counts against the deploy quota (it holds the
    checking browser as a build holds a builder). 409 while a turn runs (its end runs
    them), 409 ``preview_out_of_date`` when the preview is older than the files (a rebuild
    runs them on the new preview)."""
    store = _store(engine)
    if await asyncio.to_thread(engine.lease.held, f"turn:{app.id}"):
        raise Conflict(
            "this app's files are being changed (a turn, an edit or a restore); "
            "its checks run on the new preview when that ends"
        )
    build = await _shown(publishing, app)
    if build is None:
        raise PreviewOutOfDate(
            "the preview does not show the app's files as they are: rebuild the preview "
            "(its checks run on the new preview)"
        )
    if not running(app.id):
        await quota.charge("deploy", user.id)
        follow(engine, app, build)
    await settled(app.id)
    body = await asyncio.to_thread(suite_json, store, versions, app.id)
    return ChecksOut(requireChecks=app.require_checks, running=running(app.id), **body)


@router.post("/{check_id}/update", response_model=SuiteCheckOut)
async def update(
    app: OwnedApp,
    engine: EngineDep,
    versions: MaybeVersionsDep,
    publishing: PublishingDep,
    check_id: str,
) -> SuiteCheckOut:
    """A check the builder's own edit changed, updated to what the page showed when it
    failed (its failing text expectation takes the text found): the new check answers, the
    old one is retired naming it, the model is told (M9), and the checks run again on the
    preview. 409 while a turn runs, 422 when the failure names no text to put in it."""
    store = _store(engine)
    added = await update_by_user(engine, app.id, check_id)
    build = await _shown(publishing, app)
    if build is not None:
        follow(engine, app, build)
    listed = await asyncio.to_thread(suite_json, store, versions, app.id)
    return SuiteCheckOut(**next(c for c in listed["checks"] if c["id"] == added.id))


async def _shown(publishing: Publishing, app: App) -> Build | None:
    """The preview's build when it shows the app's files as they are (else None)."""
    state = await asyncio.to_thread(publishing.preview_state, app)
    if state.build_id is None or not state.up_to_date:
        return None
    return await asyncio.to_thread(publishing.builds.get, app.id, state.build_id)
