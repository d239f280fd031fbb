"""Accounts: register, sign in and out, who am I."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from zerocode.http.deps import SESSION_COOKIE, Caller, Credentials, PlatformDep
from zerocode.http.schemas import LoginIn, LoginOut, RegisterIn, UserOut, user_out

router = APIRouter(prefix="/api/users", tags=["users"])


@router.post("/register", status_code=201, response_model=UserOut)
def register(body: RegisterIn, p: PlatformDep) -> UserOut:
    return user_out(p.accounts.register(body.account, body.password, body.name))


@router.post("/login", response_model=LoginOut)
def login(body: LoginIn, response: Response, p: PlatformDep) -> LoginOut:
    token, user = p.accounts.login(body.account, body.password)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(p.accounts.token_seconds),
        httponly=True,
        samesite="strict",
        path="/api",
    )
    return LoginOut(token=token, user=user_out(user))


@router.post("/logout", status_code=204)
def logout(
    request: Request, user: Caller, p: PlatformDep, credentials: Credentials = None
) -> Response:
    token = credentials.credentials if credentials else request.cookies.get(SESSION_COOKIE)
    if token:
        p.accounts.logout(token)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/api")
    return response


@router.get("/me", response_model=UserOut)
def me(user: Caller) -> UserOut:
    return user_out(user)
