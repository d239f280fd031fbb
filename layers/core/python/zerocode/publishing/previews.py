"""Previews: a chat turn's (or an edit's, a restore's) build of the app's files, shown at
the app's preview pointer when it succeeds; and the builds themselves, run and recorded
(``Previews._run``, which deploys use too). :class:`zerocode.publishing.service.Publishing`
adds deploys and rollbacks on top; apart from it so each is one reader's size.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, replace

from zerocode.apps.records import App, AppStore, CodeGenType, new_preview_key
from zerocode.apps.workspace import Snapshot, Workspace
from zerocode.data.in_force import BuildModels, keep_model
from zerocode.publishing.builds import (
    Build,
    Builder,
    BuildPurpose,
    BuildState,
    BuildStore,
    PreviewRetention,
    SiteMeta,
    built_at,
    job_of,
    new_build_id,
    snapshot,
)
from zerocode.publishing.eviction import DAY, RESTORE_MARGIN_DAYS
from zerocode.publishing.pointers import Publisher, SiteTarget, SiteUrls, preview_pointer
from zerocode.publishing.preview_covers import PreviewCovers, PreviewCoverStore
from zerocode.storage_refusal import Refusal, refusal

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreviewState:
    build_id: str | None  # the build the preview shows (None before the first success)
    up_to_date: bool  # it was built from the files as they are now


@dataclass(kw_only=True)
class Previews:
    apps: AppStore
    builds: BuildStore
    builder: Builder
    publisher: Publisher
    workspace: Workspace
    urls: SiteUrls  # where visitors find previews and sites (publish.py)
    # Private covers of previews, for apps with no deploy cover (preview_covers.py).
    preview_covers: PreviewCovers | None = None
    # Preview pointers of builds older than this may have been removed by the preview sweep
    # (AWS: zerocode.publishing.eviction); None: never removed (locally).
    preview_idle_seconds: float | None = None
    # A preview build's output expires this long after it was written (AWS: the builds
    # bucket's lifecycle rule); None: never.
    preview_output_seconds: float | None = None
    # Each build's data model, kept as it starts (the data API obeys the one in force:
    # zerocode/data/in_force.py); None: the app's data is not served in this mode yet.
    models: BuildModels | None = None

    @property
    def preview_cover_store(self) -> PreviewCoverStore | None:
        """Where the apps' preview covers are kept (emptied of an app's when it is deleted)."""
        return self.preview_covers.store if self.preview_covers is not None else None

    def preview_cover(self, app: App) -> bytes | None:
        """The app's private preview cover (PNG), while it has no deploy cover; or None."""
        return self.preview_covers.get(app) if self.preview_covers is not None else None

    async def preview(self, app: App, build_id: str | None = None) -> Build:
        """Build what the workspace holds now and, if it built, show it in the preview."""
        done = await self.build_preview(app, build_id or new_build_id())
        if done.state is BuildState.SUCCEEDED:
            await self.show_preview(app, done)
        return done

    async def build_preview(self, app: App, build_id: str, source: Snapshot | None = None) -> Build:
        """Build ``source`` (by default what the workspace holds now) as a preview build,
        recorded, not yet shown (engine/build_ahead.py starts one before it is known to be
        wanted)."""
        if source is None:
            source = await asyncio.to_thread(snapshot, self.workspace, app.id)
        build = Build(
            id=build_id,
            app_id=app.id,
            purpose=BuildPurpose.PREVIEW,
            kind=app.code_gen_type,
            source_digest=source.digest,
        )
        return await self._run(build, source)

    def prepare_preview(self, app: App) -> None:
        """A Vue app's next build may start in a box prepared now, in the background (the
        local builder's ``prepare``; docs/builds.md); nothing for other apps or builders."""
        prepare = getattr(self.builder, "prepare", None)
        if app.code_gen_type is CodeGenType.VUE_PROJECT and callable(prepare):
            prepare(app.id)

    async def show_preview(self, app: App, build: Build) -> None:
        """Point the app's preview at ``build`` (which succeeded), keep its output, take
        its cover."""
        key = await asyncio.to_thread(self._preview_key, app)
        pointer = preview_pointer(key)
        before = await asyncio.to_thread(self._shown_preview, pointer, app.id)
        await asyncio.to_thread(self.publisher.point, pointer, SiteTarget(app.id, build.id))
        await asyncio.to_thread(self._retain_preview, app.id, build.id, before)
        if self.preview_covers is not None:
            await self.preview_covers.after_preview(app, build)

    async def supersede_preview(self, app: App, build_id: str) -> Build | None:
        """Record a preview build that will never be shown as superseded, whatever it came
        to (stopped while running, built, failed); never one the preview shows."""

        def mark() -> Build | None:
            found = self.builds.get(app.id, build_id)
            if found is None or found.state is BuildState.SUPERSEDED:
                return found
            superseded = found.superseded()
            self.builds.put(superseded)
            return superseded

        return await asyncio.to_thread(mark)

    def _shown_preview(self, pointer: str, app_id: str) -> str | None:
        """The build the preview shows now, where outputs expire unless shown."""
        if not isinstance(self.builder, PreviewRetention):
            return None
        shown = self.publisher.target(pointer)
        return shown.build_id if shown is not None and shown.app_id == app_id else None

    def shown_preview_build(self, app: App) -> str | None:
        """The build the app's preview shows now (None: nothing, or not this app's)."""
        shown = self.publisher.target(preview_pointer(app.preview_key))
        return shown.build_id if shown is not None and shown.app_id == app.id else None

    def _retain_preview(self, app_id: str, shown: str, replaced: str | None) -> None:
        """Keep the shown preview's output, let the one it replaced expire (AWS). A failure
        is logged, never the turn's: at worst an old output stays, or the shown one expires
        after previewOutputDays unchanged (docs/operations.md, "Preview outputs expire")."""
        if not isinstance(self.builder, PreviewRetention):
            return
        try:
            self.builder.retain_preview(app_id, shown, replaced)
        except Exception:
            log.exception("retagging the preview outputs of app %s failed", app_id)

    def preview_state(self, app: App) -> PreviewState:
        """Whether the preview shows the app's files as they are now: the newest successful
        preview build (the one the preview pointer names) was built from them. An element
        picked in an older preview may name what the files no longer hold."""
        shown = self._newest_preview(app.id)
        source = snapshot(self.workspace, app.id)
        if shown is None:
            return PreviewState(build_id=None, up_to_date=not source.files)
        return PreviewState(build_id=shown.id, up_to_date=shown.source_digest == source.digest)

    def _newest_preview(self, app_id: str) -> Build | None:
        """The app's newest successful preview build: the one its preview pointer names."""
        page = self.builds.list(app_id, limit=20, purpose=BuildPurpose.PREVIEW)
        return next((b for b in page.builds if b.state is BuildState.SUCCEEDED), None)

    def restore_preview(self, app: App, now: float | None = None) -> bool:
        """Put back the preview pointer the preview sweep removed, naming the app's newest
        successful preview build (immutable, still in place). Asks the pointer store only
        when that build is old enough to have been swept; whether it wrote the pointer.
        A build whose output expires within ``RESTORE_MARGIN_DAYS`` is never named again:
        the pointer stays away until the next turn builds a new preview."""
        if self.preview_idle_seconds is None or not self.urls.usable(app.preview_key):
            return False  # never swept; or a key the next turn renews anyway
        newest = self._newest_preview(app.id)
        made = built_at(newest.id) if newest is not None else None
        current = time.time() if now is None else now
        if newest is None or made is None or current - made <= self.preview_idle_seconds:
            return False
        if self.preview_output_seconds is not None and (
            current - made > self.preview_output_seconds - RESTORE_MARGIN_DAYS * DAY
        ):
            return False  # expired, or soon: a pointer would outlive what it names
        pointer = preview_pointer(app.preview_key)
        if self.publisher.target(pointer) is not None:
            return False
        self.publisher.point(pointer, SiteTarget(app.id, newest.id))
        log.info("preview pointer restored", extra={"app_id": app.id, "build_id": newest.id})
        return True

    def _preview_key(self, app: App) -> str:
        """The app's preview key, replaced first if it cannot be a host label (apps made
        before previews had their own origins)."""
        if self.urls.usable(app.preview_key):
            return app.preview_key
        current = self.apps.get(app.id) or app
        if self.urls.usable(current.preview_key):
            return current.preview_key
        self.publisher.remove(preview_pointer(current.preview_key))
        renewed = replace(current, preview_key=new_preview_key())
        self.apps.put(renewed)
        return renewed.preview_key

    def site_meta(self, app: App, build: Build, key: str | None = None) -> SiteMeta:
        """What the build's page is given where it lacks it: the app's name and request,
        and where the page will be (a site's URL, or the preview's; ``key``: the site's key
        a first deploy will publish under)."""
        if build.purpose is BuildPurpose.PREVIEW:
            url = self.urls.preview(app.preview_key)
        else:
            key = key or app.deploy_key
            url = self.urls.site(key) if key else ""
        cover = app.cover if app.cover and app.cover.startswith(("https://", "http://")) else ""
        preview = build.purpose is BuildPurpose.PREVIEW
        return SiteMeta(
            app.name,
            app.init_prompt,
            url=url,
            image=cover,
            preview=preview,
            own_origin=self.urls.per_app_origins,
        )

    async def _run(
        self, build: Build, source: Snapshot, *, hold: bool = False, key: str | None = None
    ) -> Build:
        """Build it, recording its state; with ``hold``, a build that succeeded is recorded
        with its output but still running, and the caller records its end (after publishing:
        the sites server reads the output from the record)."""
        build = build.running()
        await asyncio.to_thread(keep_model, self.models, build.app_id, build.id, source.files)
        await asyncio.to_thread(self.builds.put, build)
        app = await asyncio.to_thread(self.apps.get, build.app_id)
        owner = app.owner if app is not None else ""  # build slots are shared per user
        site = self.site_meta(app, build, key) if app is not None else None
        try:
            outcome = await self.builder.build(job_of(build, source, owner, site))
        except Exception as exc:  # the builder's own failure is a failed build, not a crash
            refused = refusal(exc)
            if refused is not None:  # nor the app's: no repair can help (503, error event)
                await self._record_refused(build, refused)
                raise refused.error("building the preview") from exc
            log.exception("build %s of app %s crashed", build.id, build.app_id)
            outcome_build = build.failed(f"the builder failed: {exc}")
        else:
            outcome_build = build.ended(outcome)
        held = hold and outcome_build.state is BuildState.SUCCEEDED
        recorded = replace(outcome_build, state=BuildState.RUNNING) if held else outcome_build
        await asyncio.to_thread(self.builds.put, recorded)
        return outcome_build

    async def _record_refused(self, build: Build, refused: Refusal) -> None:
        """A build whose output storage refused: recorded failed, saying so, if it can be."""
        log.error("build %s of app %s: storage refused (%s)", build.id, build.app_id, refused.kind)
        try:
            await asyncio.to_thread(self.builds.put, build.failed(refused.message("building")))
        except Exception as exc:
            log.error("could not record build %s as failed: %s", build.id, type(exc).__name__)
