"""What routes depend on: each the one part it uses (``EngineDep``, ``PublishingDep``, …),
the caller (gateway claims, bearer token or session cookie), an admin, and an app the
caller may use. The platform itself is read only here: a route names what it needs, so
what a route can reach is in its signature.

Async dependencies and routes run on the event loop and must not block it: their store
calls go through ``asyncio.to_thread`` (tests/integration/http/test_event_loop.py);
sync ones FastAPI runs in its thread pool."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from zerocode.accounts.service import AccountService, Forbidden, Unauthenticated, User
from zerocode.accounts.throttle import FrontDoor, FrontDoorLimits
from zerocode.apps.assets import AssetLimits
from zerocode.apps.records import App, AppStore, is_app_id
from zerocode.apps.service import AppService, FeaturedApps
from zerocode.apps.storage_health import StorageHealth
from zerocode.apps.versions import Versions
from zerocode.apps.workspace import Workspace
from zerocode.bootstrap.platform import Platform
from zerocode.engine.chat_images import ChatImageRules
from zerocode.engine.turn import Engine
from zerocode.engine.turns import Turns
from zerocode.errors import NotFound
from zerocode.gateway import REQUEST_CONTEXT, authorization_token, gateway_claims
from zerocode.memory.display import DisplayHistoryStore
from zerocode.observability import USER_ID
from zerocode.publishing.builds import BuildStore
from zerocode.publishing.pointers import SiteUrls
from zerocode.publishing.service import Publishing
from zerocode.publishing.site_visits import SiteVisits

SESSION_COOKIE = "zc_session"
# Cookie-authenticated requests that change state must carry this header: a page on
# another site cannot add it without a CORS preflight, which this API grants only to the
# configured console origins (ZEROCODE_CORS_ORIGINS; none locally).
CSRF_HEADER = "X-Zerocode-Request"
bearer = HTTPBearer(auto_error=False, description="token from POST /api/users/login")


def _platform(request: Request) -> Platform:
    p: Platform = request.app.state.platform
    return p


def featured_apps(request: Request) -> FeaturedApps:
    featured: FeaturedApps = request.app.state.featured
    return featured


def engine(request: Request) -> Engine:
    return _platform(request).engine


def on_lambda(request: Request) -> bool:
    """Whether a turn's stream must last as long as the turn: on AWS the turn runs inside
    the invocation that answers its chat request (docs/engine.md)."""
    return _platform(request).settings.mode == "aws"


def turns(request: Request) -> Turns:
    return _platform(request).turns


def publishing(request: Request) -> Publishing:
    return _platform(request).publishing


def site_urls(request: Request) -> SiteUrls:
    return _platform(request).publishing.urls


def app_service(request: Request) -> AppService:
    return _platform(request).app_service


def app_store(request: Request) -> AppStore:
    return _platform(request).apps


def accounts(request: Request) -> AccountService:
    return _platform(request).accounts


def display(request: Request) -> DisplayHistoryStore:
    return _platform(request).display


def workspace(request: Request) -> Workspace:
    return _platform(request).workspace


def builds(request: Request) -> BuildStore:
    return _platform(request).builds


def site_visits(request: Request) -> SiteVisits:
    """The published sites' visits; NotFound on a platform that counts none."""
    found = _platform(request).visits
    if found is None:
        raise NotFound("visits are not counted on this platform")
    return found


def maybe_versions(request: Request) -> Versions | None:
    """The app versions, or None on a platform that keeps none."""
    return _platform(request).engine.versions


def versions(request: Request) -> Versions:
    found = maybe_versions(request)
    if found is None:
        raise NotFound("versions are not kept on this platform")
    return found


def front_door(request: Request) -> FrontDoor:
    """Sign-in and registration, throttled per account and per address (429 + Retry-After)."""
    p = _platform(request)
    s = p.settings
    limits = FrontDoorLimits(s.rate_login, s.rate_login_address, s.rate_login_window_seconds)
    return FrontDoor(p.accounts, p.rates, limits)


@dataclass(frozen=True)
class Facts:
    """What /api/health tells: the mode, the model, how builds and the browser are isolated."""

    mode: str
    offline_model: bool
    model: str
    builds: str
    browser: str


def facts(request: Request) -> Facts:
    p = _platform(request)
    return Facts(
        mode=p.settings.mode,
        offline_model=bool(getattr(p.model, "offline", False)),
        model=p.model.description,
        builds=p.build_isolation,
        browser=p.browser,
    )


def storage_health(request: Request) -> StorageHealth:
    """Whether storage takes writes now (cached by the probe for a few seconds)."""
    probe = _platform(request).storage
    return probe.check() if probe is not None else StorageHealth()


def chat_image_rules(request: Request) -> ChatImageRules:
    return _platform(request).settings.chat_image_rules()


def asset_limits(request: Request) -> AssetLimits:
    return _platform(request).settings.asset_limits()


def max_message_chars(request: Request) -> int:
    return _platform(request).settings.max_message_chars


@dataclass(frozen=True)
class Quota:
    """The caller's quota per action, charged off the event loop (the limiter is a store)."""

    platform: Platform

    async def charge(self, action: Literal["chat", "create", "deploy"], user_id: str) -> None:
        """Raise RateLimited (429 with Retry-After) past the user's quota for ``action``."""
        await asyncio.to_thread(self.platform.quota, action, user_id)


def quota(request: Request) -> Quota:
    return Quota(_platform(request))


Featured = Annotated[FeaturedApps, Depends(featured_apps)]
StorageHealthDep = Annotated[StorageHealth, Depends(storage_health)]
EngineDep = Annotated[Engine, Depends(engine)]
TurnsDep = Annotated[Turns, Depends(turns)]
PublishingDep = Annotated[Publishing, Depends(publishing)]
UrlsDep = Annotated[SiteUrls, Depends(site_urls)]
AppServiceDep = Annotated[AppService, Depends(app_service)]
AppStoreDep = Annotated[AppStore, Depends(app_store)]
AccountsDep = Annotated[AccountService, Depends(accounts)]
DisplayDep = Annotated[DisplayHistoryStore, Depends(display)]
WorkspaceDep = Annotated[Workspace, Depends(workspace)]
BuildsDep = Annotated[BuildStore, Depends(builds)]
VersionsDep = Annotated[Versions, Depends(versions)]
VisitsDep = Annotated[SiteVisits, Depends(site_visits)]
MaybeVersionsDep = Annotated[Versions | None, Depends(maybe_versions)]
FrontDoorDep = Annotated[FrontDoor, Depends(front_door)]
FactsDep = Annotated[Facts, Depends(facts)]
MaxChars = Annotated[int, Depends(max_message_chars)]
QuotaDep = Annotated[Quota, Depends(quota)]
AssetLimitsDep = Annotated[AssetLimits, Depends(asset_limits)]
ChatImageRulesDep = Annotated[ChatImageRules, Depends(chat_image_rules)]
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
    p = _platform(request)
    claims = gateway_claims(request.headers) if p.gateway_claims is not None else None
    if claims is not None and p.gateway_claims is not None:
        # A Cognito round trip at most once a minute per token: off the event loop.
        user: User | None = await asyncio.to_thread(
            p.gateway_claims, claims, authorization_token(request.headers)
        )
    elif credentials is not None:
        user = await asyncio.to_thread(p.accounts.authenticate, credentials.credentials)
    else:
        user = await _cookie_user(request, p.accounts)
    if user is None:
        raise Unauthenticated(
            "sign in first: POST /api/users/login, then send Authorization: Bearer <token>"
        )
    USER_ID.set(user.id)  # async on purpose: the context reaches the endpoint and its logs
    return user


Caller = Annotated[User, Depends(caller)]


async def _cookie_user(request: Request, accounts: AccountService) -> User | None:
    """The session cookie's user, where it may authenticate at all; a change it would
    authenticate needs the CSRF header."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie or not cookie_may_authenticate(request.headers):
        return None
    user = await asyncio.to_thread(accounts.authenticate, cookie)
    if (
        user is not None
        and request.method not in ("GET", "HEAD")
        and CSRF_HEADER.lower() not in request.headers
    ):
        raise Forbidden(f"cookie-authenticated changes need the {CSRF_HEADER} header")
    return user


async def maybe_caller(request: Request, credentials: Credentials = None) -> User | None:
    """The signed-in user, or None for anonymous callers of public pages."""
    try:
        return await caller(request, credentials)
    except Unauthenticated:
        return None


MaybeCaller = Annotated[User | None, Depends(maybe_caller)]
# For a route whose caller may be anyone (MaybeCaller): its OpenAPI operation says that the
# bearer token is optional, not required (``@router.get(..., openapi_extra=OPTIONAL_AUTH)``).
OPTIONAL_AUTH: dict[str, Any] = {"security": [{}, {"HTTPBearer": []}]}


def client_address(request: Request) -> str | None:
    """The caller's network address, for the front door's per-address limits: behind API
    Gateway (where its request context is believed, as for the caller above) the
    ``identity.sourceIp`` it saw; else the socket peer. Never X-Forwarded-For, which the
    client writes."""
    p = _platform(request)
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


def owned_app(app_id: str, user: Caller, apps: AppStoreDep) -> App:
    """The app if this user may use it: its owner or an admin. Others get 404, so app ids
    of other people are not confirmed."""
    found = apps.get(app_id) if is_app_id(app_id) else None
    if found is None or (found.owner != user.id and not user.is_admin):
        raise NotFound(f"app {app_id} not found")
    return found


OwnedApp = Annotated[App, Depends(owned_app)]
