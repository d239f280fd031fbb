"""Cover images: a screenshot of the published site in headless Chromium.

Optional by design: without Playwright's Python package or a Chromium executable there is
simply no cover, and a failed screenshot never fails the deploy that asked for it (the
caller logs it). Covers are files next to the builds, one per published build:
``covers/{appId}/{buildId}.png``, served by the sites server. A preview's cover is taken by
the same browser (:meth:`ChromiumCovers.capture`) and kept elsewhere, privately
(zerocode.publishing.preview_covers): never under this root, which the sites server serves.

The page is untrusted: it is loaded in a browser confined to the app's own origin
(:mod:`.chromium`, shared with the runtime check): every other request is aborted, WebSockets
never connect, service workers are blocked, no other host name resolves and WebRTC is gone.
A page that reaches elsewhere still gets a cover: one that shows nothing from elsewhere.
docs/security.md, "Origins and the console".
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
from pathlib import Path

from zerocode.adapters.local.browser_pool import BrowserPool, kept_browser
from zerocode.adapters.local.chromium import (
    CHROMIUM_ARGS,
    NO_SANDBOX,
    NO_WEBRTC,
    VIEWPORT,
    confined,
    find_chromium,
    launch,
    launch_args,
    origin_of,
    usable,
)
from zerocode.adapters.local.private import private_dir
from zerocode.apps.records import App
from zerocode.apps.workspace import PathRefused, check_app_id

__all__ = [  # the browser's helpers were here first; covers' tests still import them here
    "CHROMIUM_ARGS",
    "NO_SANDBOX",
    "NO_WEBRTC",
    "VIEWPORT",
    "ChromiumCovers",
    "chromium_covers",
    "confined",
    "find_chromium",
    "launch",
    "launch_args",
    "origin_of",
]

log = logging.getLogger(__name__)
SHOT_MS = 5_000  # the screenshot itself (a page that spins never gives one)
_KEY = re.compile(r"[a-z0-9]{20,}")  # a preview key (the preview's only secret), in a URL


def _public(url: str) -> str:
    """A URL for the log, keys taken out."""
    return _KEY.sub("{key}", url)


class ChromiumCovers:
    def __init__(
        self,
        root: Path,
        sites_url: str,
        executable: str,
        timeout_ms: float = 15_000,
        browsers: BrowserPool | None = None,
    ) -> None:
        self.root, self.sites_url, self.executable = root, sites_url.rstrip("/"), executable
        self.timeout_ms = timeout_ms
        self.browsers = browsers or kept_browser(executable)  # shared with the runtime check

    async def __call__(self, app: App) -> str | None:
        if not app.deploy_url or not app.deploy_build_id:
            return None
        target = self.root / check_app_id(app.id) / f"{check_app_id(app.deploy_build_id)}.png"
        private_dir(target.parent)
        await self.screenshot(app.deploy_url, target)
        return f"{self.sites_url}/covers/{app.id}/{app.deploy_build_id}.png"

    async def screenshot(self, url: str, target: Path) -> list[str]:
        """Save a screenshot of ``url`` to ``target``; what the page tried to reach elsewhere
        (aborted)."""
        return (await self._shoot(url, target))[1]

    async def capture(self, url: str) -> bytes:
        """A screenshot of ``url`` as PNG bytes: a preview's cover, which the caller keeps
        privately (zerocode.publishing.preview_covers), never under this root."""
        return (await self._shoot(url, None))[0]

    async def _shoot(self, url: str, target: Path | None) -> tuple[bytes, list[str]]:
        """The screenshot, in a context taken in turn with the checks (the platform's own
        share) and held at most PAGE_SECONDS: a page that spins holds it no longer."""
        from zerocode.adapters.local.chromium_check import PAGE_SECONDS, QUIET_MS, SETTLE_MS
        from zerocode.adapters.local.page_traffic import Traffic

        blocked: list[str] = []
        async with self.browsers.page(url, blocked) as page, asyncio.timeout(PAGE_SECONDS):
            traffic = Traffic(page)
            await page.goto(url, wait_until="load", timeout=self.timeout_ms)
            await traffic.settled(QUIET_MS, SETTLE_MS)
            png = await page.screenshot(
                path=str(target) if target is not None else None, type="png", timeout=SHOT_MS
            )
        if blocked:
            log.info("cover of %s: %d request(s) elsewhere aborted", _public(url), len(blocked))
        return png, blocked

    def path(self, app_id: str, file: str) -> Path | None:
        """A cover file, for the sites server (None for anything that is not one)."""
        if not file.endswith(".png"):
            return None
        try:
            found = self.root / check_app_id(app_id) / f"{check_app_id(file[:-4])}.png"
        except PathRefused:
            return None
        return found if found.is_file() else None

    def delete_app(self, app_id: str) -> int:
        target = self.root / check_app_id(app_id)
        if not target.exists():
            return 0
        shutil.rmtree(target)
        return 1


def chromium_covers(root: Path, sites_url: str, executable: str | None) -> ChromiumCovers | None:
    """Covers if Playwright, a Chromium and the browser's box are there, else None (no covers:
    never an unconfined browser; :func:`.chromium.availability` says why)."""
    if not usable():
        return None
    found = find_chromium(executable)
    return ChromiumCovers(root, sites_url, found) if found else None
