"""Previews, deploys and rollbacks: builds made by one Builder, served through pointers.

A preview build follows a chat turn that changed files; when it succeeds the app's preview
pointer flips to it (publishing/previews.py, which :class:`Publishing` extends). A deploy
snapshots the source when it is asked for, builds it in the background, and only when that
build succeeded and its output was verified flips the site pointer and then writes the
app's deploy record naming the same build. A failed build changes nothing a visitor sees.
Deploys of one app run one at a time, in the order they were asked for, so the last one
asked for is the one left published. Rollback flips the pointer back to an earlier
successful deploy build, and (on AWS) puts the site into the hot set so the edge serves the
rollback at once (``publishing.hot_set``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from zerocode.apps.lease import Lease
from zerocode.apps.records import App, CodeGenType, new_deploy_key
from zerocode.apps.workspace import Snapshot
from zerocode.data.in_force import keep_model
from zerocode.errors import Conflict, InvalidInput, NotFound
from zerocode.publishing.builds import (
    Build,
    BuildOutcome,
    BuildPurpose,
    BuildState,
    RemoteBuilder,
    check_build_id,
    is_build_id,
    job_of,
    new_build_id,
    snapshot,
)
from zerocode.publishing.hot_set import Promoter, Promotion
from zerocode.publishing.pointers import SiteTarget, preview_pointer, site_pointer
from zerocode.publishing.previews import Previews
from zerocode.publishing.publish_report import PublishReports
from zerocode.publishing.report_runner import PublishReporter

log = logging.getLogger(__name__)

DEPLOY_LEASE_SECONDS = 20 * 60  # longer than any build; renewed by nothing, freed at the end


class Covers(Protocol):
    """Cover images of published apps (a screenshot), kept per build."""

    async def __call__(self, app: App) -> str | None:
        """Take the cover of the app's published site; its URL, or None."""
        ...

    def path(self, app_id: str, file: str) -> Path | None: ...

    def delete_app(self, app_id: str) -> int: ...


@dataclass(kw_only=True)
class Publishing(Previews):
    """Previews (publishing/previews.py), and deploys and rollbacks of the app's site."""

    lease: Lease
    covers: Covers | None = None
    # The publish report of each published deploy, made in the background (issue 44,
    # point 5; publishing/report_runner.py); None: no report is made or kept here.
    reports: PublishReporter | None = None
    # Local: deploys run as tasks of this process. AWS: a deploy starts CodeBuild and the
    # build_events function (or a poll) finishes it, because Lambda freezes after answering.
    in_process: bool = True

    def __post_init__(self) -> None:
        # In this process deploys of one app queue on a lock (FIFO, so in request order);
        # the lease keeps other processes out while one runs.
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._tasks: set[asyncio.Task[Build]] = set()

    @property
    def report_store(self) -> PublishReports | None:
        """Where the deploys' reports are kept (emptied of an app's when it is deleted)."""
        return self.reports.store if self.reports is not None else None

    def site_url(self, deploy_key: str) -> str:
        return self.urls.site(deploy_key)

    def request_deploy(self, app: App) -> tuple[Build, Snapshot]:
        """Snapshot the source now and record a queued deploy build (answered with 202)."""
        return self._queue(app, self._source_to_deploy(app))

    async def start_deploy(self, app: App) -> Build:
        """Queue a deploy: a task of this process, or a remote build finished by an event."""
        source = await asyncio.to_thread(self._source_to_deploy, app)
        build = _deploy_build(app, source)
        if not self.in_process:
            await asyncio.to_thread(self.builds.put, build)
            return await asyncio.to_thread(self.start_remote, build, source)
        # The id is taken and the task created with no await between them: a task's first
        # step is to queue on the app's FIFO lock, so builds of one app run in id order and
        # the last one asked for runs last. It builds once its record is written.
        loop = asyncio.get_running_loop()
        recorded: asyncio.Future[bool] = loop.create_future()
        task = loop.create_task(self.deploy(build, source, recorded))
        self._tasks.add(task)  # keep a reference until it is done
        task.add_done_callback(self._tasks.discard)
        written = False
        try:
            await asyncio.to_thread(self.builds.put, build)
            written = True
        finally:
            recorded.set_result(written)
        return build

    def _source_to_deploy(self, app: App) -> Snapshot:
        source = snapshot(self.workspace, app.id)
        if not source.files:
            # The request is sound; the app is not ready for it (409, not 400).
            raise Conflict("there is nothing to deploy yet: generate the app first")
        return source

    def _queue(self, app: App, source: Snapshot) -> tuple[Build, Snapshot]:
        build = _deploy_build(app, source)
        self.builds.put(build)
        return build, source

    def start_remote(self, build: Build, source: Snapshot) -> Build:
        builder = self._remote()
        running = build.running()
        keep_model(self.models, build.app_id, build.id, source.files)
        self.builds.put(running)
        app = self.apps.get(build.app_id)
        site = self.site_meta(app, build) if app is not None else None
        try:
            started = builder.start(job_of(build, source, site=site))
        except Exception as exc:
            log.exception("starting build %s of app %s failed", build.id, build.app_id)
            failed = running.failed(f"the build could not be started: {exc}")
            self.builds.put(failed)
            return failed
        if isinstance(started, BuildOutcome):
            return self._complete(running, started)
        running = replace(running, runner_id=started)
        self.builds.put(running)
        return running

    def finish(self, app_id: str, build_id: str) -> Build | None:
        """Record a remote build's outcome (from its completion event, or a poll) and publish
        it unless a newer deploy build has already been published. Idempotent."""
        build = self.builds.get(app_id, build_id)
        if build is None or build.state.finished or build.runner_id is None:
            return build
        app = self.apps.get(app_id)
        deploy = build.purpose is BuildPurpose.DEPLOY
        key = self._site_key(app_id) if deploy else None  # named by its page, then used
        outcome = self._remote().outcome(
            app_id,
            build_id,
            build.runner_id,
            preview=not deploy,
            site=self.site_meta(app, build, key) if app is not None else None,
            vue=build.kind is CodeGenType.VUE_PROJECT,
        )
        return build if outcome is None else self._complete(build, outcome, key)

    def current(self, app_id: str, build_id: str) -> Build | None:
        """The build as it stands; a remote build still running is asked for its outcome
        first, should its completion event be late."""
        found = self.builds.get(app_id, build_id) if is_build_id(build_id) else None
        if found is not None and found.runner_id and not found.state.finished:
            found = self.finish(app_id, found.id)
        return found

    def _complete(self, build: Build, outcome: BuildOutcome, key: str | None = None) -> Build:
        """A remote build's end recorded. A deploy build says "succeeded" only once its site
        is published, as a local one (:meth:`deploy`): a client that sees it succeeded
        reads the app's new deployUrl, never the old one or none."""
        done = build.ended(outcome)
        if done.state is BuildState.SUCCEEDED and done.purpose is BuildPurpose.DEPLOY:
            self._publish_if_newest(done, key)  # which records it, once published
        else:
            self.builds.put(done)
        return done

    def _publish_if_newest(self, build: Build, site_key: str | None = None) -> None:
        """Remote builds of one app may finish out of order; the newest success wins, and
        the lease makes the check, the flip and the build's record one step across
        processes (an older build finishing meanwhile sees this one succeeded). Without the
        lease nothing is recorded: the build's next event or poll finishes it."""
        holder, key = secrets.token_hex(8), f"deploy:{build.app_id}"
        deadline = time.monotonic() + 60
        while not self.lease.acquire(key, holder, 60):
            if time.monotonic() > deadline:
                raise Conflict("another deploy of this app is publishing; try again")
            time.sleep(0.5)
        try:
            newer = self.builds.list(build.app_id, limit=50, purpose=BuildPurpose.DEPLOY)
            if any(b.id > build.id and b.state is BuildState.SUCCEEDED for b in newer.builds):
                log.info("build %s finished after a newer deploy; not published", build.id)
                return
            self.publish(build, site_key)
        finally:
            try:
                self.builds.put(build)
            finally:
                self.lease.release(key, holder)

    def _remote(self) -> RemoteBuilder:
        if not isinstance(self.builder, RemoteBuilder):
            raise TypeError("this builder runs in process; remote deploys need a RemoteBuilder")
        return self.builder

    async def deploy(
        self, build: Build, source: Snapshot, recorded: asyncio.Future[bool] | None = None
    ) -> Build:
        """Build and publish, after the app's earlier deploys; ``recorded`` says whether
        the build's queued record was written (if not, nothing is built: the caller was
        told)."""
        async with self._locks[build.app_id]:
            if recorded is not None and not await recorded:
                return build
            holder = secrets.token_hex(8)
            # The lease may be another process's: nothing to await but time.
            while not await asyncio.to_thread(  # noqa: ASYNC110
                self.lease.acquire, f"deploy:{build.app_id}", holder, DEPLOY_LEASE_SECONDS
            ):
                await asyncio.sleep(1)  # another process is deploying this app
            try:
                # A deploy build says "succeeded" only once its site is published: a client
                # that sees it succeeded reads the app's new deployUrl, never the old one.
                # The site's key is known before the build, so its page can name its own
                # address (og:url, the sitemap) on the first deploy too.
                key = await asyncio.to_thread(self._site_key, build.app_id)
                done = await self._run(build, source, hold=True, key=key)
                if done.state is BuildState.SUCCEEDED:
                    try:
                        app = await asyncio.to_thread(self.publish, done, key)
                        if app is not None and self.reports is not None:
                            # Pending before the build reads succeeded: never "no report".
                            await self.reports.begin(app, done)
                    finally:
                        await asyncio.to_thread(self.builds.put, done)
                    if app is not None and self.covers is not None:
                        await self._cover(app)
                    if app is not None and self.reports is not None:
                        self.reports.start(app, done)  # in the background: never awaited
                return done
            finally:
                await asyncio.to_thread(self.lease.release, f"deploy:{build.app_id}", holder)

    async def drain(self) -> None:
        """Wait for background deploys (tests and shutdown)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def _site_key(self, app_id: str) -> str | None:
        """The key the app's next deploy publishes under: its own, or a new one for a first
        deploy (recorded only when that deploy is published)."""
        app = self.apps.get(app_id)
        if app is None:
            return None
        usable = app.deploy_key is not None and self.urls.usable(app.deploy_key)
        return app.deploy_key if usable else new_deploy_key()

    def publish(self, build: Build, chosen: str | None = None) -> App | None:
        """Flip the site pointer to a verified build, then write the deploy record (under
        the app's key; else ``chosen``, the key its build was told; else a new one)."""
        app = self.apps.get(build.app_id)
        if app is None:
            return None  # deleted while building: publish nothing
        key, stale = app.deploy_key, None
        if key is None or not self.urls.usable(key):  # the first deploy, or a key made
            key, stale = chosen or new_deploy_key(), key  # before sites had own origins
        self.publisher.point(site_pointer(key), SiteTarget(app.id, build.id))
        now = time.time()
        published = replace(
            app,
            deploy_key=key,
            deploy_url=self.site_url(key),
            deploy_build_id=build.id,
            deployed_at=now,
            updated_at=now,
            cover=self._remote_cover(build, key, app.cover),
        )
        self.apps.put(published)
        if stale is not None:
            self.publisher.remove(site_pointer(stale))
        log.info(
            "published app %s build %s",
            app.id,
            build.id,
            extra={"app_id": app.id, "build_id": build.id},
        )
        return published

    def _remote_cover(self, build: Build, key: str, current: str | None) -> str | None:
        """A remote build's own cover, the site's once published (the cover follows the
        build: a rollback shows the older one); in process, covers come after publishing."""
        if not isinstance(self.builder, RemoteBuilder):
            return current
        path = self.builder.cover(build.app_id, build.id)
        return self.site_url(key) + path if path else None

    async def rollback(self, app: App, build_id: str) -> App:
        build = await asyncio.to_thread(self.builds.get, app.id, check_build_id(build_id))
        if build is None:
            raise NotFound(f"build {build_id} not found")
        if build.purpose is not BuildPurpose.DEPLOY or build.state is not BuildState.SUCCEEDED:
            raise InvalidInput("only a successful deploy build can be published again")
        async with self._locks[app.id]:
            published = await asyncio.to_thread(self.publish, build)
            if published is not None:
                await asyncio.to_thread(self._promote, published)
        if published is None:
            raise NotFound(f"app {app.id} not found")
        return published

    def _promote(self, app: App) -> None:
        """Put the rolled-back site into the hot set (AWS), so visitors see the rollback
        within the KeyValueStore's propagation instead of the routing's 90 s. A failure is
        logged, never raised: the pointer table is the truth and already names the build,
        and a key left out of the hot set is served from it (docs/operations.md, "Instant
        rollback: promotion into the hot set")."""
        if not isinstance(self.publisher, Promoter) or app.deploy_key is None:
            return
        failed: BaseException | None = None
        try:
            outcome = self.publisher.promote(site_pointer(app.deploy_key)).value
        except Exception as exc:
            failed, outcome = exc, "failed"
        if outcome != Promotion.PROMOTED.value:
            log.warning(
                "rollback of app %s not in the hot set (%s): visitors see it within 90 s",
                app.id,
                outcome,
                exc_info=failed,
                extra={"app_id": app.id, "build_id": app.deploy_build_id, "hot_set": outcome},
            )

    def unpublish(self, app: App) -> None:
        """Stop serving the app's site and preview (it is being deleted)."""
        if app.deploy_key:
            self.publisher.remove(site_pointer(app.deploy_key))
        self.publisher.remove(preview_pointer(app.preview_key))

    async def _cover(self, app: App) -> None:
        """Best effort: a failed screenshot never fails the deploy."""
        assert self.covers is not None
        try:
            url = await self.covers(app)
        except Exception as exc:
            log.warning("cover screenshot of app %s failed: %s", app.id, exc)
            return
        current = await asyncio.to_thread(self.apps.get, app.id)
        if url and current is not None:
            await asyncio.to_thread(self.apps.put, replace(current, cover=url))


def _deploy_build(app: App, source: Snapshot) -> Build:
    return Build(
        id=new_build_id(),
        app_id=app.id,
        purpose=BuildPurpose.DEPLOY,
        kind=app.code_gen_type,
        source_digest=source.digest,
    )
