"""A person's edit of one file (by hand in the code editor, or a text changed in place in
the preview): the file written, the model told (M9), the preview rebuilt, a new version
marked as an edit — all without a model turn.

It holds the app's turn lease (409 beside a turn) and is journaled like a restore: before
the file is written the journal records which file and what it held (its sha256). A server
killed in between leaves the record; the next turn, edit or restore looks at the file: if
it no longer holds what it did, the edit landed and the model is told now (with the
version and the display's entry); if it does, nothing happened and nothing is claimed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from zerocode import faults
from zerocode.apps import assets
from zerocode.apps.image_intake import describe
from zerocode.apps.records import App, CodeGenType
from zerocode.apps.versions import Version, VersionKind, file_diff, sha256
from zerocode.apps.workspace import FileMissing, Snapshot
from zerocode.data import model as data_model
from zerocode.engine.closing import close_crashed
from zerocode.engine.data_edit import finish_interrupted_data
from zerocode.engine.journal import PendingStep
from zerocode.engine.parts import EngineParts, app_lease
from zerocode.engine.restore_steps import (
    code_blocks,
    finish_interrupted_restore,
    tell_note,
    versions_of,
)
from zerocode.engine.suite_follow import follow
from zerocode.engine.text_edit import edit_text
from zerocode.errors import InvalidInput, ZerocodeError
from zerocode.publishing import export_rules, toolchain
from zerocode.publishing.builds import Build, built_from, new_build_id, snapshot
from zerocode.publishing.export_rules import FileRefused

log = logging.getLogger(__name__)

MAX_NOTE_DIFF = 4_000  # characters of diff told to a Vue app's model; past it: read the file
BUSY = "a turn is running for this app; save your edit once it has finished"


class FileChanged(ZerocodeError):
    """The file is no longer what the editor loaded (If-Match did not match)."""

    status = 412
    code = "file_changed"


class How(StrEnum):
    HAND = "hand"  # the code editor
    TEXT = "text"  # a text changed in place in the preview
    ASSET = "asset"  # an image uploaded (engine/asset_upload.py)


@dataclass(frozen=True, kw_only=True)
class Edit:
    path: str
    data: bytes
    how: How
    what: str  # for people and the model: 'edited by hand', 'changed "Start" to "Go"'


@dataclass(frozen=True, kw_only=True)
class Edited:
    version: Version  # the current version after the edit
    changed: tuple[str, ...]  # () when the file already held that
    build: Build | None  # the preview build of the edited files


def editable(app: App, path: str, data: bytes | None = None, how: How = How.HAND) -> None:
    """FileRefused for a path the app cannot hold, as the model's tools refuse it: an html /
    multi-file app's answers carry only its page files; a Vue app's build configuration is
    the platform's, and nothing the download leaves out (``export_rules``: .npmrc,
    .vscode/, bunfig.toml...) may be written, so a hand edit cannot plant what a builder's
    own tools would run. ``data`` of a package.json, or of the data model (every kind's
    ``zerocode.data.json``), is checked as the tools check it. The assets folder is the
    uploads' alone (``apps/assets.py``): an upload writes only there, nothing else does."""
    kind = app.code_gen_type
    if how is How.ASSET:
        if not assets.is_asset_file(kind, path):
            raise FileRefused(f"an upload lands in {assets.folder(kind)}, not at {path}")
        return
    refused = assets.write_refusal(kind, path)
    if refused is not None:
        raise FileRefused(f"{refused}; upload an image to replace one")
    if path == data_model.DATA_MODEL:
        refused = data_model.refusal(data) if data is not None else None
        if refused is not None:
            raise FileRefused(refused)
        return
    if app.code_gen_type is not CodeGenType.VUE_PROJECT:
        allowed = sorted(export_rules.STATIC_FILES[app.code_gen_type])
        if path not in allowed:
            raise FileRefused(
                f"this app's files are {', '.join(allowed)}; {path} is not one of them"
            )
        return
    if path in toolchain.PLATFORM_OWNED:
        raise FileRefused(
            f"{path} is the platform's: every build and download uses the platform's own"
        )
    why = export_rules.refusal(app.code_gen_type, path)
    if why is not None:
        raise FileRefused(f"{path} cannot be part of the app: {why}")
    if path == toolchain.PACKAGE_JSON and data is not None:
        refused = toolchain.check_package_json(data)
        if refused is not None:
            raise FileRefused(refused)


async def save(engine: EngineParts, app: App, edit: Edit, *, expect: str | None = None) -> Edited:
    """Write ``edit`` unless the file changed since it was read as ``expect`` (its sha256;
    None: whatever it holds), then tell, rebuild and record."""
    return await _locked(engine, app, lambda: (edit, expect))


async def save_made(engine: EngineParts, app: App, make: Callable[[], Edit]) -> Edited:
    """The edit ``make`` decides once the lease is held (from the files as they are then)."""
    return await _locked(engine, app, lambda: (make(), None))


async def save_text(
    engine: EngineParts, app: App, *, old: str, new: str, tag: str | None, page: str | None
) -> Edited:
    """Change the one place in the source that writes ``old`` (the text of a ``tag``
    element picked on ``page``, a path of the preview) to ``new``; TextNotEditable when
    that place is not clear. Mapped under the lease, from the files as they are."""
    vue = app.code_gen_type is CodeGenType.VUE_PROJECT

    def make() -> tuple[Edit, None]:
        files = snapshot(engine.workspace, app.id).files
        found = edit_text(_page_files(files, page, vue=vue), old, new, tag=tag, vue=vue)
        what = f'changed the text "{_cut(found.old)}" to "{_cut(found.new)}"'
        return Edit(path=found.path, data=found.data, how=How.TEXT, what=what), None

    return await _locked(engine, app, make)


def _page_files(files: Mapping[str, bytes], page: str | None, *, vue: bool) -> dict[str, bytes]:
    """Where a picked text may be written: a Vue app's components; of a static site, the
    page the preview showed (``page``: its URL path) when it is one of the files."""
    if vue:
        return {p: d for p, d in files.items() if p.endswith(".vue")}
    pages = {p: d for p, d in files.items() if p.endswith((".html", ".htm"))}
    wanted = (page or "/").lstrip("/") or "index.html"
    if wanted.endswith("/"):
        wanted += "index.html"
    return {wanted: pages[wanted]} if wanted in pages else pages


def _cut(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


async def _locked(
    engine: EngineParts, app: App, make: Callable[[], tuple[Edit, str | None]]
) -> Edited:
    versions = versions_of(engine)
    async with app_lease(engine, app.id, BUSY):
        await asyncio.to_thread(finish_interrupted_work, engine, app)
        edit, expect = await asyncio.to_thread(make)
        editable(app, edit.path, edit.data, edit.how)  # every edit, whatever chose its file
        done = await asyncio.to_thread(_write, engine, app, edit, expect)
        if done is None:
            latest = await asyncio.to_thread(versions.store.latest, app.id)
            if latest is None:
                raise InvalidInput("the app has no version yet; generate it first")
            return Edited(version=latest, changed=(), build=None)
        turn, source = done
        build = await engine.preview(app, new_build_id())
        version = await asyncio.to_thread(_record, engine, app, source, edit.what, turn, build)
        await asyncio.to_thread(_tell_people, engine, app, edit, version, turn, build)
        await asyncio.to_thread(engine.journal.clear, app.id)
    follow(engine, app, build)  # the checks judge the edited files (issue 38)
    return Edited(version=version, changed=(edit.path,), build=build)


def _write(
    engine: EngineParts, app: App, edit: Edit, expect: str | None
) -> tuple[int, Snapshot] | None:
    """The file written and the note recorded: the note's turn and the files as they now
    are (what the version records; the lease keeps them so), or None when the file already
    held that."""
    crashed = close_crashed(engine, app.id)
    before = _read(engine, app.id, edit.path)
    if expect is not None and sha256(before or b"") != expect:
        raise FileChanged(
            f"{edit.path} changed since you opened it (a turn or another edit wrote it); "
            "reload it and make your change again"
        )
    if before == edit.data:
        return None
    head = engine.memory.head(app.id)
    mark = (edit.path, sha256(before) if before is not None else "")
    engine.journal.write(app.id, PendingStep(turn=head.turn, head=head.seq, calls=(), edit=mark))
    faults.point("before_edit_write")
    try:
        engine.workspace.write(app.id, edit.path, edit.data)
    except Exception:
        engine.journal.clear(app.id)  # nothing was written: nothing to finish or claim
        raise
    faults.point("mid_edit")
    source = snapshot(engine.workspace, app.id)
    turn = _note(engine, app, source, edit.path, edit.what, before, crashed)
    faults.point("after_edit_note")
    return turn, source


def _note(
    engine: EngineParts,
    app: App,
    source: Snapshot,
    path: str,
    what: str,
    before: bytes | None,
    crashed: str | None,
) -> int:
    """Tell the model (M9): which file, what changed, and for apps whose answers carry the
    whole code, the code as it now is."""
    files = source.files
    latest = versions_of(engine).store.latest(app.id)
    number = (latest.number if latest else 0) + 1
    if assets.is_asset(app.code_gen_type, path):
        return engine.memory.record_note(
            app.id, _asset_note(app, path, what, files, number), crashed
        )
    text = (
        f"[zerocode: the user edited {path} outside any turn ({what}); it is now version v{number}."
    )
    if app.code_gen_type is CodeGenType.VUE_PROJECT:
        after = files.get(path, b"")
        diff = file_diff(path, "modified" if before is not None else "added", before or b"", after)
        if diff.binary or len(diff.diff) > MAX_NOTE_DIFF:
            text += f" The change is long: read {path} again before you change it.]"
        else:
            text += f" The change:]\n\n```diff\n{diff.diff.rstrip()}\n```\n\n"
            text += f"[Read {path} again before you change it.]"
    else:
        text += " The files now read:]\n\n" + code_blocks(files)
    return engine.memory.record_note(app.id, text, crashed)


def _asset_note(app: App, path: str, what: str, files: Mapping[str, bytes], number: int) -> str:
    """An upload told to the model: what the image is and how a page refers to it."""
    kind = app.code_gen_type
    where = assets.folder(kind)
    data = files.get(path)
    seen = describe(data) if data is not None else None
    about = (
        f"It is {seen[0]}, {seen[1]}×{seen[2]} px, {len(data or b''):,} bytes; a page shows "
        f"it as {assets.how_to_use(kind, path)}."
        if seen is not None
        else "It is no longer there."
    )
    return (
        f"[zerocode: the user {what} outside any turn; it is now version v{number}. {about} "
        f"The files in {where} are the user's own images: use them where the user asks, "
        "never write or delete them.]"
    )


def _record(
    engine: EngineParts, app: App, source: Snapshot, what: str, turn: int, build: Build | None
) -> Version:
    versions = versions_of(engine)
    version = versions.record(
        app.id,
        source.files,
        turn=turn,
        summary=what,
        kind=VersionKind.EDIT,
        build_id=built_from(build, source.digest),
    )
    latest = version or versions.store.latest(app.id)
    if latest is None:  # recorded a moment ago: only a deleted app has none
        raise InvalidInput("the app's versions are gone (was it deleted?)")
    return latest


def _tell_people(
    engine: EngineParts,
    app: App,
    edit: Edit | None,
    version: Version,
    turn: int,
    build: Build | None,
) -> None:
    """The display's entry: what was edited as which version, and how the preview went."""
    what = edit.what if edit else version.summary
    lines = [f"**{what[:1].upper()}{what[1:]}** — saved as {version.id}."]
    tell_note(engine, app, lines, turn, build, what="edit")


def finish_interrupted_work(engine: EngineParts, app: App) -> None:
    """Finish what a dead server left of a restore or an edit (the caller holds the lease)."""
    finish_interrupted_restore(engine, app)
    finish_interrupted_edit(engine, app)
    finish_interrupted_data(engine, app)


def finish_interrupted_edit(engine: EngineParts, app: App) -> None:
    """An edit a dead server left: told now when the file holds something new and the
    model was not told yet; its version and display entry written when they are missing."""
    pending = engine.journal.read(app.id)
    if pending is None or pending.edit is None or engine.versions is None:
        return
    path, was = pending.edit
    head = engine.memory.head(app.id)
    what = (
        f"uploaded {path} (the server stopped before the upload was confirmed)"
        if assets.is_asset(app.code_gen_type, path)
        else "edited a file (the server stopped before the edit was confirmed)"
    )
    if pending.head == head.seq:  # the note was not written
        now = _read(engine, app.id, path)
        if (sha256(now) if now is not None else "") == was:
            engine.journal.clear(app.id)  # the file was never written: nothing happened
            return
        latest = engine.versions.store.latest(app.id)
        before = engine.versions.files(latest).get(path) if latest else None
        log.warning("finishing the interrupted edit of %s of app=%s", path, app.id)
        source = snapshot(engine.workspace, app.id)
        turn = _note(engine, app, source, path, what, before, None)
    else:
        source, turn = snapshot(engine.workspace, app.id), head.turn
    newest = engine.versions.store.latest(app.id)
    if newest is None or newest.digest != source.digest:
        version = _record(engine, app, source, what, turn, None)
        _tell_people(engine, app, None, version, turn, None)
    engine.journal.clear(app.id)


def _read(engine: EngineParts, app_id: str, path: str) -> bytes | None:
    try:
        return engine.workspace.read(app_id, path)
    except FileMissing:
        return None
