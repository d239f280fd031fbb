"""The workspace as a new version when a turn ends, or when a dead turn is closed (docs/api.md,
"Versions")."""

from __future__ import annotations

from zerocode.engine.parts import EngineParts, logged
from zerocode.publishing.builds import Build, built_from, snapshot


def record_version(
    e: EngineParts, app_id: str, turn: int, summary: str, build: Build | None = None
) -> str | None:
    """The workspace as a new version, if it differs from the newest one; its id, or None
    when none was made (best effort: a version store that fails is logged, never fails the
    turn)."""
    if e.versions is None:
        return None
    with logged("could not record a version of app=%s", app_id):
        source = snapshot(e.workspace, app_id)
        if not source.files:
            return None
        made = e.versions.record(
            app_id,
            source.files,
            turn=turn,
            summary=summary,
            build_id=built_from(build, source.digest),
        )
        return made.id if made is not None else None
    return None
