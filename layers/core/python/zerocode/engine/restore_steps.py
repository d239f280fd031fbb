"""A restore's journaled steps (engine/restore.py runs them under the app's lease): the
files written back, the note that tells the model (M9), the new version and the display's
entry; and finishing a restore a dead server left. Apart from restore() so an edit
(engine/user_edit.py) can finish an interrupted restore, and a restore an interrupted edit,
without the two modules importing each other.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from zerocode import faults
from zerocode.apps.records import App, CodeGenType
from zerocode.apps.versions import Change, Version, VersionKind, Versions, changes
from zerocode.engine import codegen
from zerocode.engine.closing import close_crashed
from zerocode.engine.journal import PendingStep
from zerocode.engine.parts import EngineParts
from zerocode.errors import InvalidInput
from zerocode.memory.display import DisplayRole, DisplayStatus
from zerocode.publishing.builds import Build, BuildState, built_from, snapshot

log = logging.getLogger(__name__)

# The code block language of each file of an html / multi_file app.
_BLOCKS = {path: lang for lang, path in codegen.FILES.items()}


def finish_interrupted_restore(engine: EngineParts, app: App) -> None:
    """Finish a restore a dead server left behind (the caller holds the app's lease): redo
    it when its note is not in the transcript yet, else record what may be missing after
    the note (the version, the display's entry)."""
    pending = engine.journal.read(app.id)
    if pending is None or pending.restore is None or engine.versions is None:
        return
    versions = engine.versions
    head = engine.memory.head(app.id)
    target = versions.store.get(app.id, pending.restore)
    if target is None:
        engine.journal.clear(app.id)
        return
    if pending.head != head.seq:  # the note was written (the server died after it)
        before = versions.store.list(app.id, None, 2)
        newest = before[0] if before else None
        made = newest is None or not (
            newest.kind is VersionKind.RESTORE and newest.digest == target.digest
        )
        prior = newest if made else (before[1] if len(before) > 1 else None)
        delta = changes(versions.files(prior) if prior else {}, versions.files(target))
        version = record_restore(engine, app, target, head.turn, None)
        tell_restore(engine, app, target, version, delta, head.turn, None)
    else:
        log.warning("redoing the restore of v%s of app=%s", pending.restore, app.id)
        done = restore_files(engine, app, target, redo=True)
        if done is not None:
            delta, turn = done
            version = record_restore(engine, app, target, turn, None)
            tell_restore(engine, app, target, version, delta, turn, None)
    engine.journal.clear(app.id)


def restore_files(
    engine: EngineParts, app: App, target: Version, *, redo: bool = False
) -> tuple[list[Change], int] | None:
    """Files back, then the note: the changes and the note's turn, or None when nothing
    differs. The caller records the new version, with its preview build."""
    versions = versions_of(engine)
    crashed = close_crashed(engine, app.id) if not redo else None
    actual = snapshot(engine.workspace, app.id).files
    wanted = versions.files(target)
    latest = versions.store.latest(app.id)
    # What the restore changes, as people and the model knew the files: the workspace now,
    # or on a redo (some files already written back) the newest version, the files as they
    # were before the restore began.
    delta = changes(versions.files(latest) if redo and latest else actual, wanted)
    if not delta:
        engine.journal.clear(app.id)
        return None
    head = engine.memory.head(app.id)
    if not redo:
        engine.journal.write(
            app.id, PendingStep(turn=head.turn, head=head.seq, calls=(), restore=target.number)
        )
    for change in changes(actual, wanted):
        if change.status == "deleted":
            engine.workspace.delete(app.id, change.path)
        else:
            engine.workspace.write(app.id, change.path, wanted[change.path])
        faults.point("mid_restore")
    number = (latest.number if latest else 0) + 1
    text = restore_note(app, target, number, delta, wanted)
    turn = engine.memory.record_note(app.id, text, crashed)
    faults.point("after_restore_note")
    return delta, turn


def record_restore(
    engine: EngineParts, app: App, target: Version, turn: int, build: Build | None
) -> Version:
    """The restored files as a new version, with the preview build made from them."""
    versions = versions_of(engine)
    version = versions.record(
        app.id,
        versions.files(target),
        turn=turn,
        summary=f"restored {target.id}",
        kind=VersionKind.RESTORE,
        restored_from=target.number,
        build_id=built_from(build, target.digest),
    )
    # None: the newest version already has these files (recorded before a crash)
    return version or versions.store.latest(app.id) or target


def restore_note(
    app: App, target: Version, number: int, delta: list[Change], files: Mapping[str, bytes]
) -> str:
    """What the model is told (M9): which version, which files changed, and for apps whose
    answers carry the whole code, the code as it now is."""
    listed = ", ".join(f"{c.path} ({c.status})" for c in delta)
    note = (
        f"[zerocode: the user restored version {target.id} (the files as turn {target.turn} "
        f"left them); it is now version v{number}. Files changed by the restore: {listed}. "
        f"What was written or read of these files after turn {target.turn} no longer "
        "describes them."
    )
    if app.code_gen_type is CodeGenType.VUE_PROJECT:
        return note + " Read a file again before you change it.]"
    return note + " The files now read:]\n\n" + code_blocks(files)


def code_blocks(files: Mapping[str, bytes]) -> str:
    """An html / multi-file app's files as the code blocks its answers carry."""
    return "\n\n".join(
        f"```{lang}\n{files[path].decode('utf-8', 'replace').rstrip()}\n```"
        for path, lang in _BLOCKS.items()
        if path in files
    )


def tell_restore(
    engine: EngineParts,
    app: App,
    target: Version,
    version: Version,
    delta: list[Change],
    turn: int,
    build: Build | None,
) -> None:
    """The display's entry: what was restored, what changed, and how the preview went."""
    lines = [f"**Restored {target.id}** as {version.id}."]
    lines += [f"- {c.path}: {c.status}" for c in delta]
    tell_note(engine, app, lines, turn, build, what="restore")


def tell_note(
    engine: EngineParts, app: App, lines: list[str], turn: int, build: Build | None, *, what: str
) -> None:
    """A note in the display for work done outside a turn (a restore, an edit): ``lines``
    and how its preview build went (None: the server stopped before it)."""
    status = DisplayStatus.OK
    if build is None:
        lines.append(
            "The server stopped before the preview was rebuilt: the preview shows the files "
            f"from before the {what} until the next build."
        )
    elif build.state is BuildState.SUCCEEDED:
        lines.append(f"✓ preview built in {build.seconds or 0:.1f} s")
    else:
        lines.append(f"✗ preview build failed: {build.error or 'the build failed'}")
        status = DisplayStatus.FAILED
    try:
        engine.display.append(app.id, DisplayRole.NOTE, "\n".join(lines), status=status, turn=turn)
    except Exception as exc:  # the transcript has it; the display is best effort here
        log.error("could not record the %s of app=%s in the display: %s", what, app.id, exc)


def versions_of(engine: EngineParts) -> Versions:
    if engine.versions is None:
        raise InvalidInput("versions are not kept on this platform")
    return engine.versions
