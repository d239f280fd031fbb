"""The bodies of an app's files and versions: the file list, versions, diffs and the code
view, a restore, and a person's edit (by hand or a text changed in place). Apart from
http/schemas.py, by domain."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zerocode.apps.versions import Version, VersionKind, version_id
from zerocode.apps.workspace import DEFAULT_LIMITS
from zerocode.engine.asset_upload import Uploaded
from zerocode.engine.text_edit import MAX_NEW_TEXT
from zerocode.engine.user_edit import Edited
from zerocode.http.schemas import LINE_PATTERN, ErrorOut, RestoreBuildOut, TextElementIn

# A file's characters: at most its bytes (the workspace's limit, checked when written).
MAX_FILE_CHARS = DEFAULT_LIMITS.max_file_bytes


class FileOut(BaseModel):
    path: str
    size: int


class FilesOut(BaseModel):
    files: list[FileOut]


class VersionOut(BaseModel):
    id: str
    number: int
    turn: int
    createdAt: float
    summary: str
    kind: VersionKind
    restoredFrom: str | None
    files: int
    buildId: str | None
    current: bool  # the newest version: what the workspace holds between turns


class VersionListOut(BaseModel):
    versions: list[VersionOut]
    nextCursor: str | None


class FileDiffOut(BaseModel):
    path: str
    status: Literal["added", "modified", "deleted"]
    diff: str  # unified diff; empty for a binary file
    html: str  # the diff highlighted (Pygments, CSS class "hl")
    binary: bool


class DiffOut(BaseModel):
    version: str
    against: str | None
    files: list[FileDiffOut]


class RestoreOut(BaseModel):
    version: VersionOut  # the current version after the restore
    changed: list[str]  # paths the restore changed; empty when they already were that version
    build: RestoreBuildOut | None  # the preview build of the restored files


class FileEditIn(BaseModel):
    """A file's whole new content, as the code editor holds it."""

    model_config = ConfigDict(extra="forbid")
    content: str = Field(max_length=MAX_FILE_CHARS)


class TextEditIn(BaseModel):
    """A text element picked in the preview and the text it should show instead."""

    model_config = ConfigDict(extra="forbid")
    element: TextElementIn
    # The URL path of the preview page it was picked on (a static site's page file).
    page: str | None = Field(None, max_length=300)
    newText: str = Field(
        json_schema_extra={"minLength": 1, "maxLength": MAX_NEW_TEXT, "pattern": LINE_PATTERN}
    )


class EditOut(BaseModel):
    version: VersionOut  # the current version after the edit
    changed: list[str]  # the path edited; empty when it already held that
    build: RestoreBuildOut | None  # the preview build of the edited files


ERROR_412: dict[int | str, dict[str, Any]] = {
    412: {"model": ErrorOut, "description": "file_changed: If-Match names other content"}
}


def edit_out(done: Edited) -> EditOut:
    build = done.build
    return EditOut(
        version=version_out(done.version, current=True),
        changed=list(done.changed),
        build=RestoreBuildOut(id=build.id, state=build.state, error=build.error) if build else None,
    )


class CodeOut(BaseModel):
    path: str
    version: str | None  # None: the workspace as it is now
    language: str
    html: str  # the file highlighted (Pygments, CSS class "hl")


def version_out(v: Version, *, current: bool) -> VersionOut:
    return VersionOut(
        id=v.id,
        number=v.number,
        turn=v.turn,
        createdAt=v.created_at,
        summary=v.summary,
        kind=v.kind,
        restoredFrom=version_id(v.restored_from) if v.restored_from else None,
        files=len(v.manifest),
        buildId=v.build_id,
        current=current,
    )


class AssetOut(BaseModel):
    """One of the builder's images: where it is and how a page refers to it."""

    path: str  # in the app's files: public/assets/logo.png (Vue), assets/logo.png
    url: str  # how a page refers to it: assets/logo.png (relative)
    type: str  # its media type, from its content
    width: int
    height: int
    bytes: int


class AssetsOut(BaseModel):
    assets: list[AssetOut]
    folder: str  # where uploads land
    maxBytes: int  # a file's limit
    maxSide: int  # a side's limit in pixels
    appBytes: int  # what the app's files hold now
    maxAppBytes: int  # the app's limit


class UploadOut(EditOut):
    """An upload, saved as a version (``changed`` empty when the app held that image)."""

    asset: AssetOut
    replaced: bool  # an image of that name was there before


def upload_out(done: Uploaded) -> UploadOut:
    a = done.asset
    asset = AssetOut(
        path=a.path, url=a.url, type=a.media_type, width=a.width, height=a.height, bytes=a.bytes
    )
    return UploadOut(**edit_out(done.edited).model_dump(), asset=asset, replaced=done.replaced)
