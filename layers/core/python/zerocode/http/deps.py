"""What routes depend on: the platform, the caller (gateway claims, bearer token or session
cookie), an admin, and an app the caller may use."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from zerocode.accounts.service import Forbidden, Unauthenticated, User
from zerocode.apps.records import App, is_app_id
from zerocode.apps.service import FeaturedApps
from zerocode.bootstrap.platform import Platform
from zerocode.errors import NotFound
from zerocode.gateway import REQUEST_CONTEXT, authorization_token, gateway_claims
from zerocode.observability import USER_ID

SESSION_COOKIE = "zc_session"
# Cookie-authenticated requests that change state must carry this header: a page on
# another site cannot add it without a CORS preflight, which this API grants only to the
# configured console origins (ZEROCODE_CORS_ORIGINS; none locally).
CSRF_HEADER = "X-Zerocode-Request"
bearer = HTTPBearer(auto_error=False, description="token from POST /api/users/login")


def platform(request: Request) -> Platform:
    p: Platform = request.app.state.platform
    return p


def featured_apps(request: Request) -> FeaturedApps:
    featured: FeaturedApps = request.app.state.featured
    return featured


PlatformDep = Annotated[Platform, Depends(platform)]
Featured = Annotated[FeaturedApps, Depends(featured_apps)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def cookie_may_authenticate(headers: Mapping[str, str]) -> bool:
    """The session cookie counts only for requests a browser made from the API's own origin
    (or typed in: ``none``); clients that send no Sec-Fetch-Site are not browsers. Locally
    previews and sites run on ``*.localhost``, which is one site with ``localhost``: should
    a browser ever hold a cookie for a ``localhost`` console, a page of an app still cannot
    use it (docs/security.md, "Origins and the console")."""
    return headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")


async def caller(request: Request, credentials: Credentials = None) -> User:
    """The signed-in user: from the gateway's verified claims where a gateway vouches for
    them (only under Lambda Web Adapter: ``gateway.py``), and only while the token they
    came with still stands; else from a bearer token or the session cookie."""
    p: Platform = request.app.state.platform
    claims = gateway_claims(request.headers) if p.gateway_claims is not None else None
    if claims is not None and p.gateway_claims is not None:
        # A Cognito round trip at most once a minute per token: off the event loop.
        user: User | None = await asyncio.to_thread(
            p.gateway_claims, claims, authorization_token(request.headers)
        )
    elif credentials is not None:
        user = p.accounts.authenticate(credentials.credentials)
    else:
        user = (
            p.accounts.authenticate(request.cookies.get(SESSION_COOKIE))
            if cookie_may_authenticate(request.headers)
            else None
        )
        if (
            user is not None
            and request.method not in ("GET", "HEAD")
            and CSRF_HEADER.lower() not in request.headers
        ):
            raise Forbidden(f"cookie-authenticated changes need the {CSRF_HEADER} header")
    if user is None:
        raise Unauthenticated(
            "sign in first: POST /api/users/login, then send Authorization: Bearer <token>"
        )
    USER_ID.set(user.id)  # async on purpose: the context reaches the endpoint and its logs
    return user


Caller = Annotated[User, Depends(caller)]


async def maybe_caller(request: Request, credentials: Credentials = None) -> User | None:
    """The signed-in user, or None for anonymous callers of public pages."""
    try:
        return await caller(request, credentials)
    except Unauthenticated:
        return None


MaybeCaller = Annotated[User | None, Depends(maybe_caller)]


def client_address(request: Request) -> str | None:
    """The caller's network address, for the front door's per-address limits: behind API
    Gateway (where its request context is believed, as for the caller above) the
    ``identity.sourceIp`` it saw; else the socket peer. Never X-Forwarded-For, which the
    client writes."""
    p: Platform = request.app.state.platform
    if p.gateway_claims is not None:
        source = gateway_source_ip(request.headers.get(REQUEST_CONTEXT))
        if source is not None:
            return source
    return request.client.host if request.client else None


def gateway_source_ip(raw: str | None) -> str | None:
    """``identity.sourceIp`` of a REST API request context (``http.sourceIp`` of an HTTP
    API's), or None when it has none."""
    try:
        context = json.loads(raw) if raw else None
    except ValueError:
        return None
    if not isinstance(context, dict):
        return None
    for part in ("identity", "http"):
        section = context.get(part)
        source = section.get("sourceIp") if isinstance(section, dict) else None
        if isinstance(source, str) and 0 < len(source) <= 64:
            return source
    return None


async def admin(user: Caller) -> User:
    if not user.is_admin:
        raise Forbidden("this needs an admin account")
    return user


Admin = Annotated[User, Depends(admin)]


def owned_app(app_id: str, user: Caller, p: PlatformDep) -> App:
    """The app if this user may use it: its owner or an admin. Others get 404, so app ids
    of other people are not confirmed."""
    found = p.apps.get(app_id) if is_app_id(app_id) else None
    if found is None or (found.owner != user.id and not user.is_admin):
        raise NotFound(f"app {app_id} not found")
    return found


OwnedApp = Annotated[App, Depends(owned_app)]
