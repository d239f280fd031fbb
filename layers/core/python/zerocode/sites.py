"""The sites origin: previews (and, later, published sites), never the API's origin,
so a generated page can not read a user's API credentials."""

from __future__ import annotations

import mimetypes
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Route

from zerocode.platform import Platform


def create_sites_app(platform: Platform) -> Starlette:
    lookup = getattr(platform.apps, "by_preview_key", None)

    async def preview(request: Request) -> Response:
        key = request.path_params["key"]
        app = lookup(key) if lookup is not None else None
        root = platform.site_dir(app) if app is not None else None
        if root is None:
            return PlainTextResponse("no such preview (or nothing generated yet)", 404)
        file = _resolve(root, request.path_params.get("path", ""))
        if file is None:
            return PlainTextResponse("not found", 404)
        media = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        return FileResponse(file, media_type=media, headers={"Cache-Control": "no-store"})

    async def bare(request: Request) -> Response:
        return Response(status_code=307, headers={
            "Location": f"/preview/{request.path_params['key']}/"})

    return Starlette(routes=[Route("/preview/{key}", bare),
                             Route("/preview/{key}/{path:path}", preview)])


def _resolve(root: Path, path: str) -> Path | None:
    """The file under ``root`` for a URL path; directories serve index.html; no escapes."""
    base = root.resolve()
    target = (base / path).resolve() if path else base
    if target != base and base not in target.parents:
        return None
    if target.is_dir():
        target = target / "index.html"
    return target if target.is_file() else None
