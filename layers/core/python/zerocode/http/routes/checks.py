"""An app's acceptance checks: the suite with its runs, a failed check's screenshot, and a
check retired from the console (docs/api.md, "Acceptance checks")."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Response

from zerocode.engine.check_suite import CheckStore, check_number
from zerocode.engine.suite_view import retire_by_user, suite_json
from zerocode.errors import NotFound
from zerocode.http.deps import EngineDep, MaybeVersionsDep, OwnedApp
from zerocode.http.schemas import CheckOut, ChecksOut, RetireIn

router = APIRouter(prefix="/api/apps/{app_id}/checks", tags=["checks"])


def _store(engine: EngineDep) -> CheckStore:
    if engine.checks is None:
        raise NotFound("acceptance checks are not kept on this platform")
    return engine.checks


@router.get("", response_model=ChecksOut)
async def checks(app: OwnedApp, engine: EngineDep, versions: MaybeVersionsDep) -> ChecksOut:
    """The suite: each check with its newest verdict and history, and the newest runs."""
    body = await asyncio.to_thread(suite_json, _store(engine), versions, app.id)
    return ChecksOut(requireChecks=app.require_checks, **body)


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
