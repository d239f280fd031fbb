"""The HTTP API: one ASGI app, locally under uvicorn and on Lambda under Lambda Web Adapter.
This module builds it (middleware, error handlers, the routers in routes/); routes stay
thin: parse, authorise (deps.py), one service call, map to a schema (schemas.py).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping
from importlib import resources
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from zerocode import __version__
from zerocode.accounts.ratelimit import RateLimited
from zerocode.apps.service import FeaturedApps
from zerocode.bootstrap.platform import Platform
from zerocode.errors import StorageUnavailable, ZerocodeError
from zerocode.http.deps import CSRF_HEADER
from zerocode.http.headers import SecurityHeaders, docs_policy
from zerocode.http.limits import CHAT, FORM_OVERHEAD, UPLOADS, BodyLimit
from zerocode.http.routes import (
    admin,
    analytics,
    apps,
    assets,
    chat,
    checks,
    data,
    deploy,
    edits,
    files,
    health,
    usage,
    users,
    versions,
)
from zerocode.http.schemas import ERRORS
from zerocode.observability import RequestContext
from zerocode.storage_refusal import refusal

log = logging.getLogger(__name__)

DOCS_URL = "/api/docs"
# Swagger UI's files, from the fastapi-offline package (no CDN: the docs work offline).
DOCS_ASSETS = "/api/docs/assets"


def create_app(platform: Platform) -> FastAPI:
    app = FastAPI(
        title="zerocode",
        version=__version__,
        openapi_url="/api/openapi.json",
        docs_url=None,  # _install_docs
        redoc_url=None,
        responses=ERRORS,
    )
    _install_error_handlers(app)
    _install_docs(app, offline=platform.settings.mode == "local")
    # Inside RequestContext (and CORS), so a 413 is logged and readable like any answer.
    s = platform.settings
    app.add_middleware(
        BodyLimit,
        max_bytes=s.max_body_bytes,
        larger=(
            (UPLOADS, s.asset_max_bytes + FORM_OVERHEAD),
            (CHAT, s.max_body_bytes + s.chat_image_rules().body_bytes()),
        ),
    )
    app.add_middleware(SecurityHeaders)
    app.add_middleware(RequestContext)
    if platform.settings.allowed_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=platform.settings.allowed_origins,
            allow_credentials=True,
            allow_methods=["GET", "POST", "PUT", "PATCH", "DELETE"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                CSRF_HEADER,
                "Last-Event-ID",
                "If-Match",
            ],
            expose_headers=["Retry-After", "X-Request-Id", "ETag"],
            max_age=3600,
        )
    app.state.platform = platform
    # One cache per API process (an admin's change clears it here at once).
    app.state.featured = FeaturedApps(platform.apps, platform.settings.featured_cache_seconds)
    routers = (
        users,
        health,
        apps,
        admin,
        chat,
        deploy,
        files,
        edits,
        assets,
        versions,
        checks,
        data,
        usage,
        analytics,
    )
    for module in routers:
        app.include_router(module.router)
    return app


def _install_docs(app: FastAPI, *, offline: bool) -> None:
    """/api/docs as FastAPI makes it: locally with Swagger UI's JS, CSS and icon served from
    here (the docs work offline); on AWS from FastAPI's CDN (API Gateway routes only
    /api/docs). Either way with a CSP that allows exactly that page (http/headers.py)."""
    if offline:
        swagger = resources.files("fastapi_offline") / "static"
        app.mount(DOCS_ASSETS, StaticFiles(directory=str(swagger)), name="docs-assets")

    @app.get(DOCS_URL, include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        # No badge from validator.swagger.io: the page loads nothing but Swagger UI.
        common: dict[str, Any] = {
            "openapi_url": f"{root}{app.openapi_url}",
            "title": f"{app.title} - API docs",
            "swagger_ui_parameters": {"validatorUrl": None},
        }
        page = (
            get_swagger_ui_html(
                **common,
                swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
                swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon.png",
            )
            if offline
            else get_swagger_ui_html(**common)
        )
        page.headers["Content-Security-Policy"] = docs_policy(bytes(page.body).decode())
        return page


def error_response(
    status: int,
    code: str,
    message: str,
    headers: Mapping[str, str] | None = None,
    **extra: object,
) -> JSONResponse:
    """The API's error body; ``extra`` are optional fields beside code and message (a
    lockout, the fields a validation error names), each documented in docs/api.md."""
    body = {"code": code, "message": message, **{k: v for k, v in extra.items() if v}}
    return JSONResponse({"error": body}, status_code=status, headers=headers)


def _field(err: Mapping[str, Any]) -> str:
    return ".".join(str(x) for x in err.get("loc", ()) if x != "body")


def _field_problem(err: Mapping[str, Any]) -> dict[str, object]:
    ctx = err.get("ctx") or {}
    limit = next((ctx[k] for k in _LIMITS if isinstance(ctx.get(k), int | float)), None)
    found: dict[str, object] = {"field": _field(err), "type": str(err.get("type", "invalid"))}
    return found if limit is None else {**found, "limit": limit}


_LIMITS = ("min_length", "max_length", "ge", "gt", "le", "lt")


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ZerocodeError)
    async def domain_error(_: Request, exc: ZerocodeError) -> JSONResponse:
        wait = exc.retry_after if isinstance(exc, RateLimited | StorageUnavailable) else None
        headers = {"Retry-After": str(max(1, math.ceil(wait)))} if wait is not None else None
        lockout = exc.lockout if isinstance(exc, RateLimited) else None
        return error_response(exc.status, exc.code, exc.message, headers, lockout=lockout)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()[:5]
        problems = "; ".join(
            f"{_field(err) or 'body'}: {err.get('msg', 'invalid')}" for err in errors
        )
        # The same, as data a client can word for people: the field, pydantic's kind of
        # problem and its limit (e.g. {"field": "initPrompt", "type": "string_too_short",
        # "limit": 1}).
        fields = [_field_problem(err) for err in errors]
        return error_response(422, "validation_error", problems or "invalid request", fields=fields)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        return error_response(exc.status_code, code, detail, exc.headers)  # keeps 405's Allow

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception) -> JSONResponse:
        refused = refusal(exc)
        if refused is not None:  # the store, not a bug: 503 the client can act on
            log.error(
                "storage refused a write (%s) on %s %s: %s",
                refused.kind,
                request.method,
                request.url.path,
                type(exc).__name__,
            )
            return await domain_error(request, refused.error())
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", "internal error; it has been logged")
