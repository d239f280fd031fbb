"""Accounts: register, sign in and out, who am I."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from zerocode.apps.guards import refuse_bidi
from zerocode.http.deps import (
    SESSION_COOKIE,
    AccountsDep,
    Caller,
    Credentials,
    FrontDoorDep,
    client_address,
)
from zerocode.http.headers import served_over_https
from zerocode.http.schemas import LoginIn, LoginOut, RegisterIn, UserOut, user_out

router = APIRouter(prefix="/api/users", tags=["users"])


@router.post("/register", status_code=201, response_model=UserOut)
def register(body: RegisterIn, request: Request, door: FrontDoorDep) -> UserOut:
    if body.name is not None:
        refuse_bidi(body.name, field="name")
    return user_out(door.register(body.account, body.password, body.name, client_address(request)))


@router.post("/login", response_model=LoginOut)
def login(
    body: LoginIn, request: Request, response: Response, door: FrontDoorDep, accounts: AccountsDep
) -> LoginOut:
    token, user = door.login(body.account, body.password, client_address(request))
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(accounts.token_seconds),
        httponly=True,
        samesite="strict",
        path="/api",
        secure=served_over_https(request),
    )
    return LoginOut(token=token, user=user_out(user))


@router.post("/logout", status_code=204)
def logout(
    request: Request, user: Caller, accounts: AccountsDep, credentials: Credentials = None
) -> Response:
    token = credentials.credentials if credentials else request.cookies.get(SESSION_COOKIE)
    if token:
        accounts.logout(token)
    response = Response(status_code=204)
    response.delete_cookie(
        SESSION_COOKIE,
        path="/api",
        secure=served_over_https(request),
        httponly=True,
        samesite="strict",
    )
    return response


@router.get("/me", response_model=UserOut)
def me(user: Caller) -> UserOut:
    return user_out(user)
