"""Admin: every app (change, delete, forget its conversation), every user, an account's own
token budget, and what the platform's model requests cost (issue 43)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from fastapi import APIRouter, Query, Response

from zerocode.accounts.service import AccountService
from zerocode.accounts.usage import AccountBudget, Budgets, UsageLedger, totals
from zerocode.errors import NotFound
from zerocode.http.deps import (
    AccountsDep,
    Admin,
    AppServiceDep,
    AppStoreDep,
    EngineDep,
    Featured,
    OwnedApp,
    UrlsDep,
)
from zerocode.http.routes.usage import Range
from zerocode.http.schemas import (
    AdminAppIn,
    AdminAppListOut,
    AdminAppOut,
    AdminUserListOut,
    admin_app_out,
    admin_user_out,
)
from zerocode.http.usage_schemas import (
    AccountBudgetOut,
    AdminUsageOut,
    BudgetIn,
    SpentTokensOut,
    admin_usage_out,
    budget_out,
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


@router.get("/users/{user_id}/budget", response_model=AccountBudgetOut)
def admin_budget(
    _: Admin, user_id: str, engine: EngineDep, accounts: AccountsDep
) -> AccountBudgetOut:
    """The account's token budgets: its own (if set), the platform's, the one in force."""
    account = _account(accounts, user_id)
    return _budget(engine.budgets, _ledger(engine.usage), user_id, account)


@router.put("/users/{user_id}/budget", response_model=AccountBudgetOut)
def admin_set_budget(
    _: Admin, user_id: str, body: BudgetIn, engine: EngineDep, accounts: AccountsDep
) -> AccountBudgetOut:
    """Set the account's own budgets, in place of the platform's from its next model
    request (null: no limit for that period)."""
    account, ledger = _account(accounts, user_id), _ledger(engine.usage)
    ledger.set_budget(user_id, AccountBudget(body.tokensPerDay, body.tokensPerMonth))
    return _budget(engine.budgets, ledger, user_id, account)


@router.delete("/users/{user_id}/budget", status_code=204)
def admin_clear_budget(
    _: Admin, user_id: str, engine: EngineDep, accounts: AccountsDep
) -> Response:
    """The platform's budgets hold for the account again."""
    _account(accounts, user_id)
    _ledger(engine.usage).clear_budget(user_id)
    return Response(status_code=204)


@router.get("/usage", response_model=AdminUsageOut)
def admin_usage(
    _: Admin,
    engine: EngineDep,
    accounts: AccountsDep,
    days: Range,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, object]:
    """The platform's model requests per account and per model over the days asked for."""
    found = totals(_ledger(engine.usage).tallies(*days))
    names = {key: accounts.account_of(key) for key, _ in found.accounts[:limit]}
    return admin_usage_out(*days, found, names, limit)


def _ledger(ledger: UsageLedger | None) -> UsageLedger:
    if ledger is None:
        raise NotFound("model usage is not kept on this platform")
    return ledger


def _account(accounts: AccountService, user_id: str) -> str:
    account = accounts.account_of(user_id) if len(user_id) <= 128 else None
    if account is None:
        raise NotFound("no such user")
    return account


def _budget(
    budgets: Budgets | None, ledger: UsageLedger, user_id: str, account: str
) -> AccountBudgetOut:
    platform = (budgets or Budgets()).platform
    own = ledger.budget_of(user_id)
    today = dt.datetime.now(dt.UTC).date()
    month = ledger.days("account", user_id, today.replace(day=1).isoformat(), today.isoformat())
    tokens = {d.day: d.input_tokens + d.output_tokens for d in month}
    return AccountBudgetOut(
        userId=user_id,
        account=account,
        override=budget_out(own) if own is not None else None,
        platform=budget_out(platform),
        effective=budget_out(own if own is not None else platform),
        spent=SpentTokensOut(
            today=tokens.get(today.isoformat(), 0), thisMonth=sum(tokens.values())
        ),
    )
