"""Rebuild the preview from the files as they are, outside a turn: the console's Rebuild,
for a preview left older than the files (a turn cut off by a dead server, a failed build).

It holds the app's turn lease, like a turn or a restore, so it never builds beside one (409).
"""

from __future__ import annotations

import asyncio
import secrets

from zerocode.apps.records import App
from zerocode.engine.parts import EngineParts
from zerocode.errors import Conflict
from zerocode.publishing.builds import Build, new_build_id


async def rebuild_preview(engine: EngineParts, app: App) -> Build:
    holder, key = secrets.token_hex(8), f"turn:{app.id}"
    if not await asyncio.to_thread(engine.lease.acquire, key, holder, engine.limits.lease_seconds):
        raise Conflict("a turn is running for this app; its end rebuilds the preview")
    try:
        return await engine.preview(app, new_build_id())
    finally:
        await asyncio.to_thread(engine.lease.release, key, holder)
