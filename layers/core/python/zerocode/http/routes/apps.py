"""Apps: create, list (mine or featured), read, rename, delete."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from zerocode.accounts.service import Unauthenticated
from zerocode.apps.guards import check_text
from zerocode.http.deps import (
    OPTIONAL_AUTH,
    AppServiceDep,
    AppStoreDep,
    Caller,
    Featured,
    MaxChars,
    MaybeCaller,
    OwnedApp,
    PublishingDep,
    QuotaDep,
    UrlsDep,
)
from zerocode.http.schemas import AppListOut, AppOut, AppPatchIn, CreateAppIn, app_out

router = APIRouter(prefix="/api/apps", tags=["apps"])


@router.post("", status_code=201, response_model=AppOut)
async def create(
    body: CreateAppIn,
    user: Caller,
    service: AppServiceDep,
    quota: QuotaDep,
    urls: UrlsDep,
    max_chars: MaxChars,
) -> AppOut:
    prompt = check_text(body.initPrompt, field="initPrompt", max_chars=max_chars)
    await quota.charge("create", user.id)
    return app_out(await service.create(user.id, prompt, body.codeGenType), urls)


@router.get("", response_model=AppListOut, openapi_extra=OPTIONAL_AUTH)
def list_apps(
    user: MaybeCaller,
    apps: AppStoreDep,
    urls: UrlsDep,
    featured: Featured,
    scope: Literal["mine", "featured"] = "mine",
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
    q: Annotated[str | None, Query(max_length=60)] = None,
) -> AppListOut:
    """My apps (signed in), or the featured apps (anyone; cached for a few minutes)."""
    if scope == "featured":
        page = featured.page(cursor, limit, q)
    elif user is None:
        raise Unauthenticated("sign in to list your apps (scope=featured is public)")
    else:
        page = apps.list_by_owner(user.id, cursor, limit, q)
    return AppListOut(apps=[app_out(a, urls) for a in page.apps], nextCursor=page.next_cursor)


@router.get("/{app_id}", response_model=AppOut)
def get_app(app: OwnedApp, publishing: PublishingDep) -> AppOut:
    # Opening an app brings back a preview the preview sweep removed (AWS; docs/operations.md).
    publishing.restore_preview(app)
    return app_out(app, publishing.urls)


@router.patch("/{app_id}", response_model=AppOut)
def update(app: OwnedApp, body: AppPatchIn, service: AppServiceDep, urls: UrlsDep) -> AppOut:
    """Rename the app, or set whether a deploy needs its acceptance checks to pass."""
    return app_out(service.update(app, name=body.name, require_checks=body.requireChecks), urls)


@router.delete("/{app_id}", status_code=204)
def delete(app: OwnedApp, service: AppServiceDep) -> Response:
    service.delete(app)
    return Response(status_code=204)
