"""Builds: an app's source, snapshotted, turned into an immutable site.

Every build has a record (queued → running → succeeded | failed) with the digest of the
source it was made from, its duration, the tail of its log and where its output lies:
``builds/{appId}/{buildId}/``, never written again once the build finished. Preview builds
(after a chat turn changed files) and deploy builds (the user clicked deploy) are made by
the same Builder; only what is pointed at them differs.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Protocol, runtime_checkable

from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot, Workspace
from zerocode.data.model import DATA_MODEL
from zerocode.errors import InvalidInput

BUILD_ID_PATTERN = r"^b\d{13}[0-9a-f]{6}$"
_BUILD_ID = re.compile(BUILD_ID_PATTERN)
LOG_TAIL_CHARS = 4000


class BuildState(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    # A preview build started ahead of need (engine/build_ahead.py) whose files changed
    # again before it could be shown: stopped, or built and never shown.
    SUPERSEDED = "superseded"

    @property
    def finished(self) -> bool:
        return self in (BuildState.SUCCEEDED, BuildState.FAILED, BuildState.SUPERSEDED)


class BuildPurpose(StrEnum):
    PREVIEW = "preview"
    DEPLOY = "deploy"


def new_build_id(now: float | None = None) -> str:
    """``b`` + epoch milliseconds + 6 hex: unique, and in the order builds were asked for,
    as text, so "newer" is a string comparison in every store. Within a process the
    milliseconds strictly increase (two builds asked for in one millisecond stay ordered)."""
    global _last_millis
    millis = int((time.time() if now is None else now) * 1000)
    if now is None:
        with _ids:
            millis = _last_millis = max(millis, _last_millis + 1)
    return f"b{millis:013d}{secrets.token_hex(3)}"


_ids = threading.Lock()


def built_at(build_id: str) -> float | None:
    """When the build was asked for (epoch seconds), read from its id; None for an id that
    is not one (the preview sweep keeps pointers it cannot date)."""
    if not is_build_id(build_id):
        return None
    return int(build_id[1:14]) / 1000


_last_millis = 0


def is_build_id(value: str) -> bool:
    return bool(_BUILD_ID.match(value))


def snapshot(workspace: Workspace, app_id: str) -> Snapshot:
    return Snapshot.of({f.path: workspace.read(app_id, f.path) for f in workspace.list(app_id)})


@dataclass(frozen=True, kw_only=True)
class Build:
    id: str
    app_id: str
    purpose: BuildPurpose
    kind: CodeGenType
    source_digest: str
    state: BuildState = BuildState.QUEUED
    created_at: float = field(default_factory=time.time)
    started_at: float | None = None
    finished_at: float | None = None
    log_tail: str = ""
    output: str | None = None  # where the site lies once succeeded
    error: str | None = None  # why it failed, for people
    runner_id: str | None = None  # the remote build (CodeBuild id) while it runs elsewhere

    @property
    def seconds(self) -> float | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    def running(self) -> Build:
        return replace(self, state=BuildState.RUNNING, started_at=time.time())

    def succeeded(self, output: str, log_tail: str) -> Build:
        return replace(
            self,
            state=BuildState.SUCCEEDED,
            output=output,
            log_tail=log_tail[-LOG_TAIL_CHARS:],
            finished_at=time.time(),
            started_at=self.started_at or time.time(),
        )

    def ended(self, outcome: BuildOutcome) -> Build:
        """Succeeded only with an output to show; otherwise failed, with the reason."""
        if outcome.ok and outcome.output:
            return self.succeeded(outcome.output, outcome.log_tail)
        return self.failed(outcome.error or "the build failed", outcome.log_tail)

    def superseded(self) -> Build:
        """Never shown: the files changed again while (or after) it was built."""
        return replace(
            self,
            state=BuildState.SUPERSEDED,
            error=SUPERSEDED,
            finished_at=self.finished_at or time.time(),
            started_at=self.started_at or time.time(),
        )

    def failed(self, error: str, log_tail: str = "") -> Build:
        return replace(
            self,
            state=BuildState.FAILED,
            error=error[:500],
            log_tail=log_tail[-LOG_TAIL_CHARS:],
            finished_at=time.time(),
            started_at=self.started_at or time.time(),
        )


SUPERSEDED = "superseded: the files changed again before this preview could be shown"


def built_from(build: Build | None, digest: str) -> str | None:
    """The build's id when it succeeded from exactly the files of ``digest``, else None."""
    if build is None or build.state is not BuildState.SUCCEEDED or build.source_digest != digest:
        return None
    return build.id


@dataclass(frozen=True)
class BuildPage:
    builds: list[Build]
    next_cursor: str | None


class BuildStore(Protocol):
    def put(self, build: Build) -> None: ...

    def get(self, app_id: str, build_id: str) -> Build | None: ...

    def list(
        self,
        app_id: str,
        cursor: str | None = None,
        limit: int = 20,
        purpose: BuildPurpose | None = None,
    ) -> BuildPage:
        """Newest first; ``cursor`` is the previous page's ``next_cursor``."""
        ...

    def delete_app(self, app_id: str) -> int: ...


def served_files(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """An html or multi-file app's files as its site serves them: all but its data model,
    which the platform reads (its rules, its seed records) and no visitor needs."""
    return {path: data for path, data in files.items() if path != DATA_MODEL}


def job_of(
    build: Build, source: Snapshot, owner: str = "", site: SiteMeta | None = None
) -> BuildJob:
    return BuildJob(
        app_id=build.app_id,
        build_id=build.id,
        kind=build.kind,
        source=source,
        preview=build.purpose is BuildPurpose.PREVIEW,
        owner=owner,
        site=site,
    )


def check_build_id(value: object) -> str:
    if not isinstance(value, str) or not is_build_id(value):
        raise InvalidInput("buildId is not one returned by this API")
    return value


@dataclass(frozen=True)
class SiteMeta:
    """What the platform knows of an app for its published page (publishing/site_head.py):
    its name, the request it was made from, where its site is (absolute, ending in "/"; ""
    where not known) and its cover (an absolute URL)."""

    name: str
    description: str = ""
    url: str = ""
    image: str = ""
    preview: bool = False  # a preview: for no crawler (robots.txt)
    # Whether the site is served at its origin's root ({key}.{domain}/), not under the
    # shared-origin path scheme (/sites/{key}/): a Vue page's <base> (publishing/prerender.py).
    own_origin: bool = True


@dataclass(frozen=True, kw_only=True)
class BuildJob:
    """What a Builder needs: which app, which build, what kind of project, which files."""

    app_id: str
    build_id: str
    kind: CodeGenType
    source: Snapshot
    # A preview's page carries the console's element picker (where the builder, not the
    # server, has to put it there: CloudFront serves previews straight from S3).
    preview: bool = False
    owner: str = ""  # the app's owner: build slots are shared per user (adapters/local)
    # What a published page is given where it lacks it (publishing/site_head.py); None:
    # nothing is added.
    site: SiteMeta | None = None


# How a build the platform could not run begins its error (no slot, no box): the platform's
# failure, not the app's, which no repair of the app can help.
REFUSED = "the build was refused: "


@dataclass(frozen=True, kw_only=True)
class BuildOutcome:
    ok: bool
    log_tail: str
    output: str | None  # the immutable output location, when ok
    error: str | None = None


class Builder(Protocol):
    async def build(self, job: BuildJob) -> BuildOutcome:
        """Build and verify ``job``; never raises for a broken project (it fails instead)."""
        ...

    def delete_app(self, app_id: str) -> int:
        """Remove every output and working file of the app (it is being deleted)."""
        ...


@runtime_checkable
class PreviewRetention(Protocol):
    """A builder whose preview outputs expire (AWS: tagged, a lifecycle rule) unless shown."""

    def retain_preview(self, app_id: str, shown: str, replaced: str | None) -> None:
        """The app's preview now shows build ``shown``: its output stops expiring, and the
        output of ``replaced`` (the build it showed before, if any) may expire again."""
        ...


@runtime_checkable
class RemoteBuilder(Builder, Protocol):
    """A builder that runs elsewhere (CodeBuild): started by one request, finished by an
    event or by polling, so no process has to wait for it."""

    def start(self, job: BuildJob) -> str | BuildOutcome:
        """Start the build: its runner id, or the outcome when there was nothing to run."""
        ...

    def outcome(
        self,
        app_id: str,
        build_id: str,
        runner_id: str,
        *,
        preview: bool = False,
        site: SiteMeta | None = None,
        vue: bool = False,
    ) -> BuildOutcome | None:
        """The verified outcome of a started build, or None while it is still running. A
        preview build's screenshot is kept privately (preview_covers.py), a deploy's with
        its site. ``site``: what its page lacks is added before it is published
        (site_head.py; ``vue``: and its ``<base>``, prerender.py)."""
        ...

    def cover(self, app_id: str, build_id: str) -> str | None:
        """The path of the build's cover inside its site, if the build took one (a remote
        build takes its own screenshot: no browser runs where the platform does)."""
        ...
