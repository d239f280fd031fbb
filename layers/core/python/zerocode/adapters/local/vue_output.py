"""A Vue build's output between the box and its place (issue 44): its page's ``<base>`` and
what the page lacks (publishing/site_head.py), then, for a site, its routes prerendered
(publishing/prerender.py, in the checking browser) and listed in its sitemap.

The head comes first, so every prerendered page carries it; compression (encodings.py) comes
after, in the builder, so the prerendered pages are compressed too. All of it runs before the
output's atomic rename: a site is never seen half prerendered.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from zerocode.publishing.builds import SiteMeta
from zerocode.publishing.prerender import Prerenderer, place, with_base
from zerocode.publishing.site_head import complete, relist


async def finish(
    tmp: Path, site: SiteMeta, prerender: Prerenderer | None, owner: str, app_id: str
) -> tuple[list[str], list[str]]:
    """Finish the unplaced output at ``tmp``: what was added to the page and the files (the
    build's ``head``), and the build log's lines on the prerender."""

    def head() -> list[str]:
        added = complete(tmp, site)
        based = with_base(tmp, own_origin=site.own_origin)  # first in the head: before links
        return added + (["base"] if based else [])

    added = await asyncio.to_thread(head)
    if site.preview or prerender is None or not (tmp / "index.html").is_file():
        return added, []
    started = time.monotonic()
    done = await prerender.render(tmp, owner, app_id)
    routes = await asyncio.to_thread(place, tmp, done.pages)
    if routes and "sitemap.xml" in added:
        await asyncio.to_thread(relist, tmp, site)
    took = time.monotonic() - started
    shown = ", ".join(routes[:10]) + (", …" if len(routes) > 10 else "")
    line = f"prerendered {len(routes)} route(s) in {took:.2f} s" + (f": {shown}" if routes else "")
    return added, [line + (f" ({done.note})" if done.note else "")]
