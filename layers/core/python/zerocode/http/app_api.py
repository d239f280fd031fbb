"""The data API on each app's own origin: ``/_api/`` of a preview or a published site
(issue 39, points 2 and 3; docs/data.md).

The sites server answers ``/_api/`` before it looks for a file, so no file of an app is
ever served there. The Host names the app and the space (a preview's host: the preview
space; a site's: live), and the data model in force is the one of the build that host
serves (``zerocode/data/in_force.py``). What every answer carries, and why:

- **No CORS**: no ``Access-Control-Allow-*`` header, so another origin's script cannot read
  an answer; ``Cache-Control: no-store``, so no cache keeps one.
- **CSRF closed by structure**: a request that changes anything (POST, PATCH, DELETE) needs
  an ``Origin`` equal to the app's own (browsers send it on every such request; a form or
  a page elsewhere cannot forge it) and, with a body, ``Content-Type: application/json``
  (which no form can send). Anything else is 403 ``cross_site`` / 415, before a store is
  asked.
- **The session** is a random token in an HttpOnly cookie with no Domain (it goes back to
  this one host only); its hash is kept under the app and space it was made for.
  ``SameSite=Lax`` on a site; ``SameSite=None; Secure; Partitioned`` on a preview, which the
  console frames from another site (a Lax cookie is never sent from there; a partitioned
  one stays with the console's frame). ``Secure`` is honoured on ``*.localhost`` over http.
- **Rate limits** per visitor address and per site (429 with Retry-After), and the end
  users' sign-in throttles (``zerocode/data/end_users.py``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from zerocode.accounts.ratelimit import RateLimited, RateLimiter, enforce
from zerocode.data.backend import Backend, DataLimits
from zerocode.data.check_spaces import HEADER as CHECK_HEADER
from zerocode.data.end_users import EndUser
from zerocode.data.records import Space
from zerocode.data.service import Asked
from zerocode.errors import InvalidInput, NotFound, PayloadTooLarge, ZerocodeError
from zerocode.publishing.pointers import PREVIEW_PREFIX, SiteTarget, SiteUrls
from zerocode.storage_refusal import refusal

log = logging.getLogger(__name__)

API_DIR = "_api"
API_METHODS = ("GET", "HEAD", "POST", "PATCH", "DELETE", "PUT", "OPTIONS")
CLIENT = Path(__file__).parent.parent / "data" / "static" / "client.js"
SESSION_COOKIE = "zc_session"
MAX_BODY = 64 * 1024  # a record is at most 16 KB as compact JSON; more is never one
NO_STORE = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
CHANGES = ("POST", "PATCH", "DELETE")


class CrossSite(ZerocodeError):
    status = 403
    code = "cross_site"


class NotJson(ZerocodeError):
    status = 415
    code = "unsupported_media_type"


class NoBackend(NotFound):
    code = "no_backend"


# Who is asking: the app's host and the visitor's address, as the process serving the data
# API can tell them (the local sites server: the request itself; on AWS, CloudFront's
# headers, believed only with its secret: zerocode/entrypoints/lambda_data_api.py).
Viewer = Callable[[Request], tuple[str, str | None]]


def direct_viewer(request: Request) -> tuple[str, str | None]:
    return request.headers.get("host", ""), request.client.host if request.client else None


@dataclass(frozen=True)
class DataSite:
    """What the data API needs, and nothing more: the local sites server takes it from the
    platform (``http/sites.py``), the data function on AWS from its own few parts, the AWS
    build from its throwaway store (``buildbox/box_data.py``, where nothing of the
    platform's wiring is installed: this module imports none of it)."""

    limits: DataLimits
    urls: SiteUrls
    backend: Backend | None
    rates: RateLimiter
    target: Callable[[str], SiteTarget | None]  # the build a pointer serves
    viewer: Viewer = direct_viewer


class AppApi:
    """``/_api/...`` of every app's origin, over the platform's backend."""

    def __init__(self, site: DataSite) -> None:
        self.site = site
        self.urls = site.urls
        self.client = CLIENT.read_bytes()

    async def __call__(self, request: Request, path: str) -> Response:
        """``path`` is what follows ``/_api/``."""
        try:
            return await self._answer(request, path)
        except ZerocodeError as exc:
            return _error(exc)
        except Exception as exc:
            refused = refusal(exc)
            if refused is not None:  # the store is full or failing: nothing was written
                return _error(refused.error("keeping the app's data"))
            log.exception("data API: %s /_api/%s failed", request.method, path[:80])
            return _error(ZerocodeError("internal error; it has been logged"))

    async def _answer(self, request: Request, path: str) -> Response:
        host, address = self.site.viewer(request)  # first: it may refuse the request
        if path == "client.js" and request.method in ("GET", "HEAD"):
            return Response(
                self.client,
                media_type="text/javascript",
                headers={"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
            )
        pointer = self.urls.pointer_of_host(host)
        backend = self.site.backend
        if pointer is None or backend is None:
            raise NoBackend("no app is served at this host")
        if request.method in CHANGES:
            self._same_origin(request, host)
        await asyncio.to_thread(self._rate, address, pointer)  # the limiter may be Redis
        target = await asyncio.to_thread(self.site.target, pointer)
        if target is None:
            raise NoBackend("no such preview or site (or nothing built yet)")
        space = _space(request, backend, target, preview=pointer.startswith(PREVIEW_PREFIX))
        call = _Call(self, request, backend, target, space, address)
        return await call.route(path)

    def _same_origin(self, request: Request, host: str) -> None:
        origin = request.headers.get("origin")
        own = f"{self.urls.scheme}://{host.lower()}"
        if origin is None or origin.lower() != own:
            raise CrossSite(
                "a request that changes data must come from the app's own pages "
                f"(its Origin must be {own})"
            )
        if request.method in ("POST", "PATCH"):
            media = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if media != "application/json":
                raise NotJson("send the body as JSON (Content-Type: application/json)")

    def _rate(self, address: str | None, pointer: str) -> None:
        limits, rates = self.site.limits, self.site.rates
        window = limits.window_seconds
        enforce(rates, f"data-site:{pointer}", limits.rate_site, window)
        visitor = f"data-visitor:{pointer}:{address or 'unknown'}"
        enforce(rates, visitor, limits.rate_visitor, window)

    def cookie(self, response: Response, space: Space, token: str, seconds: float) -> None:
        preview = space != "live"
        secure = preview or self.urls.scheme == "https" or _is_localhost(self.urls.domain_host)
        parts = [
            f"{SESSION_COOKIE}={token}",
            "Path=/",
            f"Max-Age={max(0, int(seconds))}",
            "HttpOnly",
            "SameSite=None" if preview else "SameSite=Lax",
        ]
        if secure:
            parts.append("Secure")
        if preview:
            parts.append("Partitioned")
        response.headers.append("Set-Cookie", "; ".join(parts))


class _Call:
    """One request of the data API, for one app's space."""

    def __init__(
        self,
        api: AppApi,
        request: Request,
        backend: Backend,
        target: SiteTarget,
        space: Space,
        address: str | None,
    ) -> None:
        self.api, self.request, self.backend = api, request, backend
        self.app_id, self.build_id, self.space = target.app_id, target.build_id, space
        self.address = address

    async def route(self, path: str) -> Response:
        parts = path.split("/")
        method = self.request.method
        if parts[0] == "auth" and len(parts) == 2:
            return await self.auth(parts[1], method)
        if parts[0] == "data" and len(parts) in (2, 3) and parts[1]:
            return await self.data(parts[1], parts[2] if len(parts) == 3 else None, method)
        raise NotFound(f"no such endpoint: /_api/{path[:80]}")

    async def data(self, collection: str, record_id: str | None, method: str) -> Response:
        model = await asyncio.to_thread(self.backend.models.of, self.app_id, self.build_id)
        if model is None:
            raise NoBackend("this app keeps no data: it has no zerocode.data.json")
        visitor = await self.visitor()
        asked = Asked(self.app_id, self.space, model, collection, visitor.id if visitor else None)
        service = self.backend.data
        if self.space != "live":
            await asyncio.to_thread(service.seed_preview, self.app_id, model, self.space)
        if record_id is None:
            if method in ("GET", "HEAD"):
                params = dict(self.request.query_params)
                return _json(await asyncio.to_thread(service.list, asked, params))
            if method == "POST":
                body = await self.body()
                return _json(await asyncio.to_thread(service.create, asked, body), 201)
            return _not_allowed("GET, POST")
        if method in ("GET", "HEAD"):
            return _json(await asyncio.to_thread(service.get, asked, record_id))
        if method == "PATCH":
            body = await self.body()
            return _json(await asyncio.to_thread(service.update, asked, record_id, body))
        if method == "DELETE":
            await asyncio.to_thread(service.delete, asked, record_id)
            return Response(status_code=204, headers=NO_STORE)
        return _not_allowed("GET, PATCH, DELETE")

    async def auth(self, action: str, method: str) -> Response:
        users = self.backend.end_users
        if action == "me":
            if method not in ("GET", "HEAD"):
                return _not_allowed("GET")
            visitor = await self.visitor()
            return _json({"user": visitor.shown() if visitor else None})
        doing: dict[str, Callable[..., Any]] = {"signup": users.sign_up, "login": users.sign_in}
        if action not in (*doing, "logout"):
            raise NotFound(f"no such endpoint: /_api/auth/{action[:40]}")
        if method != "POST":
            return _not_allowed("POST")
        body = await self.body()
        if action == "logout":
            await asyncio.to_thread(users.sign_out, self.app_id, self.space, self._token())
            response = _json({"user": None})
            self.api.cookie(response, self.space, "", 0)
            return response
        session, user = await asyncio.to_thread(
            doing[action], self.app_id, self.space, body, self.address
        )
        response = _json({"user": user.shown()}, 201 if action == "signup" else 200)
        self.api.cookie(response, self.space, session.token, session.expires_at - time.time())
        return response

    async def visitor(self) -> EndUser | None:
        users = self.backend.end_users
        return await asyncio.to_thread(users.visitor, self.app_id, self.space, self._token())

    def _token(self) -> str | None:
        return self.request.cookies.get(SESSION_COOKIE)

    async def body(self) -> Any:
        """The request's JSON body, at most :data:`MAX_BODY` bytes (413 past it)."""
        chunks, size = [], 0
        async for chunk in self.request.stream():
            size += len(chunk)
            if size > MAX_BODY:
                raise PayloadTooLarge(f"the body is too large: at most {MAX_BODY} bytes")
            chunks.append(chunk)
        raw = b"".join(chunks)
        try:
            return json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, ValueError):
            raise InvalidInput("the body is not JSON") from None


def _space(request: Request, backend: Backend, target: SiteTarget, *, preview: bool) -> Space:
    """The space a request is about: the host's (a preview's, or live), or the scratch space
    of one of the platform's own visits to a preview (data/check_spaces.py)."""
    said = request.headers.get(CHECK_HEADER)
    if said is None:
        return "preview" if preview else "live"
    scratch = backend.check_spaces.space_of(target.app_id, said) if preview else None
    if scratch is None:
        raise CrossSite(f"{CHECK_HEADER} is the platform's own, for its checks of a preview")
    return scratch


def _json(body: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(body, status_code=status, headers=NO_STORE)


def _error(exc: ZerocodeError) -> JSONResponse:
    headers = dict(NO_STORE)
    if isinstance(exc, RateLimited):
        headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after)))
    body = {"error": {"code": exc.code, "message": exc.message}}
    return JSONResponse(body, status_code=exc.status, headers=headers)


def _not_allowed(allow: str) -> JSONResponse:
    body = {"error": {"code": "method_not_allowed", "message": f"use {allow}"}}
    return JSONResponse(body, status_code=405, headers={**NO_STORE, "Allow": allow})


def _is_localhost(host: str | None) -> bool:
    return host is not None and (host == "localhost" or host.endswith(".localhost"))
