"""AWS builds on CodeBuild's Lambda compute, in the platform's image, with no credentials.

Every build, of every kind, is one CodeBuild build running ``python3 -m zerocode.buildbox``
in the platform's build image (``zerocode/buildbox/Dockerfile``: Node 22, the toolchain
installed from the platform's lockfile, Chromium). The build compiles and runs untrusted code,
so it holds nothing that reaches anyone else's data (docs/builds.md, "AWS builds"):

- No link is in the run's request, record or events. The run is started first; its
  source zip (the platform's build tree of the snapshot, the toolchain's lockfile, a
  preview's element picker) then goes under its own role session's prefix, which no other
  run can read, with a size-bounded presigned POST of the one archive it sends back to
  ``staging/{appId}/{buildId}.tar`` (:mod:`.build_sources`, :mod:`.build_handoff`).
- The CodeBuild project's role reads and deletes only ``sources/${aws:userid}/``: its own
  session's objects (infra). The POST is signed by a session of the *build data role*
  that can write that one archive.

Completion arrives as an EventBridge "CodeBuild Build State Change" (``functions/
build_events``), which also tells a waiting turn (:mod:`.build_waits`); :meth:`outcome`
unpacks the staging archive by the strict rules of
:mod:`zerocode.publishing.output_archive` into ``builds/{appId}/{buildId}/``, ``index.html``
last, the check into ``checks/``, the covers where docs/builds.md says. A preview build's
objects are tagged :data:`PREVIEW_TAG` (the lifecycle rule expires them) until the preview
shows them (:meth:`CodeBuildBuilder.retain_preview`); a deploy build's never are.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import tempfile
import time
import urllib.parse
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol, TypeVar

from botocore.exceptions import ClientError

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.aws.build_report import report_deploy
from zerocode.adapters.aws.build_sources import BuildSources, source_files
from zerocode.adapters.aws.build_waits import RunWaiter
from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.aws.s3_keys import site_objects
from zerocode.adapters.aws.s3_preview_covers import S3PreviewCovers
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import check_app_id
from zerocode.publishing.build_signals import FALLBACK_SECONDS, HEAR_SECONDS, BuildSignals
from zerocode.publishing.builds import BuildJob, BuildOutcome, SiteMeta
from zerocode.publishing.encodings import site_cache
from zerocode.publishing.media_types import media_type
from zerocode.publishing.output_archive import OutputRefused, unpack
from zerocode.publishing.prerender import SHELL, rendered_pages, with_base
from zerocode.publishing.publish_report import PublishReports
from zerocode.publishing.site_head import complete, complete_pages

log = logging.getLogger(__name__)
_T = TypeVar("_T")

BUILDSPEC = """\
version: 0.2
phases:
  build:
    commands:
      - python3 -m zerocode.buildbox
"""
# What a preview build's objects are tagged with (the lifecycle rule "PreviewOutputs" in
# infra/zerocode_infra/storage.py filters on it; a test keeps the two equal).
PREVIEW_TAG = ("zerocode:purpose", "preview")
_PREVIEW_TAGGING = urllib.parse.urlencode([PREVIEW_TAG])
_FAILED = {"FAILED", "FAULT", "STOPPED", "TIMED_OUT"}
_MISSING = {"404", "NoSuchKey", "NotFound"}


class RouteLists(Protocol):
    """Where a deploy's prerendered routes are told to the sites' routers (the KeyValueStore
    and the pointer table: bootstrap/aws_parts.py), and forgotten with the app."""

    def put(self, app_id: str, build_id: str, routes: list[str]) -> None: ...

    def drop(self, app_id: str, build_ids: list[str]) -> None: ...


class CodeBuildBuilder:
    def __init__(
        self,
        codebuild: Any,
        s3: Any,
        project: str,
        bucket: str,
        *,
        sts: Any = None,
        data_role_arn: str | None = None,
        build_role_id: str | None = None,
        poll_seconds: float = 2.0,
        timeout_seconds: float = 14 * 60,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        signals: BuildSignals | None = None,
        fallback_seconds: float = FALLBACK_SECONDS,
        routes: RouteLists | None = None,
    ) -> None:
        """``sts``, ``data_role_arn`` (the build data role) and ``build_role_id`` (the
        project role's unique id; infra passes both) are needed to start builds
        (:mod:`.build_sources`).
        ``signals``: where build_events tells a run's end (:mod:`.build_waits`); without,
        a waiter asks CodeBuild every ``poll_seconds``."""
        self.codebuild, self.s3, self.project, self.bucket = codebuild, s3, project, bucket
        # Where a deploy's prerendered routes are told (the KeyValueStore: site_router.js).
        self.routes = routes
        # Where a deploy's publish report is kept (the checks table; build_report.py).
        self.reports: PublishReports | None = None
        self.sources = BuildSources(
            s3, bucket, sts=sts, data_role_arn=data_role_arn, build_role_id=build_role_id
        )
        self.timeout_seconds = timeout_seconds
        self.preview_covers = S3PreviewCovers(s3, bucket)
        self.waiter = RunWaiter(
            self.run_state,
            signals,
            hear_seconds=HEAR_SECONDS if signals is not None else poll_seconds,
            fallback_seconds=fallback_seconds,
            sleep=sleep,
        )

    def output_prefix(self, app_id: str, build_id: str) -> str:
        return f"builds/{check_app_id(app_id)}/{check_app_id(build_id)}/"

    def staging_key(self, app_id: str, build_id: str) -> str:
        return self.sources.staging_key(app_id, build_id)

    def check_key(self, app_id: str, build_id: str) -> str:
        return f"checks/{check_app_id(app_id)}/{check_app_id(build_id)}.json"

    async def build(self, job: BuildJob) -> BuildOutcome:
        """Start the build and poll it (a chat turn's preview waits for its build); a wait
        cancelled (the turn stopped or superseded) or out of time stops the build."""
        started = await self.launched(lambda: self.start(job), job.app_id, job.build_id)
        if isinstance(started, BuildOutcome):
            return started
        deadline = time.monotonic() + self.timeout_seconds
        try:
            state = await self.waiter.settled(started, deadline)
            if state is not None:
                done = await asyncio.to_thread(
                    self.outcome,
                    job.app_id,
                    job.build_id,
                    started,
                    preview=job.preview,
                    state=state,
                )
                if done is not None:
                    return done
        except asyncio.CancelledError:  # the turn was stopped or superseded: so is its build
            await asyncio.shield(asyncio.to_thread(self.stop, started, job.app_id, job.build_id))
            raise
        await asyncio.to_thread(self.stop, started, job.app_id, job.build_id)
        return BuildOutcome(
            ok=False,
            log_tail="",
            output=None,
            error=f"CodeBuild did not finish within {self.timeout_seconds:.0f} s",
        )

    async def launched(self, start: Callable[[], _T], app_id: str, run_id: str) -> _T:
        """``start()`` (which starts a run: its CodeBuild id, or what it gives instead) run
        to its end even if the waiter is cancelled meanwhile; then the run is stopped too, so
        no run outlives whoever wanted it."""
        task = asyncio.ensure_future(asyncio.to_thread(start))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                begun = await task
                if isinstance(begun, str):
                    await asyncio.to_thread(self.stop, begun, app_id, run_id)
            raise

    def start(self, job: BuildJob) -> str | BuildOutcome:
        if job.kind is not CodeGenType.VUE_PROJECT and "index.html" not in job.source.files:
            return BuildOutcome(
                ok=False, log_tail="", output=None, error="the app has no index.html yet"
            )
        variables = {
            "ZEROCODE_KIND": job.kind.value,
            "ZEROCODE_PREVIEW": "1" if job.preview else "0",
            # Where the site is served (its origin's root, or /sites/{key}/): a Vue page's
            # <base>, made in the box before its routes are prerendered (prerender.py).
            "ZEROCODE_OWN_ORIGIN": "0" if job.site is not None and not job.site.own_origin else "1",
        }
        return self.launch(job.app_id, job.build_id, source_files(job), variables)

    def launch(
        self, app_id: str, run_id: str, files: dict[str, bytes], variables: dict[str, str]
    ) -> str:
        """Start one run of the build box, then put ``files`` (and the hand-off) where
        only that run can read them; ``variables`` go beside the app and run ids, and
        none of them is a capability. CodeBuild's id of the run."""
        self.sources.ready()
        told = {
            "ZEROCODE_APP_ID": check_app_id(app_id),
            "ZEROCODE_BUILD_ID": check_app_id(run_id),
            handoff.BUCKET_VARIABLE: self.bucket,
            **variables,
        }
        answer = self.codebuild.start_build(
            projectName=self.project,
            idempotencyToken=run_id,
            sourceTypeOverride="NO_SOURCE",
            buildspecOverride=BUILDSPEC,
            artifactsOverride={"type": "NO_ARTIFACTS"},
            environmentVariablesOverride=[
                {"name": name, "value": value, "type": "PLAINTEXT"} for name, value in told.items()
            ],
        )
        runner = str(answer["build"]["id"])
        try:
            self.sources.put(runner, app_id, run_id, files)
        except BaseException:  # a run without its source would only wait for it: stop it
            self.stop(runner, app_id, run_id)
            raise
        return runner

    def run_state(self, runner_id: str) -> dict[str, Any] | None:
        """CodeBuild's record of a run (None: it has none)."""
        builds = self.codebuild.batch_get_builds(ids=[runner_id]).get("builds", [])
        return dict(builds[0]) if builds else None

    def stop(self, runner_id: str, app_id: str | None = None, run_id: str | None = None) -> None:
        """Stop a run that is no longer wanted (its turn stopped, superseded or out of time),
        and with ``app_id`` and ``run_id`` delete its source should it never have fetched it;
        one that already ended is left as it is. A stop that fails is logged: the run still
        ends within CodeBuild's 15 minutes, and whoever stopped waiting is not held up."""
        try:
            self.codebuild.stop_build(id=runner_id)
            if app_id is not None and run_id is not None:
                self.sources.drop(runner_id, app_id, run_id)
        except ClientError as exc:
            if error_code(exc) not in {"InvalidInputException", "ResourceNotFoundException"}:
                log.warning("could not stop CodeBuild run %s: %s", runner_id, error_code(exc))
        except Exception as exc:
            log.warning("could not stop CodeBuild run %s: %s", runner_id, type(exc).__name__)

    def outcome(
        self,
        app_id: str,
        build_id: str,
        runner_id: str,
        *,
        preview: bool = False,
        state: dict[str, Any] | None = None,
        site: SiteMeta | None = None,
        vue: bool = False,
    ) -> BuildOutcome | None:
        """The finished build's outcome, its output published; None while it runs.
        ``state``: CodeBuild's record of it, when the caller has just read it; ``site``:
        what its page lacks is added first (and a Vue page's ``<base>``)."""
        build = state if state is not None else self.run_state(runner_id)
        if build is None:
            return BuildOutcome(
                ok=False, log_tail="", output=None, error=f"CodeBuild has no build {runner_id}"
            )
        status = str(build.get("buildStatus", "IN_PROGRESS"))
        if status != "SUCCEEDED" and status not in _FAILED:
            return None
        prefix = self.output_prefix(app_id, build_id)
        if status == "SUCCEEDED" and self._exists(prefix + "index.html"):
            return self._succeeded(prefix, "")  # another finisher got here first
        with tempfile.TemporaryDirectory(prefix="zerocode-output-") as tmp:
            try:
                done = self._finish(
                    app_id, build_id, build, Path(tmp), preview=preview, site=site, vue=vue
                )
            except OutputRefused as exc:
                done = BuildOutcome(
                    ok=False, log_tail=handoff.phases_said(build), output=None, error=str(exc)
                )
        # Published, failed or refused, the archive has served: nothing of it is left behind.
        self.drop_output(app_id, build_id)
        return done

    def _finish(
        self,
        app_id: str,
        build_id: str,
        build: dict[str, Any],
        tmp: Path,
        *,
        preview: bool,
        site: SiteMeta | None = None,
        vue: bool = False,
    ) -> BuildOutcome:
        """A finished build's outcome from its staging archive, its site published if it
        succeeded. Raises OutputRefused, before anything is published."""
        prefix, status = self.output_prefix(app_id, build_id), str(build.get("buildStatus"))
        out = self.unpacked(app_id, build_id, tmp)
        log_tail = handoff.read_text(out / handoff.LOG_FILE, handoff.MAX_LOG_BYTES) if out else ""
        tail = "\n".join(filter(None, (log_tail, handoff.phases_said(build))))
        if status in _FAILED:
            return BuildOutcome(
                ok=False, log_tail=tail, output=None, error=f"the project did not build ({status})"
            )
        if out is None:
            if self._exists(prefix + "index.html"):
                return self._succeeded(prefix, tail)
            return BuildOutcome(
                ok=False, log_tail=tail, output=None, error="the build handed back no output"
            )
        if not (out / handoff.SITE_DIR / "index.html").is_file():
            return BuildOutcome(
                ok=False, log_tail=tail, output=None, error="the build's output has no index.html"
            )
        added: list[str] = []
        if site is not None:  # before any object is put: the page is published whole
            root = out / handoff.SITE_DIR
            added = complete(root, site)
            if vue and with_base(root, own_origin=site.own_origin):
                added.append("base")
            if (root / SHELL).is_file():  # prerendered in the box: its pages get the same
                complete_pages(root, site, rendered_pages(root))
            tail += f"\nadded to the page: {', '.join(added)}" if added else ""
        self._publish_output(app_id, build_id, out, preview=preview)
        if not preview and self.reports is not None:  # stored before it reads succeeded
            report_deploy(self.reports, app_id, build_id, out, site=site, vue=vue, added=added)
        return self._succeeded(prefix, tail)

    def _succeeded(self, prefix: str, tail: str) -> BuildOutcome:
        return BuildOutcome(ok=True, log_tail=tail, output=f"s3://{self.bucket}/{prefix}")

    def unpacked(self, app_id: str, build_id: str, tmp: Path) -> Path | None:
        """The staging archive unpacked under ``tmp`` by the strict rules; None if there is
        none. Raises OutputRefused."""
        try:
            answer = self.s3.get_object(Bucket=self.bucket, Key=self.staging_key(app_id, build_id))
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return None
            raise
        body = answer["Body"]
        try:
            unpack(body, tmp / handoff.ARCHIVE_ROOT, root=handoff.ARCHIVE_ROOT)
        finally:
            body.close()
        return tmp / handoff.ARCHIVE_ROOT

    def _publish_output(self, app_id: str, build_id: str, out: Path, *, preview: bool) -> None:
        """The site into its prefix (``index.html`` last: the output counts once it is
        there), a deploy's cover into the site and a preview's into the private prefix, the
        check beside. Every site path is checked by the output rule first (raises
        OutputRefused): a refused site writes nothing."""
        prefix = self.output_prefix(app_id, build_id)
        files = site_objects(out / handoff.SITE_DIR, prefix, leave_out=handoff.COVER_PATH)
        cover = out / handoff.COVER_FILE
        if handoff.is_png(cover) and preview:
            self.preview_covers.put(app_id, build_id, cover.read_bytes())
        elif handoff.is_png(cover):
            files[prefix + handoff.COVER_PATH] = cover
        # A preview's objects expire (the tag); a deploy's stay. The cover is not tagged:
        # an app keeps it until a newer one replaces it.
        tagging = {"Tagging": _PREVIEW_TAGGING} if preview else {}
        self.s3.put_object(
            Bucket=self.bucket,
            Key=self.check_key(app_id, build_id),
            Body=json.dumps(handoff.stored_check(out / handoff.CHECK_FILE)).encode(),
            ContentType="application/json",
            **tagging,
        )
        if not preview and self.routes is not None and prefix + SHELL in files:
            paths = [key.removeprefix(prefix) for key in files]
            pages = [path for path in paths if path.endswith("/index.html")]
            routes = sorted("/" + page.removesuffix("/index.html") for page in pages)
            self.routes.put(app_id, build_id, routes)  # before the deploy can be pointed at
        for key in sorted(files, key=lambda k: k == prefix + "index.html"):
            self.s3.put_object(
                Bucket=self.bucket,
                Key=key,
                Body=files[key].read_bytes(),
                ContentType=media_type(key),
                CacheControl=site_cache(key.removeprefix(prefix), preview=preview),
                **tagging,
            )

    def output_files(self, app_id: str, build_id: str, limit: int) -> dict[str, bytes] | None:
        """A build's published output, by site path (None: none, or more than ``limit``
        bytes), for a checks run of it (:mod:`.build_acceptance`)."""
        prefix, files, total = self.output_prefix(app_id, build_id), {}, 0
        for page in self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=prefix
        ):
            for item in page.get("Contents", []):
                total += int(item.get("Size", 0))
                if total > limit:
                    return None
                body = self.s3.get_object(Bucket=self.bucket, Key=item["Key"])["Body"]
                files[str(item["Key"])[len(prefix) :]] = body.read()
        return files or None

    def drop_output(self, app_id: str, run_id: str) -> None:
        self.s3.delete_object(Bucket=self.bucket, Key=self.staging_key(app_id, run_id))

    def retain_preview(self, app_id: str, shown: str, replaced: str | None) -> None:
        """The preview now shows ``shown``: its objects lose the expiry tag, so the build a
        preview pointer names never expires; ``replaced``'s objects get it back (they
        expire by their age from then on). One DeleteObjectTagging or PutObjectTagging
        per object, eight at a time, so a turn waits a few round trips, not one per file."""
        expiring = [{"Key": PREVIEW_TAG[0], "Value": PREVIEW_TAG[1]}]
        work: list[tuple[str, list[dict[str, str]]]] = [
            (key, []) for key in self._build_keys(app_id, shown)
        ]
        if replaced and replaced != shown:
            work += [(key, expiring) for key in self._build_keys(app_id, replaced)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda item: self._tag(*item), work))

    def _build_keys(self, app_id: str, build_id: str) -> list[str]:
        """The build's site and check objects as they are now (listed: a check may never
        have been written, an output may have expired)."""
        keys: list[str] = []
        paginator = self.s3.get_paginator("list_objects_v2")
        for prefix in (self.output_prefix(app_id, build_id), self.check_key(app_id, build_id)):
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                keys += [o["Key"] for o in page.get("Contents", [])]
        return keys

    def _tag(self, key: str, tags: list[dict[str, str]]) -> None:
        try:
            if tags:
                self.s3.put_object_tagging(Bucket=self.bucket, Key=key, Tagging={"TagSet": tags})
            else:
                self.s3.delete_object_tagging(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) not in _MISSING:  # a check never written, an expired file
                raise

    def cover(self, app_id: str, build_id: str) -> str | None:
        """The site-relative path of the build's cover, if the build took one."""
        key = self.output_prefix(app_id, build_id) + handoff.COVER_PATH
        return handoff.COVER_PATH if self._exists(key) else None

    def delete_app(self, app_id: str) -> int:
        removed = 0
        app = check_app_id(app_id)
        for prefix in (f"builds/{app}/", f"staging/{app}/", f"checks/{app}/"):
            paginator = self.s3.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                keys = [str(o["Key"]) for o in page.get("Contents", [])]
                prerendered = [k.split("/")[2] for k in keys if k.endswith(f"/{SHELL}")]
                if self.routes is not None and prerendered:  # their route lists go first
                    self.routes.drop(app, prerendered)
                removed += self._delete(keys)
        return removed + self._delete(self.sources.of_app(app))

    def _delete(self, keys: list[str]) -> int:
        for at in range(0, len(keys), 1000):
            batch = [{"Key": k} for k in keys[at : at + 1000]]
            self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True})
        return len(keys)

    def _exists(self, key: str) -> bool:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return False
            raise
        return True
