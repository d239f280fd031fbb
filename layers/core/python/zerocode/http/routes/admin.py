"""Admin: every app (change, delete, forget its conversation) and every user."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from zerocode.http.deps import (
    AccountsDep,
    Admin,
    AppServiceDep,
    AppStoreDep,
    Featured,
    OwnedApp,
    UrlsDep,
)
from zerocode.http.schemas import (
    AdminAppIn,
    AdminAppListOut,
    AdminAppOut,
    AdminUserListOut,
    admin_app_out,
    admin_user_out,
)

router = APIRouter(prefix="/api/admin", tags=["admin"])


@router.get("/apps", response_model=AdminAppListOut)
def admin_apps(
    _: Admin,
    apps: AppStoreDep,
    accounts: AccountsDep,
    urls: UrlsDep,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
    q: Annotated[str | None, Query(max_length=60)] = None,
) -> AdminAppListOut:
    page = apps.list_all(cursor, limit, q)
    owners = {o: accounts.account_of(o) for o in {a.owner for a in page.apps}}
    return AdminAppListOut(
        apps=[admin_app_out(a, urls, owners[a.owner]) for a in page.apps],
        nextCursor=page.next_cursor,
    )


@router.patch("/apps/{app_id}", response_model=AdminAppOut)
def admin_update(
    _: Admin,
    app: OwnedApp,
    body: AdminAppIn,
    service: AppServiceDep,
    accounts: AccountsDep,
    urls: UrlsDep,
    featured: Featured,
) -> AdminAppOut:
    updated = service.admin_update(app, body.name, body.cover, body.priority)
    featured.clear()  # this process shows the change at once; others within minutes
    return admin_app_out(updated, urls, accounts.account_of(updated.owner))


@router.delete("/apps/{app_id}", status_code=204)
def admin_delete(_: Admin, app: OwnedApp, service: AppServiceDep, featured: Featured) -> Response:
    service.delete(app)
    featured.clear()
    return Response(status_code=204)


@router.delete("/apps/{app_id}/history", status_code=204)
def admin_clear_history(_: Admin, app: OwnedApp, service: AppServiceDep) -> Response:
    """Forget an app's conversation (both histories); its files stay."""
    service.clear_history(app)
    return Response(status_code=204)


@router.get("/users", response_model=AdminUserListOut)
def admin_users(
    _: Admin,
    accounts: AccountsDep,
    cursor: str | None = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
    q: Annotated[str | None, Query(max_length=64)] = None,
) -> AdminUserListOut:
    users, next_cursor = accounts.list_users(cursor, limit, q)
    return AdminUserListOut(users=[admin_user_out(u) for u in users], nextCursor=next_cursor)
