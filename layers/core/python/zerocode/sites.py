"""The local sites origin: previews and published sites, never on the API's origin, so a
generated page cannot read a user's API credentials. Each URL key resolves through its
pointer to one immutable build output, as the CloudFront Function does on AWS."""

from __future__ import annotations

import asyncio
import mimetypes
from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from zerocode.errors import InvalidInput
from zerocode.picker import PICKER, PICKER_PATH, with_picker
from zerocode.platform import Platform
from zerocode.publish import preview_pointer, site_pointer

Endpoint = Callable[[Request], Awaitable[Response]]



def create_sites_app(platform: Platform) -> Starlette:
    def root_of(pointer: str) -> Path | None:
        target = platform.publishing.publisher.target(pointer)
        return platform.site_root(target) if target is not None else None

    def serve(kind: str, to_pointer: Callable[[str], str], cache: str,
              picker: bool = False) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            try:
                pointer = to_pointer(request.path_params["key"])
            except InvalidInput:
                return PlainTextResponse("not found", 404)
            root = await asyncio.to_thread(root_of, pointer)
            if root is None:
                return PlainTextResponse(f"no such {kind} (or nothing built yet)", 404)
            file = _resolve(root, request.path_params.get("path", ""))
            if file is None:
                return PlainTextResponse("not found", 404)
            media = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            if picker and media == "text/html":
                page = await asyncio.to_thread(file.read_bytes)
                return Response(with_picker(page), media_type="text/html; charset=utf-8",
                                headers={"Cache-Control": cache})
            return FileResponse(file, media_type=media, headers={"Cache-Control": cache})

        return endpoint

    def bare(prefix: str) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            return Response(status_code=301, headers={
                "Location": f"/{prefix}/{request.path_params['key']}/"})

        return endpoint

    async def cover(request: Request) -> Response:
        covers = platform.publishing.covers
        file = covers.path(request.path_params["app"], request.path_params["file"]) \
            if covers is not None else None
        if file is None:
            return PlainTextResponse("not found", 404)
        return FileResponse(file, media_type="image/png",
                            headers={"Cache-Control": "public, max-age=86400, immutable"})

    async def picker_script(request: Request) -> Response:
        return Response(PICKER.read_bytes(), media_type="text/javascript",
                        headers={"Cache-Control": "no-cache"})

    preview = serve("preview", preview_pointer, "no-store", picker=True)
    # Build outputs never change, but the pointer does: revalidate the page, not the assets.
    site = serve("site", site_pointer, "no-cache")
    return Starlette(routes=[
        Route("/preview/{key}", bare("preview")),
        Route("/preview/{key}/{path:path}", preview),
        Route("/sites/{key}", bare("sites")),
        Route("/sites/{key}/{path:path}", site),
        Route("/covers/{app}/{file}", cover),
        Route(PICKER_PATH, picker_script)])


def _resolve(root: Path, path: str) -> Path | None:
    """The file under ``root`` for a URL path: directories serve index.html, a path whose last
    segment has no extension is a client-side route (index.html), and nothing escapes."""
    base = root.resolve()
    target = (base / path).resolve() if path else base
    if target != base and base not in target.parents:
        return None
    if target.is_dir():
        target = target / "index.html"
    elif not target.exists() and "." not in path.rsplit("/", 1)[-1]:
        target = base / "index.html"  # SPA fallback, as on CloudFront
    return target if target.is_file() else None
