"""The workspace as a new version when a turn ends, or when a dead turn is closed (docs/api.md,
"Versions")."""

from __future__ import annotations

from zerocode.engine.parts import EngineParts, logged
from zerocode.publishing.builds import Build, built_from, snapshot


def record_version(
    e: EngineParts, app_id: str, turn: int, summary: str, build: Build | None = None
) -> None:
    """The workspace as a new version, if it differs from the newest one (best effort: a
    version store that fails is logged, never fails the turn)."""
    if e.versions is None:
        return
    with logged("could not record a version of app=%s", app_id):
        source = snapshot(e.workspace, app_id)
        if not source.files:
            return
        e.versions.record(
            app_id,
            source.files,
            turn=turn,
            summary=summary,
            build_id=built_from(build, source.digest),
        )
