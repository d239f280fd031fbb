"""Preview covers: an app that has no deploy cover shows a screenshot of its latest preview.

A deploy's cover is public: its site's screenshot, on the sites host's ``/covers/`` path
(publishing/service.py). A preview is private to the app's owner (and admins) until it is
deployed, and so is a cover taken from it. Preview covers are kept apart from deploy covers
(locally ``{data_dir}/preview-covers/``, on AWS ``preview-covers/`` in the builds bucket:
neither the sites server nor CloudFront reads there), are served only by ``GET
/api/apps/{appId}/cover`` to the owner and admins, and the app record names the preview
build its cover shows (``App.preview_cover``). While the app has a deploy cover none is taken
or recorded: the deploy cover is the app's cover.

Who takes them, and how often (docs/builds.md, "Covers"):

- Locally, the confined Chromium of deploy covers (``adapters/local/chromium_covers.py``)
  loads the preview URL after a preview build succeeded. Cheaply: at most one job per app at
  a time and one browser for all apps' jobs; at most one screenshot per app per
  ``interval`` seconds (``ZEROCODE_PREVIEW_COVER_SECONDS``). An app's first preview gets its
  cover at once; previews that follow sooner are not shot each: the app's job waits until
  the interval has passed and then shoots the newest one, so the last preview of a burst
  always ends up as the cover (in this process: a restart forgets a waiting job, and the
  app's next preview starts one again).
- On AWS the preview build's own browser takes it, on the page it loaded for the runtime
  check anyway (no other browser runs), and the builder keeps it in the private prefix;
  recording it costs one HEAD.

A store keeps at most the app's recorded cover and the one before it (a record written by
someone else at the same moment may name the older one); the rest are pruned.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import Protocol

from zerocode.apps.records import App, AppStore
from zerocode.publishing.builds import Build
from zerocode.publishing.pointers import Publisher, SiteUrls, preview_pointer

log = logging.getLogger(__name__)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_COVER_BYTES = 4 << 20  # a 1200x750 screenshot is far smaller
DEFAULT_INTERVAL = 120.0  # seconds between two screenshots of one app's preview
_TRIED_KEPT = 10_000  # apps whose last attempt is remembered before old ones are forgotten


class PreviewCoverStore(Protocol):
    """PNG screenshots of preview builds, kept privately per app and build. Ids are checked
    (``check_app_id``): a bad one raises ``zerocode.errors.InvalidInput`` (PathRefused)."""

    def put(self, app_id: str, build_id: str, png: bytes) -> None: ...

    def get(self, app_id: str, build_id: str) -> bytes | None:
        """The cover of that build, or None when there is none."""
        ...

    def exists(self, app_id: str, build_id: str) -> bool: ...

    def prune(self, app_id: str, keep: Collection[str]) -> int:
        """Delete the app's covers but those of the builds in ``keep``; how many went."""
        ...

    def delete_app(self, app_id: str) -> int: ...


class Camera(Protocol):
    async def capture(self, url: str) -> bytes:
        """A PNG screenshot of the page at ``url`` in a confined browser; raises when the
        page could not be shot."""
        ...


def is_png(data: bytes) -> bool:
    return data.startswith(PNG_MAGIC) and len(data) <= MAX_COVER_BYTES


@dataclass(kw_only=True)
class PreviewCovers:
    store: PreviewCoverStore
    apps: AppStore
    publisher: Publisher
    urls: SiteUrls
    # Takes screenshots in this process (locally); None where each preview build takes its
    # own (AWS: the builder puts it in the store).
    camera: Camera | None = None
    interval: float = DEFAULT_INTERVAL
    timeout: float = 60.0  # one screenshot, browser start included
    _jobs: dict[str, asyncio.Task[None]] = field(default_factory=dict, init=False)
    _again: set[str] = field(default_factory=set, init=False)  # a newer preview meanwhile
    _tried: dict[str, float] = field(default_factory=dict, init=False)  # monotonic
    _browsers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = field(
        default_factory=weakref.WeakKeyDictionary, init=False
    )

    def get(self, app: App) -> bytes | None:
        """The app's preview cover (None while it has a deploy cover, or none yet)."""
        if app.cover or not app.preview_cover:
            return None
        return self.store.get(app.id, app.preview_cover)

    async def after_preview(self, app: App, build: Build) -> None:
        """A preview build succeeded and the preview shows it: record the cover the build
        took (AWS), or have one taken here. Never raises: a cover is never worth a turn."""
        try:
            if self.camera is None:
                await asyncio.to_thread(self.record, app.id, build.id)
            else:
                self.schedule(app.id)
        except Exception:
            log.exception("preview cover of app %s build %s", app.id, build.id)

    def schedule(self, app_id: str) -> None:
        """Start the app's cover job, or tell the running one that a newer preview is there."""
        running = self._jobs.get(app_id)
        if running is not None and not running.done():
            self._again.add(app_id)
            return
        task = asyncio.get_running_loop().create_task(self._job(app_id))
        self._jobs[app_id] = task
        task.add_done_callback(lambda t: self._ended(app_id, t))

    def _ended(self, app_id: str, task: asyncio.Task[None]) -> None:
        if self._jobs.get(app_id) is task:
            del self._jobs[app_id]
        if not task.cancelled() and task.exception() is not None:
            log.error("preview cover job of app %s failed", app_id, exc_info=task.exception())

    async def settle(self) -> None:
        """Wait for every cover job (tests)."""
        while self._jobs:
            await asyncio.gather(*list(self._jobs.values()), return_exceptions=True)

    async def _job(self, app_id: str) -> None:
        """Covers of the app's preview until it shows nothing newer than its cover: each
        once the previous attempt is ``interval`` old."""
        while True:
            self._again.discard(app_id)
            app = await asyncio.to_thread(self.apps.get, app_id)
            if app is None or app.cover:
                return
            shown = await asyncio.to_thread(self._shown, app)
            if shown is None or shown == app.preview_cover:
                return
            wait = self._tried.get(app_id, -self.interval) + self.interval - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
                continue  # read the app and its preview again: either may have changed
            await self._take(app, shown)
            if app_id not in self._again:
                return

    def _shown(self, app: App) -> str | None:
        """The build the app's preview shows now."""
        if not self.urls.usable(app.preview_key):
            return None
        target = self.publisher.target(preview_pointer(app.preview_key))
        return target.build_id if target is not None and target.app_id == app.id else None

    async def _take(self, app: App, build_id: str) -> None:
        assert self.camera is not None
        self._tried[app.id] = time.monotonic()
        if len(self._tried) > _TRIED_KEPT:
            old = time.monotonic() - self.interval
            self._tried = {k: v for k, v in self._tried.items() if v > old}
        async with self._browser():
            try:
                png = await asyncio.wait_for(
                    self.camera.capture(self.urls.preview(app.preview_key)), self.timeout
                )
            except Exception as exc:  # TimeoutError included: no cover this time
                said = str(exc).strip().split("\n")[0] or type(exc).__name__
                # The preview's URL holds its key, the preview's only secret: not in the log.
                said = said.replace(app.preview_key, "{key}")
                log.warning("preview cover of app %s failed: %s", app.id, said)
                return
        if not is_png(png):
            log.warning("preview cover of app %s: not a PNG of at most 4 MiB", app.id)
            return
        # The preview may have moved on while the browser looked: keep only a screenshot
        # of the build it showed before and after (a newer one has its own turn).
        if await asyncio.to_thread(self._shown, app) != build_id:
            return
        await asyncio.to_thread(self.store.put, app.id, build_id, png)
        await asyncio.to_thread(self.record, app.id, build_id)

    def _browser(self) -> asyncio.Semaphore:
        """One cover browser at a time on this event loop, whatever the number of apps."""
        loop = asyncio.get_running_loop()
        return self._browsers.setdefault(loop, asyncio.Semaphore(1))

    def record(self, app_id: str, build_id: str) -> bool:
        """Make the stored cover of ``build_id`` the app's, unless the app has a deploy cover
        or a newer preview cover, or is gone; prune what is no longer needed. Whether it
        did."""
        if not self.store.exists(app_id, build_id):
            return False
        app = self.apps.get(app_id)
        if app is None:
            self.store.prune(app_id, ())  # deleted while the screenshot was taken
            return False
        current = app.preview_cover
        if app.cover or (current is not None and current >= build_id):
            self.store.prune(app_id, [current] if current else ())
            return False
        self.apps.put(replace(app, preview_cover=build_id))
        self.store.prune(app_id, [build_id, *([current] if current else [])])
        log.info("preview cover recorded", extra={"app_id": app_id, "build_id": build_id})
        return True
