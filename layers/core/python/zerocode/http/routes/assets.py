"""The builder's images: upload one into the app, list them, look at one, replace a picked
image by an upload. Each upload is a builder's edit (a version, told to the model, the
preview rebuilt: engine/asset_upload.py); the file is re-encoded before anything is kept."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from zerocode.apps import assets
from zerocode.apps.guards import check_element
from zerocode.apps.image_intake import describe
from zerocode.apps.workspace import FileMissing, clean_path
from zerocode.engine.asset_upload import replace_picked, upload
from zerocode.errors import InvalidInput, NotFound, ZerocodeError
from zerocode.http.deps import (
    AssetLimitsDep,
    Caller,
    EngineDep,
    MaybeVersionsDep,
    OwnedApp,
    PublishingDep,
    QuotaDep,
    WorkspaceDep,
)
from zerocode.http.long_routes import waits
from zerocode.http.routes.chat import check_picked
from zerocode.http.routes.versions import VersionQuery
from zerocode.http.schemas import ElementIn, ErrorOut
from zerocode.http.version_schemas import AssetOut, AssetsOut, UploadOut, upload_out

router = APIRouter(prefix="/api/apps/{app_id}", tags=["files"])
ERROR_415: dict[int | str, dict[str, Any]] = {
    415: {
        "model": ErrorOut,
        "description": "unsupported_image_type: not a PNG, JPEG, WebP, GIF, AVIF or ICO image "
        "(by its content); unsupported_media_type: not a multipart form",
    }
}


class NotMultipart(ZerocodeError):
    status = 415
    code = "unsupported_media_type"


def _form_body(*fields: str) -> dict[str, Any]:
    """The multipart request body as OpenAPI documents it (the route reads it itself, once
    the caller's quota allows: a refused upload is not parsed)."""
    props: dict[str, Any] = {"file": {"type": "string", "format": "binary"}}
    props.update({f: {"type": "string"} for f in fields})
    schema = {"type": "object", "properties": props, "required": ["file", *fields]}
    return {
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": schema}},
        }
    }


@router.get("/assets", response_model=AssetsOut)
def list_assets(app: OwnedApp, workspace: WorkspaceDep, limits: AssetLimitsDep) -> AssetsOut:
    kind = app.code_gen_type
    files = workspace.list(app.id)
    found = []
    for f in files:
        if not assets.is_asset_file(kind, f.path):
            continue
        seen = describe(workspace.read(app.id, f.path))
        if seen is None:
            continue
        found.append(
            AssetOut(
                path=f.path,
                url=assets.url(kind, f.path),
                type=seen[0],
                width=seen[1],
                height=seen[2],
                bytes=f.size,
            )
        )
    return AssetsOut(
        assets=found,
        folder=assets.folder(kind),
        maxBytes=limits.image.max_file_bytes,
        maxSide=limits.image.max_side,
        appBytes=sum(f.size for f in files),
        maxAppBytes=limits.max_app_bytes,
    )


@router.get("/assets/{name}", responses={200: {"content": {"image/png": {}}}})
def asset(
    app_id: str,
    name: str,
    app: OwnedApp,
    workspace: WorkspaceDep,
    versions: MaybeVersionsDep,
    version: VersionQuery = None,
) -> Response:
    """One image as it is kept (or as ``version`` had it, for a version's diff), for the
    console to show: only an image of the assets folder, typed by its content, never
    rendered as a document."""
    path = clean_path(assets.folder(app.code_gen_type) + name)
    missing = f"no image {name} in {assets.folder(app.code_gen_type)}"
    if not assets.is_asset_file(app.code_gen_type, path):
        raise NotFound(missing)
    if version is not None:
        if versions is None:
            raise NotFound("versions are not kept on this platform")
        found = versions.get(app.id, version)
        sha = found.manifest.get(path)
        if sha is None:
            raise NotFound(f"{missing} in version {found.id}")
        data = versions.store.blob(app.id, sha)
    else:
        try:
            data = workspace.read(app.id, path)
        except FileMissing:
            raise NotFound(missing) from None
    seen = describe(data)
    if seen is None:
        raise NotFound(f"{path} is not a readable image")
    return Response(
        data,
        media_type=seen[0],
        headers={
            "Cache-Control": "no-store",
            "Content-Security-Policy": "default-src 'none'; sandbox",
            "Content-Disposition": "inline",
        },
    )


@router.post(
    "/assets",
    response_model=UploadOut,
    status_code=201,
    responses=ERROR_415,
    openapi_extra=waits("build", **_form_body()),
)
async def upload_asset(
    app_id: str,
    request: Request,
    app: OwnedApp,
    user: Caller,
    engine: EngineDep,
    quota: QuotaDep,
    limits: AssetLimitsDep,
) -> UploadOut:
    """An image into the app's assets folder (multipart, field ``file``): its real type
    sniffed (PNG, JPEG, WebP, GIF, AVIF, ICO; SVG refused), metadata stripped, re-encoded,
    bounded; named after the file with its real type's extension (an image of that name is
    replaced). 413 past a limit, 415 for another type, 400 for a damaged file; nothing is
    kept then. A version of kind ``edit``, told to the model, the preview rebuilt."""
    await quota.charge("deploy", user.id)  # an upload builds, like an edit
    name, data, _ = await _read_form(request)
    return upload_out(await upload(engine, app, name, data, limits))


@router.post(
    "/edits/image",
    response_model=UploadOut,
    responses=ERROR_415,
    openapi_extra=waits("build", **_form_body("element")),
)
async def replace_image(
    app_id: str,
    request: Request,
    app: OwnedApp,
    user: Caller,
    engine: EngineDep,
    publishing: PublishingDep,
    quota: QuotaDep,
    limits: AssetLimitsDep,
) -> UploadOut:
    """The image picked in the preview (``element``: the picked element as JSON, with its
    ``src``) replaced by an upload (``file``), without a model turn: the asset it shows is
    re-encoded from the upload into its own name and type, so every page showing it shows
    the new one. 422 ``image_not_an_asset`` when the picked image is not one of the
    builder's uploads; 409 ``preview_out_of_date`` as for a text edit."""
    await quota.charge("deploy", user.id)
    _, data, raw = await _read_form(request, "element")
    element = _element(raw)
    await check_picked(publishing, app, element.buildId)
    if not element.src:
        raise InvalidInput("element.src is required: the picked image's source")
    done = await replace_picked(engine, app, element.src, element.pagePath, data, limits)
    return upload_out(done)


async def _read_form(request: Request, field: str | None = None) -> tuple[str, bytes, str]:
    """(the file's name, its bytes, ``field``'s text) of a multipart body with one file."""
    if not request.headers.get("content-type", "").startswith("multipart/form-data"):
        raise NotMultipart(
            "send the image as multipart/form-data, the file in a field named 'file'"
        )
    try:
        form = await request.form(max_files=1, max_fields=4, max_part_size=8 * 1024)
    except Exception as exc:  # Starlette's parser: a malformed or oversized form
        raise InvalidInput(f"the form could not be read: {getattr(exc, 'detail', exc)}") from None
    try:
        file = form.get("file")
        if not isinstance(file, UploadFile):
            raise InvalidInput("the form has no file in a field named 'file'")
        data = await file.read()
        value = form.get(field) if field else ""
        if not isinstance(value, str):
            raise InvalidInput(f"the form's field '{field}' must be text")
        return file.filename or "", data, value
    finally:
        await form.close()


def _element(raw: str) -> ElementIn:
    try:
        element = ElementIn.model_validate(json.loads(raw))
    except (ValueError, ValidationError) as exc:
        raise InvalidInput(f"element must be the picked element as JSON: {exc}") from None
    check_element(element.model_dump(exclude_none=True))
    return element
