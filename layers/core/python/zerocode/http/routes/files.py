"""The app's files: list, read one, save one by hand, download the project as a zip."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Response

from zerocode.apps.versions import sha256
from zerocode.apps.workspace import clean_path
from zerocode.engine.user_edit import Edit, How, editable, save
from zerocode.http.deps import Caller, EngineDep, OwnedApp, QuotaDep, WorkspaceDep
from zerocode.http.long_routes import waits
from zerocode.http.version_schemas import (
    ERROR_412,
    EditOut,
    FileEditIn,
    FileOut,
    FilesOut,
    edit_out,
)
from zerocode.publishing.builds import snapshot
from zerocode.publishing.download import archive, content_disposition

router = APIRouter(prefix="/api/apps/{app_id}", tags=["files"])


@router.get("/files", response_model=FilesOut)
def files(app: OwnedApp, workspace: WorkspaceDep) -> FilesOut:
    return FilesOut(files=[FileOut(path=f.path, size=f.size) for f in workspace.list(app.id)])


@router.get("/files/{path:path}", responses={200: {"content": {"text/plain": {}}}})
def file(app_id: str, path: str, app: OwnedApp, workspace: WorkspaceDep) -> Response:
    """The file as it is; its ETag (the content's sha256) is what a save's If-Match names."""
    # app_id is OwnedApp's, named here too so the OpenAPI document lists it first
    data = workspace.read(app.id, clean_path(path))
    return Response(
        data,
        media_type="text/plain; charset=utf-8",
        headers={"ETag": f'"{sha256(data)}"', "Cache-Control": "no-store"},
    )


@router.put(
    "/files/{path:path}",
    response_model=EditOut,
    responses=ERROR_412,
    openapi_extra=waits("build"),
)
async def save_file(
    app_id: str,
    path: str,
    body: FileEditIn,
    app: OwnedApp,
    user: Caller,
    engine: EngineDep,
    quota: QuotaDep,
    if_match: Annotated[str | None, Header(max_length=80)] = None,
) -> EditOut:
    """A hand edit: the file saved, told to the model (M9), the preview rebuilt, a version
    of kind ``edit``. 409 while a turn runs; 412 ``file_changed`` when ``If-Match`` names
    other content than the file holds (someone wrote it since it was read)."""
    rel = clean_path(path)
    data = body.content.encode("utf-8")
    editable(app, rel, data)  # refused before it is charged: 400 file_refused, with why
    await quota.charge("deploy", user.id)  # an edit builds, like a deploy
    edit = Edit(path=rel, data=data, how=How.HAND, what="edited by hand")
    return edit_out(await save(engine, app, edit, expect=_etag(if_match)))


def _etag(value: str | None) -> str | None:
    """The sha256 an ``If-Match`` names (a strong ETag as GET gave it); None for ``*``/none."""
    if value is None or value.strip() == "*":
        return None
    return value.strip().removeprefix("W/").strip('"')


@router.get("/download", responses={200: {"content": {"application/zip": {}}}})
def download(app: OwnedApp, workspace: WorkspaceDep) -> Response:
    # The project as the platform builds it, with a README (docs/api.md).
    data = archive(app, snapshot(workspace, app.id).files)
    return Response(
        data,
        media_type="application/zip",
        headers={"Content-Disposition": content_disposition(app.name, default=app.id)},
    )
