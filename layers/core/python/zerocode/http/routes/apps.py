"""Apps: create, list (mine or featured), read, rename, delete; an app's private cover."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response

from zerocode.accounts.service import Unauthenticated
from zerocode.apps.guards import check_text
from zerocode.errors import NotFound
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
from zerocode.publishing.builds import BUILD_ID_PATTERN

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
    if scope == "featured":  # anyone's: nothing private of the apps (no preview cover)
        page = featured.page(cursor, limit, q)
        shown = [app_out(a, urls, public=True) for a in page.apps]
    elif user is None:
        raise Unauthenticated("sign in to list your apps (scope=featured is public)")
    else:
        page = apps.list_by_owner(user.id, cursor, limit, q)
        shown = [app_out(a, urls) for a in page.apps]
    return AppListOut(apps=shown, nextCursor=page.next_cursor)


@router.get("/{app_id}", response_model=AppOut)
def get_app(app: OwnedApp, publishing: PublishingDep) -> AppOut:
    # Opening an app brings back a preview the preview sweep removed (AWS; docs/operations.md).
    publishing.restore_preview(app)
    return app_out(app, publishing.urls)


@router.get(
    "/{app_id}/cover",
    response_class=Response,
    responses={200: {"content": {"image/png": {}}, "description": "the app's preview cover"}},
)
def cover(
    app: OwnedApp,
    publishing: PublishingDep,
    build: Annotated[str | None, Query(pattern=BUILD_ID_PATTERN)] = None,
) -> Response:
    """The app's private cover, a screenshot of its latest preview, while it has no deploy
    cover (owner or admin; the app's ``previewCover`` names it). ``build``, as that path
    gives it, lets the browser keep the image: a new cover comes with a new path."""
    png = publishing.preview_cover(app)
    if png is None:
        raise NotFound("this app has no preview cover (a deployed app's cover is `cover`)")
    lasting = build is not None and build == app.preview_cover
    cache = "private, max-age=86400, immutable" if lasting else "private, no-cache"
    return Response(
        png,
        media_type="image/png",
        headers={
            "Cache-Control": cache,
            "Vary": "Authorization, Cookie",
            "X-Content-Type-Options": "nosniff",
        },
    )


@router.patch("/{app_id}", response_model=AppOut)
def update(app: OwnedApp, body: AppPatchIn, service: AppServiceDep, urls: UrlsDep) -> AppOut:
    """Rename the app, or set whether a deploy needs its acceptance checks to pass."""
    return app_out(service.update(app, name=body.name, require_checks=body.requireChecks), urls)


@router.delete("/{app_id}", status_code=204)
def delete(app: OwnedApp, service: AppServiceDep) -> Response:
    service.delete(app)
    return Response(status_code=204)
