"""The app's files: list, read one, download the project as a zip."""

from __future__ import annotations

from fastapi import APIRouter, Response

from zerocode.apps.workspace import clean_path
from zerocode.http.deps import OwnedApp, WorkspaceDep
from zerocode.http.schemas import FileOut, FilesOut
from zerocode.publishing.builds import snapshot
from zerocode.publishing.download import archive, content_disposition

router = APIRouter(prefix="/api/apps/{app_id}", tags=["files"])


@router.get("/files", response_model=FilesOut)
def files(app: OwnedApp, workspace: WorkspaceDep) -> FilesOut:
    return FilesOut(files=[FileOut(path=f.path, size=f.size) for f in workspace.list(app.id)])


@router.get("/files/{path:path}", responses={200: {"content": {"text/plain": {}}}})
def file(app_id: str, path: str, app: OwnedApp, workspace: WorkspaceDep) -> Response:
    # app_id is OwnedApp's, named here too so the OpenAPI document lists it first
    data = workspace.read(app.id, clean_path(path))
    return Response(data, media_type="text/plain; charset=utf-8")


@router.get("/download", responses={200: {"content": {"application/zip": {}}}})
def download(app: OwnedApp, workspace: WorkspaceDep) -> Response:
    # The project as the platform builds it, with a README (docs/api.md).
    data = archive(app, snapshot(workspace, app.id).files)
    return Response(
        data,
        media_type="application/zip",
        headers={"Content-Disposition": content_disposition(app.name, default=app.id)},
    )
