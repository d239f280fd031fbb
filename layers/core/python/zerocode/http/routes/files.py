"""The app's files: list, read one, download all as a zip."""

from __future__ import annotations

from fastapi import APIRouter, Response

from zerocode.apps.workspace import clean_path
from zerocode.http.deps import AppServiceDep, OwnedApp, WorkspaceDep
from zerocode.http.schemas import FileOut, FilesOut

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
def download(app: OwnedApp, service: AppServiceDep) -> Response:
    name, data = service.archive(app)
    return Response(
        data,
        media_type="application/zip",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
