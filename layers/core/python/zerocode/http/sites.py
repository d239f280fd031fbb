"""The local sites server: previews and published sites, each on its own origin.

A request for ``{label}.localhost:{sites_port}`` is served from the build its label points
to (``p-{previewKey}``: a preview, with the element picker; ``{deployKey}``: a site), as the
CloudFront Function does on AWS. Browsers resolve ``*.localhost`` to loopback; other clients
connect to 127.0.0.1 and send the Host header. No app shares an origin with another, and
none shares a *site* with the API and console, which are served on 127.0.0.1 (``localhost``
and ``*.localhost`` are one site to cookies: docs/security.md, "Origins and the console").

The bare host (``127.0.0.1:{sites_port}``, or any host that names no app) serves only cover
images and nothing generated: the old path URLs, ``/sites/{key}/`` and ``/preview/{key}/``,
answer 404 there, because that host is the API's site.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote_to_bytes

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import Scope

from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.errors import InvalidInput
from zerocode.http.app_api import API_DIR, API_METHODS, AppApi, DataSite
from zerocode.http.visit_hook import note_visit
from zerocode.publishing import encodings
from zerocode.publishing.media_types import media_type
from zerocode.publishing.picker import PICKER_PATH, picker_script, with_picker
from zerocode.publishing.pointers import PREVIEW_PREFIX, SiteUrls, preview_pointer, site_pointer
from zerocode.publishing.prerender import SHELL

# The longest request path (percent-escapes included) the sites server looks up.
MAX_PATH_BYTES = 2048
# Build outputs never change, but pointers do: revalidate pages, never keep previews.
_LOOPBACK_NAMES = ("localhost", "0.0.0.0", "::", "::1", "")


def console_origin(settings: Settings) -> str:
    """The origin of the console ``zerocode serve`` serves: 127.0.0.1, never ``localhost``,
    which is the same site as every app's origin."""
    host = "127.0.0.1" if settings.host.lower() in _LOOPBACK_NAMES else settings.host
    return f"http://{host}:{settings.port}"


def console_origins(settings: Settings) -> list[str]:
    """Every console the preview picker obeys: the local one and the CORS-allowed ones."""
    return list(dict.fromkeys([console_origin(settings), *settings.allowed_origins]))


def create_sites_app(platform: Platform) -> Starlette:
    """One route for every GET and HEAD: the Host names the app, the path its file."""
    sites = _Sites(platform)
    return Starlette(
        routes=[
            Route("/_api/{path:path}", sites.data_api, methods=[*API_METHODS]),
            Route("/{path:path}", sites.dispatch, methods=["GET", "HEAD"]),
        ]
    )


def data_site_of(platform: Platform) -> DataSite:
    """The data API's parts from the platform, its publisher as it is at each request."""
    publishing = platform.publishing
    return DataSite(
        platform.settings.data_limits(),
        publishing.urls,
        platform.backend,
        platform.rates,
        lambda pointer: publishing.publisher.target(pointer),
    )


class _Sites:
    """The sites server's handlers, over the platform's publisher, covers and site URLs."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.urls: SiteUrls = platform.publishing.urls
        self.picker = picker_script(console_origins(platform.settings))
        self.api = AppApi(data_site_of(platform))

    async def data_api(self, request: Request) -> Response:
        """``/_api/``: the app's data and its users (http/app_api.py), never a file."""
        refusal = bad_path(request.scope)
        if refusal is not None:
            return refusal
        return await self.api(request, request.path_params.get("path", ""))

    async def dispatch(self, request: Request) -> Response:
        """A path no file can have is refused first; then the picker, an app, the bare host."""
        refusal = bad_path(request.scope)
        if refusal is not None:
            return refusal
        path = request.path_params.get("path", "")
        if "/" + path == PICKER_PATH:
            return Response(
                self.picker, media_type="text/javascript", headers={"Cache-Control": "no-cache"}
            )
        pointer = self.urls.pointer_of_host(request.headers.get("host", ""))
        if pointer is not None:
            served = await self.serve(pointer, path, request)
            note_visit(self.platform.visits, pointer, path, request, served)  # issue 44
            return served
        return await self.bare_host(path, request)

    async def bare_host(self, path: str, request: Request | None = None) -> Response:
        """A host that names no app: cover images, and the path scheme when no domain is
        configured; nothing generated otherwise (that host is the API's site)."""
        if path.startswith("covers/"):
            return await self.cover(path)
        if not self.urls.per_app_origins:
            return await self.shared_paths(path, request)
        if path.startswith(("sites/", "preview/")):
            return PlainTextResponse(
                f"not found: previews and sites now have their own origins, "
                f"http://{{key}}.{self.urls.domain}/ (the app's previewUrl and deployUrl)",
                404,
            )
        return PlainTextResponse("not found", 404)

    def root_of(self, pointer: str) -> Path | None:
        target = self.platform.publishing.publisher.target(pointer)
        return self.platform.site_root(target) if target is not None else None

    async def serve(self, pointer: str, path: str, request: Request | None = None) -> Response:
        """A file of the build ``pointer`` names; a preview's pages get the element picker. A
        text file goes as its brotli or gzip copy where the request accepts one (made when
        the build was placed: publishing/encodings.py); a hashed asset of a site is cached a
        year, anything else revalidated (304 when its ETag still matches)."""
        preview = pointer.startswith(PREVIEW_PREFIX)
        root = await asyncio.to_thread(self.root_of, pointer)
        if root is None:
            kind = "preview" if preview else "site"
            return PlainTextResponse(f"no such {kind} (or nothing built yet)", 404)
        accept = request.headers.get("accept-encoding", "") if request is not None else ""
        found = await asyncio.to_thread(_locate, root, path, accept)  # the file system's part
        if found is None:
            return PlainTextResponse("not found", 404)
        file = found.file
        cache = encodings.site_cache(found.rel, preview=preview)
        # The console frames previews sandboxed, so their pages have an opaque origin and
        # fetch even their own module scripts with CORS; the files are public (or unlisted
        # by key) and never sent with credentials, so any origin may read them.
        headers = {
            "Cache-Control": cache,
            "X-Content-Type-Options": "nosniff",
            "Access-Control-Allow-Origin": "*",
        }
        if preview:
            headers["X-Robots-Tag"] = "noindex"  # a preview is no page for a search engine
        media = media_type(file.name)
        if encodings.compressible(file.name):
            headers["Vary"] = "Accept-Encoding"
        if preview and media == "text/html":
            zipped = "gzip" in encodings.accepted(accept)
            page, encoding = await asyncio.to_thread(_preview_page, file, zipped=zipped)
            if encoding is not None:
                headers["Content-Encoding"] = encoding
            return Response(page, media_type="text/html; charset=utf-8", headers=headers)
        if found.encoding is not None:
            headers["Content-Encoding"] = found.encoding
        sent = FileResponse(found.sent, media_type=media, headers=headers, stat_result=found.stat)
        if request is not None and _unchanged(request, sent):
            return Response(status_code=304, headers={**headers, "ETag": sent.headers["etag"]})
        return sent

    async def shared_paths(self, path: str, request: Request | None = None) -> Response:
        """The path scheme (every app under one origin), when no domain is configured."""
        kind, _, rest = path.partition("/")
        key, slash, inner = rest.partition("/")
        to_pointer = {"sites": site_pointer, "preview": preview_pointer}.get(kind)
        if to_pointer is None or not key:
            return PlainTextResponse("not found", 404)
        try:
            pointer = to_pointer(key)
        except InvalidInput:
            return PlainTextResponse("not found", 404)
        if not slash:  # "/sites/key" -> "/sites/key/": relative assets resolve inside it
            return Response(status_code=301, headers={"Location": f"/{kind}/{key}/"})
        return await self.serve(pointer, inner, request)

    async def cover(self, path: str) -> Response:
        covers = self.platform.publishing.covers
        parts = path.split("/")
        file = covers.path(parts[1], parts[2]) if covers is not None and len(parts) == 3 else None
        if file is None:
            return PlainTextResponse("not found", 404)
        return FileResponse(
            file,
            media_type="image/png",
            headers={"Cache-Control": "public, max-age=86400, immutable"},
        )


@dataclass(frozen=True)
class _Found:
    """A site's file for a request: its path in the build, and what is sent for it (the file,
    or the compressed copy the request accepts) with that one's stat."""

    file: Path
    rel: str
    sent: Path
    encoding: str | None
    stat: os.stat_result


def _locate(root: Path, path: str, accept: str) -> _Found | None:
    file = _resolve(root, path)
    if file is None:
        return None
    base = root.resolve()
    copy = encodings.encoded(base, file, accept)
    sent, encoding = copy if copy is not None else (file, None)
    return _Found(file, file.relative_to(base).as_posix(), sent, encoding, sent.stat())


def _preview_page(file: Path, *, zipped: bool) -> tuple[bytes, str | None]:
    """A preview's page with the picker in it (made per request), gzipped where accepted."""
    page = with_picker(file.read_bytes())
    if zipped and len(page) >= encodings.MIN_BYTES:
        return gzip.compress(page, 6, mtime=0), "gzip"
    return page, None


def _unchanged(request: Request, sent: Response) -> bool:
    """Whether the request's ``If-None-Match`` names the ETag of what would be sent."""
    asked = request.headers.get("if-none-match")
    if not asked or request.method not in ("GET", "HEAD"):
        return False
    tags = {t.strip().removeprefix("W/") for t in asked.split(",")}
    return "*" in tags or sent.headers.get("etag") in tags


def bad_path(scope: Scope) -> Response | None:
    """400 for a path no file can have (a NUL or another control character, bytes that are
    not UTF-8) and 414 for one longer than any file's, before it reaches the file system;
    None for a path worth looking up."""
    raw = scope.get("raw_path") or scope["path"].encode("utf-8", "surrogateescape")
    if len(raw) > MAX_PATH_BYTES:
        return PlainTextResponse("the path is too long", 414)
    try:
        text = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return PlainTextResponse("bad path: not UTF-8", 400)
    if any(unicodedata.category(c) == "Cc" for c in text):
        return PlainTextResponse("bad path: control characters", 400)
    return None


def _resolve(root: Path, path: str) -> Path | None:
    """The file under ``root`` for a URL path: directories serve index.html, a path whose last
    segment has no extension is a client-side route (index.html), and nothing escapes. A
    path the file system refuses (a name too long) is not found."""
    try:
        return _lookup(root, path)
    except (OSError, ValueError):
        return None


def _lookup(root: Path, path: str) -> Path | None:
    base = root.resolve()
    target = (base / path).resolve() if path else base
    if target != base and base not in target.parents:
        return None
    if target.relative_to(base).parts[:1] in ((API_DIR,), (encodings.ENCODED_DIR,)):
        return None  # /_api/ is the platform's on every app's origin, however it is spelled;
        # .encoded/ holds the compressed copies, sent only in place of their originals
    if target.is_dir():
        target = target / "index.html"
    elif not target.exists() and "." not in path.rsplit("/", 1)[-1]:
        # A client-side route: its prerendered page was the directory's; any other gets the
        # app's page as built (publishing/prerender.py), as on CloudFront.
        shell = base / SHELL
        target = shell if shell.is_file() else base / "index.html"
    return target if target.is_file() else None
