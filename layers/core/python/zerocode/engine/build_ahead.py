"""A Vue turn's preview build, started as soon as a tool step changed files.

The model's closing reply (a whole model call with a real model) usually changes nothing,
so waiting for it before building costs the user that call. Instead, when a step of tool
calls changed files and was committed, the preview build of those files starts at once,
beside the model's next call; it is not shown yet. If that call answers without changing
files, the build is the round's build (the build step adopts it: its ``build`` events, the
preview flip, the checks); if it changes files again, the build is superseded: stopped (or,
when it already ended, left alone) and recorded ``superseded``, never shown, and a new one
starts after that step. At most one build runs ahead per turn.

Adoption does not rely on that bookkeeping alone: the build's source is snapshotted when it
starts, and it is adopted only while the files still have that snapshot's digest (a step
that failed half-way, a stop landing between two tool calls, changes files without a new
build ahead); otherwise it is superseded and the files are built afresh.

A build ahead starts only after the files have been quiet for ``QUIET_SECONDS``: a model
whose steps follow each other faster than that (a scripted one, or a quick run of small
edits) would otherwise start, and supersede, a build and a box per step, which costs a Vue
build's CPU each time for nothing. A real model's next call takes longer than the wait, so
the build still runs beside it; a round that ends within the wait builds afresh, as it
would without a build ahead, and no record is written for the build that never started.

What the user and the model are told is unchanged: a build is announced when the round
adopts it, with its real outcome and time; a superseded build was never announced and is
listed in the app's builds as ``superseded``. The turn waits for every build it started
before it ends, so no record is left ``running``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Protocol

from zerocode.apps.records import App
from zerocode.apps.workspace import Snapshot, Workspace
from zerocode.publishing.builds import Build, new_build_id, snapshot

log = logging.getLogger("zerocode.engine.turn")

SETTLE_SECONDS = 30.0  # a stopped build's record, at most this long after the turn
QUIET_SECONDS = 0.15  # the files unchanged this long before a build starts ahead


class PreviewStages(Protocol):
    """A preview build in its two stages, so it can start before it is known to be wanted
    (publishing/service.py)."""

    async def build_preview(
        self, app: App, build_id: str, source: Snapshot | None = None
    ) -> Build: ...

    async def show_preview(self, app: App, build: Build) -> None: ...

    async def supersede_preview(self, app: App, build_id: str) -> Build | None: ...

    def prepare_preview(self, app: App) -> None:
        """Get ready for the app's next build (a box started ahead); returns at once."""


@dataclass(frozen=True)
class Ahead:
    """A build started ahead, handed to the build step."""

    build_id: str
    digest: str  # of the files it builds
    task: asyncio.Task[Build]


class BuildAhead:
    """The turn's build ahead, if any, and the ones it superseded until they are recorded."""

    def __init__(
        self,
        stages: PreviewStages,
        workspace: Workspace,
        app: App,
        quiet: float | None = None,
    ) -> None:
        self.stages, self.workspace, self.app = stages, workspace, app
        self.quiet = QUIET_SECONDS if quiet is None else quiet  # read now: tests may set it
        self._ahead: Ahead | None = None
        self._waiting: asyncio.Task[None] | None = None  # a start, once the files are quiet
        self._settling: set[asyncio.Task[None]] = set()
        self.started = self.superseded = 0

    async def start(self) -> None:
        """The files changed and the change is committed: build them once they have been
        quiet for a moment (superseding the build ahead of an earlier change); returns at
        once."""
        self.drop()
        self._waiting = asyncio.create_task(self._start_when_quiet())

    async def _start_when_quiet(self) -> None:
        await asyncio.sleep(self.quiet)
        source = await asyncio.to_thread(snapshot, self.workspace, self.app.id)
        build_id = new_build_id()
        task = asyncio.create_task(self.stages.build_preview(self.app, build_id, source))
        self._ahead = Ahead(build_id, source.digest, task)
        self.started += 1
        self.stages.prepare_preview(self.app)  # for a build that may supersede this one

    async def take(self) -> Ahead | None:
        """The build ahead of the files as they are now, handed over for the round that is
        ending; None when there is none, it had not started yet (nothing was recorded), or
        the files changed since it started (then it is superseded)."""
        await self._stop_waiting()
        ahead = self._ahead
        if ahead is None:
            return None
        now = await asyncio.to_thread(snapshot, self.workspace, self.app.id)
        if now.digest != ahead.digest:
            log.warning(
                "build ahead %s of app=%s is stale: built afresh", ahead.build_id, self.app.id
            )
            self.drop()
            return None
        self._ahead = None
        return ahead

    async def _stop_waiting(self) -> None:
        """A start still waiting (for quiet files, or for its snapshot) is called off; one
        that started its build is done, and that build is the build ahead."""
        waiting, self._waiting = self._waiting, None
        if waiting is None or waiting.done():
            return
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiting

    def drop(self) -> None:
        """The build ahead will not be shown: stop it and record it superseded (a start
        still waiting is called off)."""
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return
        ahead.task.cancel()
        self.superseded += 1
        settle = asyncio.create_task(self._supersede(ahead))
        self._settling.add(settle)
        settle.add_done_callback(self._settling.discard)

    async def _supersede(self, ahead: Ahead) -> None:
        with contextlib.suppress(BaseException):  # stopped, failed or built: all the same now
            await ahead.task
        try:
            await self.stages.supersede_preview(self.app, ahead.build_id)
        except Exception as exc:
            log.error(
                "could not record build %s of app=%s as superseded: %s",
                ahead.build_id,
                self.app.id,
                type(exc).__name__,
            )

    async def close(self) -> None:
        """The turn ends: a build still ahead was never adopted (the turn failed or stopped
        before its round ended) and is superseded; wait until every superseded build is
        recorded (bounded)."""
        self.drop()
        if not self._settling:
            return
        _, pending = await asyncio.wait(set(self._settling), timeout=SETTLE_SECONDS)
        for task in pending:
            log.error("a superseded build of app=%s was not recorded in time", self.app.id)
            task.cancel()
