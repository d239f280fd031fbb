"""The HTTP API (DESIGN.md "HTTP API"): one ASGI app, locally under uvicorn and on
Lambda under Lambda Web Adapter. Handlers stay thin: validate, authorise, call the core.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import math
import time
import zipfile
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from zerocode import __version__
from zerocode.accounts.ratelimit import RateLimited
from zerocode.accounts.service import Forbidden, Unauthenticated, User
from zerocode.apps.guards import check_text
from zerocode.apps.records import MAX_PRIORITY, App, CodeGenType, check_name, is_app_id
from zerocode.apps.workspace import clean_path
from zerocode.bootstrap.platform import Platform
from zerocode.engine.events import sse
from zerocode.errors import NotFound, ZerocodeError
from zerocode.memory.display import DisplayEntry
from zerocode.observability import USER_ID, RequestContext
from zerocode.publishing.builds import Build, BuildPurpose, BuildState, is_build_id

log = logging.getLogger(__name__)


class ElementIn(BaseModel):
    """The element picked in the preview; every field is optional but bounded."""

    model_config = ConfigDict(extra="forbid")
    pagePath: str | None = Field(None, max_length=300)  # camelCase: the wire names
    tag: str | None = Field(None, max_length=40)
    selector: str | None = Field(None, max_length=500)
    text: str | None = Field(None, max_length=500)


class ChatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str
    element: ElementIn | None = None


class CreateAppIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    initPrompt: str = Field(min_length=1)
    codeGenType: CodeGenType | None = None

    @field_validator("initPrompt")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("initPrompt is blank")
        return value


class RenameIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


class AppOut(BaseModel):
    id: str
    name: str
    codeGenType: CodeGenType
    initPrompt: str
    previewUrl: str
    deployKey: str | None
    deployUrl: str | None
    deployBuildId: str | None
    deployedAt: float | None
    cover: str | None
    priority: int
    createdAt: float
    updatedAt: float


class BuildOut(BaseModel):
    id: str
    appId: str
    purpose: BuildPurpose
    state: BuildState
    sourceDigest: str
    createdAt: float
    startedAt: float | None
    finishedAt: float | None
    seconds: float | None
    logTail: str
    error: str | None
    published: bool  # the build the app's site serves now


class BuildListOut(BaseModel):
    builds: list[BuildOut]
    nextCursor: str | None


class DeployOut(BaseModel):
    buildId: str
    state: BuildState


class RollbackIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    buildId: str


class AppListOut(BaseModel):
    apps: list[AppOut]
    nextCursor: str | None


class AdminAppOut(AppOut):
    owner: str


class AdminAppListOut(BaseModel):
    apps: list[AdminAppOut]
    nextCursor: str | None


class AdminAppIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    cover: str | None = Field(None, max_length=2000)
    priority: int | None = Field(None, ge=0, le=MAX_PRIORITY)


class AdminUserOut(BaseModel):
    id: str
    account: str
    name: str
    role: str
    createdAt: float
    failedLogins: int


class AdminUserListOut(BaseModel):
    users: list[AdminUserOut]
    nextCursor: str | None


class HistoryEntryOut(BaseModel):
    id: str
    role: str
    content: str
    status: str
    turn: int
    createdAt: float
    element: dict[str, Any] | None


class HistoryOut(BaseModel):
    entries: list[HistoryEntryOut]
    nextCursor: str | None


class ContextOut(BaseModel):
    messages: list[dict[str, Any]]
    tokens: list[int]
    totalTokens: int
    evictedUnits: int
    elidedPayloads: int
    summaryIncluded: bool


class FileOut(BaseModel):
    path: str
    size: int


class FilesOut(BaseModel):
    files: list[FileOut]


class RegisterIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    account: str
    password: str
    name: str | None = None


class LoginIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    account: str
    password: str


class UserOut(BaseModel):
    id: str
    account: str
    name: str
    role: str
    createdAt: float


class LoginOut(BaseModel):
    token: str
    user: UserOut


class HealthOut(BaseModel):
    status: Literal["ok"]
    version: str
    mode: str
    model: str
    builds: str  # how untrusted builds are isolated ("UNSANDBOXED ..." under the override)


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 409, 413, 422, 429, 503)}
SESSION_COOKIE = "zc_session"
# Cookie-authenticated requests that change state must carry this header: a page on
# another site cannot add it without a CORS preflight, which this API grants only to the
# configured console origins (ZEROCODE_CORS_ORIGINS; none locally).
CSRF_HEADER = "X-Zerocode-Request"
bearer = HTTPBearer(auto_error=False, description="token from POST /api/users/login")


REQUEST_CONTEXT = "x-amzn-request-context"


def gateway_claims(headers: Mapping[str, str]) -> Mapping[str, Any] | None:
    """The API Gateway authorizer's claims from the request context Lambda Web Adapter
    forwards (it sets this header on every invocation, replacing any a client sent)."""
    raw = headers.get(REQUEST_CONTEXT)
    if not raw:
        return None
    try:
        context = json.loads(raw)
    except ValueError:
        return None
    authorizer = context.get("authorizer") if isinstance(context, dict) else None
    claims = authorizer.get("claims") if isinstance(authorizer, dict) else None
    return claims if isinstance(claims, dict) and claims else None


def cookie_may_authenticate(headers: Mapping[str, str]) -> bool:
    """The session cookie counts only for requests a browser made from the API's own origin
    (or typed in: ``none``); clients that send no Sec-Fetch-Site are not browsers. Locally
    previews and sites run on ``*.localhost``, which is one site with ``localhost``: should
    a browser ever hold a cookie for a ``localhost`` console, a page of an app still cannot
    use it (docs/security.md, "Origins and the console")."""
    return headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")


async def caller(request: Request,
                 credentials: Annotated[HTTPAuthorizationCredentials | None,
                                        Depends(bearer)] = None) -> User:
    """The signed-in user: from the gateway's verified claims where a gateway vouches for
    them, else from a bearer token or the session cookie."""
    p: Platform = request.app.state.platform
    claims = gateway_claims(request.headers) if p.gateway_claims is not None else None
    if claims is not None and p.gateway_claims is not None:
        user: User | None = p.gateway_claims(claims)
    elif credentials is not None:
        user = p.accounts.authenticate(credentials.credentials)
    else:
        user = p.accounts.authenticate(request.cookies.get(SESSION_COOKIE)) \
            if cookie_may_authenticate(request.headers) else None
        if user is not None and request.method not in ("GET", "HEAD") and \
                CSRF_HEADER.lower() not in request.headers:
            raise Forbidden(f"cookie-authenticated changes need the {CSRF_HEADER} header")
    if user is None:
        raise Unauthenticated("sign in first: POST /api/users/login, then send "
                              "Authorization: Bearer <token>")
    USER_ID.set(user.id)  # async on purpose: the context reaches the endpoint and its logs
    return user


Caller = Annotated[User, Depends(caller)]


async def maybe_caller(request: Request,
                       credentials: Annotated[HTTPAuthorizationCredentials | None,
                                              Depends(bearer)] = None) -> User | None:
    """The signed-in user, or None for anonymous callers of public pages."""
    try:
        return await caller(request, credentials)
    except Unauthenticated:
        return None


async def admin(user: Caller) -> User:
    if not user.is_admin:
        raise Forbidden("this needs an admin account")
    return user


Admin = Annotated[User, Depends(admin)]


def create_app(platform: Platform) -> FastAPI:
    app = FastAPI(title="zerocode", version=__version__, openapi_url="/api/openapi.json",
                  docs_url="/api/docs", redoc_url=None, responses=ERRORS)
    _install_error_handlers(app)
    app.add_middleware(RequestContext)
    if platform.settings.allowed_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=platform.settings.allowed_origins,
            allow_credentials=True, allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=["Authorization", "Content-Type", CSRF_HEADER, "Last-Event-ID"],
            expose_headers=["Retry-After", "X-Request-Id"], max_age=3600)
    app.state.platform = platform
    p = platform

    def app_out(a: App) -> AppOut:
        return AppOut(id=a.id, name=a.name, codeGenType=a.code_gen_type, initPrompt=a.init_prompt,
                      previewUrl=p.publishing.urls.preview(a.preview_key),
                      deployKey=a.deploy_key,
                      deployUrl=p.publishing.urls.site(a.deploy_key) if a.deploy_key else None,
                      deployBuildId=a.deploy_build_id, deployedAt=a.deployed_at, cover=a.cover,
                      priority=a.priority, createdAt=a.created_at, updatedAt=a.updated_at)


    def owned(app_id: str, user: User) -> App:
        """The app if this user may use it: its owner or an admin. Others get 404, so app
        ids of other people are not confirmed."""
        found = p.apps.get(app_id) if is_app_id(app_id) else None
        if found is None or (found.owner != user.id and not user.is_admin):
            raise NotFound(f"app {app_id} not found")
        return found

    def user_out(u: User) -> UserOut:
        return UserOut(id=u.id, account=u.account, name=u.name, role=u.role.value,
                       createdAt=u.created_at)

    @app.post("/api/users/register", status_code=201, response_model=UserOut, tags=["users"])
    def register(body: RegisterIn) -> UserOut:
        return user_out(p.accounts.register(body.account, body.password, body.name))

    @app.post("/api/users/login", response_model=LoginOut, tags=["users"])
    def login(body: LoginIn, response: Response) -> LoginOut:
        token, user = p.accounts.login(body.account, body.password)
        response.set_cookie(SESSION_COOKIE, token, max_age=int(p.accounts.token_seconds),
                            httponly=True, samesite="strict", path="/api")
        return LoginOut(token=token, user=user_out(user))

    @app.post("/api/users/logout", status_code=204, tags=["users"])
    def logout(request: Request, user: Caller,
               credentials: Annotated[HTTPAuthorizationCredentials | None,
                                      Depends(bearer)] = None) -> Response:
        token = credentials.credentials if credentials else request.cookies.get(SESSION_COOKIE)
        if token:
            p.accounts.logout(token)
        response = Response(status_code=204)
        response.delete_cookie(SESSION_COOKIE, path="/api")
        return response

    @app.get("/api/users/me", response_model=UserOut, tags=["users"])
    def me(user: Caller) -> UserOut:
        return user_out(user)

    @app.get("/api/health", response_model=HealthOut, tags=["platform"])
    def health() -> HealthOut:
        return HealthOut(status="ok", version=__version__, mode=p.settings.mode,
                         model=p.model.description, builds=p.build_isolation)

    @app.post("/api/apps", status_code=201, response_model=AppOut, tags=["apps"])
    async def create(body: CreateAppIn, user: Caller) -> AppOut:
        prompt = check_text(body.initPrompt, field="initPrompt",
                            max_chars=p.settings.max_message_chars)
        p.quota("create", user.id)
        created = await p.create_app(user.id, prompt, body.codeGenType)
        return app_out(created)

    featured_cache: dict[tuple[Any, ...], tuple[float, AppListOut]] = {}

    @app.get("/api/apps", response_model=AppListOut, tags=["apps"])
    def list_apps(user: Annotated[User | None, Depends(maybe_caller)],
                  scope: Literal["mine", "featured"] = "mine", cursor: str | None = None,
                  limit: Annotated[int, Query(ge=1, le=50)] = 20,
                  q: Annotated[str | None, Query(max_length=60)] = None) -> AppListOut:
        """My apps (signed in), or the featured apps (anyone; cached for a few minutes)."""
        if scope == "featured":
            key, now = (cursor, limit, q), time.monotonic()
            hit = featured_cache.get(key)
            if hit is not None and hit[0] > now:
                return hit[1]
            page = p.apps.list_featured(cursor, limit, q)
            out = AppListOut(apps=[app_out(a) for a in page.apps], nextCursor=page.next_cursor)
            if len(featured_cache) > 1000:
                featured_cache.clear()
            featured_cache[key] = (now + p.settings.featured_cache_seconds, out)
            return out
        if user is None:
            raise Unauthenticated("sign in to list your apps (scope=featured is public)")
        page = p.apps.list_by_owner(user.id, cursor, limit, q)
        return AppListOut(apps=[app_out(a) for a in page.apps], nextCursor=page.next_cursor)

    def admin_app_out(a: App) -> AdminAppOut:
        return AdminAppOut(**app_out(a).model_dump(), owner=a.owner)

    @app.get("/api/admin/apps", response_model=AdminAppListOut, tags=["admin"])
    def admin_apps(_: Admin, cursor: str | None = None,
                   limit: Annotated[int, Query(ge=1, le=50)] = 20,
                   q: Annotated[str | None, Query(max_length=60)] = None) -> AdminAppListOut:
        page = p.apps.list_all(cursor, limit, q)
        return AdminAppListOut(apps=[admin_app_out(a) for a in page.apps],
                               nextCursor=page.next_cursor)

    @app.patch("/api/admin/apps/{app_id}", response_model=AdminAppOut, tags=["admin"])
    def admin_update(app_id: str, body: AdminAppIn, user: Admin) -> AdminAppOut:
        target = owned(app_id, user)
        changes: dict[str, Any] = {"updated_at": time.time()}
        if body.name is not None:
            changes["name"] = check_name(body.name)
        if body.cover is not None:
            changes["cover"] = body.cover or None
        if body.priority is not None:
            changes["priority"] = body.priority
        updated = replace(target, **changes)
        p.apps.put(updated)
        featured_cache.clear()  # this process shows the change at once; others within minutes
        return admin_app_out(updated)

    @app.delete("/api/admin/apps/{app_id}", status_code=204, tags=["admin"])
    def admin_delete(app_id: str, user: Admin) -> Response:
        p.delete_app(owned(app_id, user))
        featured_cache.clear()
        return Response(status_code=204)

    @app.delete("/api/admin/apps/{app_id}/history", status_code=204, tags=["admin"])
    def admin_clear_history(app_id: str, user: Admin) -> Response:
        """Forget an app's conversation (both histories); its files stay."""
        target = owned(app_id, user)
        p.memory.delete(target.id)
        p.display.delete_app(target.id)
        return Response(status_code=204)

    @app.get("/api/admin/users", response_model=AdminUserListOut, tags=["admin"])
    def admin_users(_: Admin, cursor: str | None = None,
                    limit: Annotated[int, Query(ge=1, le=50)] = 20,
                    q: Annotated[str | None, Query(max_length=64)] = None) -> AdminUserListOut:
        users, next_cursor = p.accounts.list_users(cursor, limit, q)
        return AdminUserListOut(users=[AdminUserOut(
            id=u.id, account=u.account, name=u.name, role=u.role.value, createdAt=u.created_at,
            failedLogins=u.failed_logins) for u in users], nextCursor=next_cursor)

    @app.get("/api/apps/{app_id}", response_model=AppOut, tags=["apps"])
    def get_app(app_id: str, user: Caller) -> AppOut:
        return app_out(owned(app_id, user))

    @app.patch("/api/apps/{app_id}", response_model=AppOut, tags=["apps"])
    def rename(app_id: str, body: RenameIn, user: Caller) -> AppOut:
        renamed = owned(app_id, user).renamed(check_name(body.name))
        p.apps.put(renamed)
        return app_out(renamed)

    @app.delete("/api/apps/{app_id}", status_code=204, tags=["apps"])
    def delete(app_id: str, user: Caller) -> Response:
        p.delete_app(owned(app_id, user))
        return Response(status_code=204)

    async def chat(app_id: str, user: User, message: str,
                   element: dict[str, Any] | None) -> Response:
        target = owned(app_id, user)
        text = check_text(message, field="message", max_chars=p.settings.max_message_chars)
        p.quota("chat", user.id)
        run = p.engine.start(target, text, element)
        return StreamingResponse(_frames(run.events()), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache",
                                          "X-Accel-Buffering": "no"})

    @app.post("/api/apps/{app_id}/chat", tags=["chat"],
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "SSE stream of the turn"}})
    async def chat_post(app_id: str, body: ChatIn, user: Caller) -> Response:
        """Start a turn and stream it. POST only: no GET starts a turn or changes state, so
        a link, an image or a hidden frame on another page can never start one."""
        element = body.element.model_dump(exclude_none=True) if body.element else None
        return await chat(app_id, user, body.message, element or None)

    def build_out(b: Build, a: App) -> BuildOut:
        return BuildOut(id=b.id, appId=b.app_id, purpose=b.purpose, state=b.state,
                        sourceDigest=b.source_digest, createdAt=b.created_at,
                        startedAt=b.started_at, finishedAt=b.finished_at, seconds=b.seconds,
                        logTail=b.log_tail, error=b.error, published=b.id == a.deploy_build_id)

    @app.post("/api/apps/{app_id}/deploy", status_code=202, response_model=DeployOut,
              tags=["deploy"])
    async def deploy(app_id: str, user: Caller) -> DeployOut:
        """Snapshot the source and build it; the site flips to it only if it succeeds."""
        target = owned(app_id, user)
        p.quota("deploy", user.id)
        build = await p.publishing.start_deploy(target)
        return DeployOut(buildId=build.id, state=build.state)

    @app.get("/api/apps/{app_id}/builds", response_model=BuildListOut, tags=["deploy"])
    def builds(app_id: str, user: Caller, cursor: str | None = None,
               limit: Annotated[int, Query(ge=1, le=50)] = 20,
               purpose: BuildPurpose | None = None) -> BuildListOut:
        target = owned(app_id, user)
        page = p.builds.list(target.id, cursor, limit, purpose)
        return BuildListOut(builds=[build_out(b, target) for b in page.builds],
                            nextCursor=page.next_cursor)

    @app.get("/api/apps/{app_id}/builds/{build_id}", response_model=BuildOut, tags=["deploy"])
    def build(app_id: str, build_id: str, user: Caller) -> BuildOut:
        target = owned(app_id, user)
        found = p.builds.get(target.id, build_id) if is_build_id(build_id) else None
        if found is not None and found.runner_id and not found.state.finished:
            found = p.publishing.finish(target.id, found.id)  # polling, should events be late
        if found is None:
            raise NotFound(f"build {build_id} not found")
        return build_out(found, target)

    @app.post("/api/apps/{app_id}/rollback", response_model=AppOut, tags=["deploy"])
    async def rollback(app_id: str, body: RollbackIn, user: Caller) -> AppOut:
        """Serve an earlier successful deploy build again."""
        return app_out(await p.publishing.rollback(owned(app_id, user), body.buildId))

    @app.get("/api/apps/{app_id}/history", response_model=HistoryOut, tags=["chat"])
    def history(app_id: str, user: Caller, before: str | None = None,
                limit: Annotated[int, Query(ge=1, le=50)] = 20) -> HistoryOut:
        page = p.display.page(owned(app_id, user).id, before, limit)
        return HistoryOut(entries=[_entry_out(e) for e in page.entries],
                          nextCursor=page.next_cursor)

    @app.get("/api/apps/{app_id}/context", response_model=ContextOut, tags=["chat"])
    def context(app_id: str, user: Caller) -> ContextOut:
        target = owned(app_id, user)
        window = p.memory.window(target.id, p.system_prompt(target))
        return ContextOut(messages=window.openai(), tokens=list(window.tokens),
                          totalTokens=window.total_tokens, evictedUnits=window.evicted_units,
                          elidedPayloads=window.elided_payloads,
                          summaryIncluded=window.summary_included)

    @app.get("/api/apps/{app_id}/files", response_model=FilesOut, tags=["files"])
    def files(app_id: str, user: Caller) -> FilesOut:
        listing = p.workspace.list(owned(app_id, user).id)
        return FilesOut(files=[FileOut(path=f.path, size=f.size) for f in listing])

    @app.get("/api/apps/{app_id}/files/{path:path}", tags=["files"],
             responses={200: {"content": {"text/plain": {}}}})
    def file(app_id: str, path: str, user: Caller) -> Response:
        data = p.workspace.read(owned(app_id, user).id, clean_path(path))
        return Response(data, media_type="text/plain; charset=utf-8")

    @app.get("/api/apps/{app_id}/download", tags=["files"],
             responses={200: {"content": {"application/zip": {}}}})
    def download(app_id: str, user: Caller) -> Response:
        target = owned(app_id, user)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for info in p.workspace.list(target.id):
                archive.writestr(info.path, p.workspace.read(target.id, info.path))
        safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in target.name)[:40]
        return Response(buffer.getvalue(), media_type="application/zip", headers={
            "Content-Disposition": f'attachment; filename="{safe or target.id}.zip"'})

    return app


KEEPALIVE_SECONDS = 15.0
_END = object()


async def _frames(events: AsyncIterator[Any],
                  keepalive: float = KEEPALIVE_SECONDS) -> AsyncIterator[bytes]:
    """The turn's events as SSE frames, and a comment line whenever nothing was sent for
    ``keepalive`` seconds: API Gateway closes a stream idle for 5 minutes, and a preview
    build on CodeBuild can take longer than that.

    One task drives the turn (so its context variables hold for the whole turn) and hands
    events over a small queue; when the client goes away that task is cancelled, which the
    engine treats as a disconnect and closes the turn."""
    queue: asyncio.Queue[Any] = asyncio.Queue(maxsize=64)

    async def pump() -> None:
        try:
            async for event in events:
                await queue.put(event)
        except Exception as exc:  # surfaced to the consumer, which re-raises it
            await queue.put(exc)
        await queue.put(_END)

    task = asyncio.create_task(pump())
    try:
        while True:
            try:
                async with asyncio.timeout(keepalive):  # a timer, not a task per event
                    item = await queue.get()
            except TimeoutError:
                yield b": keep-alive\n\n"
                continue
            if item is _END:
                return
            if isinstance(item, Exception):
                raise item
            yield sse(item)
    finally:
        task.cancel()


def _entry_out(e: DisplayEntry) -> HistoryEntryOut:
    return HistoryEntryOut(id=e.id, role=e.role.value, content=e.content, status=e.status.value,
                           turn=e.turn, createdAt=e.created_at, element=e.element)


def error_response(status: int, code: str, message: str,
                   headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status,
                        headers=headers)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ZerocodeError)
    async def domain_error(_: Request, exc: ZerocodeError) -> JSONResponse:
        headers = {"Retry-After": str(max(1, math.ceil(exc.retry_after)))} \
            if isinstance(exc, RateLimited) else None
        return error_response(exc.status, exc.code, exc.message, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in err.get('loc', ()) if x != 'body') or 'body'}: "
            f"{err.get('msg', 'invalid')}" for err in exc.errors()[:5])
        return error_response(422, "validation_error", problems or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        detail = exc.detail if isinstance(exc.detail, str) else json.dumps(exc.detail)
        return error_response(exc.status_code, code, detail, exc.headers)  # keeps 405's Allow

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", "internal error; it has been logged")
