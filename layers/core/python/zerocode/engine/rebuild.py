"""Rebuild the preview from the files as they are, outside a turn: the console's Rebuild,
for a preview left older than the files (a turn cut off by a dead server, a failed build).

It holds the app's turn lease, like a turn or a restore, so it never builds beside one (409);
the new preview's checks then run in the background (engine/suite_follow.py).
"""

from __future__ import annotations

from zerocode.apps.records import App
from zerocode.engine.parts import EngineParts, app_lease
from zerocode.engine.suite_follow import follow
from zerocode.publishing.builds import Build, new_build_id


async def rebuild_preview(engine: EngineParts, app: App) -> Build:
    async with app_lease(
        engine, app.id, "a turn is running for this app; its end rebuilds the preview"
    ):
        build = await engine.preview(app, new_build_id())
    follow(engine, app, build)
    return build
