"""Versions: list them, diff them, restore one (files back, model told, preview rebuilt);
the code view's highlighted files."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from zerocode.apps.versions import VERSION_PATTERN, parse_version_id
from zerocode.apps.workspace import clean_path
from zerocode.engine.restore import restore
from zerocode.errors import NotFound
from zerocode.http.deps import (
    Caller,
    EngineDep,
    MaybeVersionsDep,
    OwnedApp,
    QuotaDep,
    VersionsDep,
    WorkspaceDep,
)
from zerocode.http.highlight import code_html, diff_html
from zerocode.http.long_routes import waits
from zerocode.http.schemas import RestoreBuildOut
from zerocode.http.version_schemas import (
    CodeOut,
    DiffOut,
    FileDiffOut,
    RestoreOut,
    VersionListOut,
    version_out,
)

router = APIRouter(prefix="/api/apps/{app_id}", tags=["versions"])
# Documented, and checked by parse_version_id with its own message.
VersionId = Annotated[str, Path(json_schema_extra={"pattern": VERSION_PATTERN})]
VersionQuery = Annotated[str | None, Query(json_schema_extra={"pattern": VERSION_PATTERN})]


@router.get("/versions", response_model=VersionListOut)
def versions(
    app: OwnedApp,
    store: VersionsDep,
    cursor: VersionQuery = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
) -> VersionListOut:
    """Newest first; the newest is the current one."""
    page = store.page(app.id, cursor, limit)
    newest = page.versions[0].number if cursor is None and page.versions else None
    return VersionListOut(
        versions=[version_out(v, current=v.number == newest) for v in page.versions],
        nextCursor=page.next_cursor,
    )


@router.get("/versions/{version_id}/diff", response_model=DiffOut)
def diff(
    app_id: str,
    version_id: VersionId,
    app: OwnedApp,
    store: VersionsDep,
    against: VersionQuery = None,
) -> DiffOut:
    """Per-file unified diffs from ``against`` (default: the version before) to the version."""
    version = store.get(app.id, version_id)
    base = store.get(app.id, against) if against is not None else store.previous(version)
    files = store.diff(version, base)
    return DiffOut(
        version=version.id,
        against=base.id if base else None,
        files=[
            FileDiffOut(
                path=f.path,
                status=f.status,
                diff=f.diff,
                html=diff_html(f.diff),
                binary=f.binary,
            )
            for f in files
        ],
    )


@router.post(
    "/versions/{version_id}/restore", response_model=RestoreOut, openapi_extra=waits("build")
)
async def restore_version(
    app_id: str,
    version_id: VersionId,
    app: OwnedApp,
    user: Caller,
    engine: EngineDep,
    quota: QuotaDep,
) -> RestoreOut:
    """The version's files back in the workspace, recorded in the transcript for the model
    (M9), the preview rebuilt; a new version. 409 while a turn runs."""
    parse_version_id(version_id)
    await quota.charge("deploy", user.id)  # a restore builds, like a deploy
    done = await restore(engine, app, version_id)
    build = done.build
    return RestoreOut(
        version=version_out(done.version, current=True),
        changed=[c.path for c in done.changed],
        build=RestoreBuildOut(id=build.id, state=build.state, error=build.error) if build else None,
    )


@router.get("/code/{path:path}", response_model=CodeOut)
def code(
    app_id: str,
    path: str,
    app: OwnedApp,
    workspace: WorkspaceDep,
    versions: MaybeVersionsDep,
    version: VersionQuery = None,
) -> CodeOut:
    """A file highlighted: as the workspace holds it now, or as a version had it."""
    rel = clean_path(path)
    if version is None:
        data = workspace.read(app.id, rel)
    else:
        if versions is None:
            raise NotFound("versions are not kept on this platform")
        found = versions.get(app.id, version)
        sha = found.manifest.get(rel)
        if sha is None:
            raise NotFound(f"version {found.id} has no file {rel}")
        data = versions.store.blob(app.id, sha)
    language, html = code_html(rel, data)
    return CodeOut(path=rel, version=version, language=language, html=html)
