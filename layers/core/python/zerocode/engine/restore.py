"""Restoring a version: its files back in the workspace, the model told (M9), the preview
rebuilt, and the result a new version.

A restore holds the app's turn lease, so it never runs beside a turn (409). It is journaled
like a step: the record (which version, the transcript head it builds on) is written
before any file, and cleared once the note, the new version and the display's entry are
written. A server killed in between leaves the record, and the next turn or restore
finishes it (writing a version's files is idempotent) before anything else, so the files
and what the model is told never disagree for longer than the dead server's lease.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from zerocode.apps.records import App
from zerocode.apps.versions import Change, Version
from zerocode.engine.parts import EngineParts, app_lease
from zerocode.engine.restore_steps import record_restore, restore_files, tell_restore, versions_of
from zerocode.engine.suite_follow import follow
from zerocode.engine.user_edit import finish_interrupted_work
from zerocode.publishing.builds import Build, new_build_id


@dataclass(frozen=True, kw_only=True)
class Restored:
    version: Version  # the current version after the restore
    changed: tuple[Change, ...]  # nothing when the files already were that version's
    build: Build | None  # the preview build of the restored files


async def restore(engine: EngineParts, app: App, version_id: str) -> Restored:
    versions = versions_of(engine)
    target = await asyncio.to_thread(versions.get, app.id, version_id)
    busy = "a turn is running for this app; restore a version once it has finished"
    async with app_lease(engine, app.id, busy):
        # An edit's record too: the journal holds one record, which this restore replaces.
        await asyncio.to_thread(finish_interrupted_work, engine, app)
        done = await asyncio.to_thread(restore_files, engine, app, target)
        if done is None:
            latest = await asyncio.to_thread(versions.store.latest, app.id)
            return Restored(version=latest or target, changed=(), build=None)
        delta, turn = done
        build = await engine.preview(app, new_build_id())
        version = await asyncio.to_thread(record_restore, engine, app, target, turn, build)
        await asyncio.to_thread(tell_restore, engine, app, target, version, delta, turn, build)
        await asyncio.to_thread(engine.journal.clear, app.id)
    follow(engine, app, build)  # the checks judge the restored files (issue 38)
    return Restored(version=version, changed=tuple(delta), build=build)
