"""The local build sweep: preview outputs nobody needs leave the disk (issue 29, point 4).

Every turn that changes files makes a preview build, and locally each one's output stayed in
``builds/{appId}/{buildId}/`` for ever, superseded and failed ones too, though only the
newest is ever shown. On AWS the builds bucket's lifecycle rule expires preview outputs
unless a preview shows them, and keeps every deploy build's (docs/operations.md, "Preview
outputs expire"). This sweep is the same rule on one machine, run by the server (hourly,
and a minute after it starts). An output is **kept** when

* a pointer names it: the site serves it or the preview shows it;
* it is a deploy build that succeeded: a rollback may name any of them (rollback takes
  successful deploy builds only), as on AWS, where deploy outputs never expire;
* it is the app's newest successful preview build: what the preview shows, or is about to
  show (``Publishing.preview_state`` and ``restore_preview`` name it), or one that succeeded
  after the sweep read which that was;
* its build is queued or running, or was asked for less than ``keep_seconds`` ago (a build
  that finished but is not shown yet, one started ahead that its turn may still adopt: the
  default, an hour, is longer than any turn);
* its build's record cannot be read now (the next sweep decides).

Everything else goes: superseded, failed and older preview builds, a deploy build's output
whose build failed, the half-written ``.tmp-*`` directory of a build a crash interrupted,
and an output whose build has no record (an app deleted midway). A removed build's record
says so first (its output cleared, a line in its log tail), so no record names an output
that is gone: the sites server serves only what a pointer names, and no pointer names a
removed build. A failure to remove one output is logged and the sweep goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from zerocode.publishing.builds import (
    LOG_TAIL_CHARS,
    Build,
    BuildPurpose,
    BuildState,
    BuildStore,
    built_at,
)
from zerocode.publishing.pointers import PointerStore, SiteTarget

log = logging.getLogger(__name__)

HOUR = 3600.0
REMOVED = "output removed by the build sweep: no preview shows it and no rollback can name it"


@dataclass(frozen=True)
class Output:
    """A directory under ``builds/{app_id}/``: the build's output (``name`` is the build id)
    or a half-written one (``.tmp-{build_id}-…``, left by a build that was interrupted)."""

    app_id: str
    build_id: str
    name: str

    @property
    def partial(self) -> bool:
        return self.name != self.build_id


class Outputs(Protocol):
    """The build outputs on this machine's disk (adapters/local/outputs.py)."""

    def present(self) -> Iterable[Output]: ...

    def remove(self, output: Output) -> int:
        """Remove it (idempotent); the bytes it held."""
        ...


@dataclass(frozen=True, kw_only=True)
class OutputSweepReport:
    seen: int
    removed: int
    kept: int
    failed: int  # outputs it could not read the record of, or remove (logged; kept till next)
    bytes_freed: int

    def as_dict(self) -> dict[str, int]:
        return {
            "seen": self.seen,
            "removed": self.removed,
            "kept": self.kept,
            "failed": self.failed,
            "bytesFreed": self.bytes_freed,
        }


@dataclass
class OutputSweep:
    outputs: Outputs
    builds: BuildStore
    pointers: PointerStore
    keep_seconds: float = HOUR

    def run(self, now: float) -> OutputSweepReport:
        named = {target for _, target in self.pointers.pointers("") if target is not None}
        newest: dict[str, str | None] = {}  # app id → its newest successful preview build
        seen = removed = failed = freed = 0
        for output in list(self.outputs.present()):
            seen += 1
            try:
                build = self.builds.get(output.app_id, output.build_id)
                if output.app_id not in newest:
                    newest[output.app_id] = self._newest_preview(output.app_id)
                if self._needed(output, build, named, newest[output.app_id], now):
                    continue
                if build is not None and build.output is not None:
                    self.builds.put(_removed(build))  # the record first: it never lies
                freed += self.outputs.remove(output)
                removed += 1
            except Exception:
                failed += 1
                log.exception(
                    "the build sweep could not remove an output",
                    extra={"app_id": output.app_id, "build_id": output.build_id},
                )
        if removed or failed:
            log.info(
                "build sweep: %d output(s) removed, %d bytes freed, %d failed",
                removed,
                freed,
                failed,
            )
        return OutputSweepReport(
            seen=seen,
            removed=removed,
            kept=seen - removed - failed,
            failed=failed,
            bytes_freed=freed,
        )

    def _needed(
        self,
        output: Output,
        build: Build | None,
        named: set[SiteTarget],
        newest_preview: str | None,
        now: float,
    ) -> bool:
        made = built_at(output.build_id)
        if made is None or now - made < self.keep_seconds:
            return True  # young (or a name it cannot date): whatever it is, it stays
        if build is None:
            return False  # no record: nothing can serve or name it
        if not build.state.finished:
            return True  # still being built or published
        if output.partial:
            return False  # the build is over; its half-written output never will be
        if SiteTarget(output.app_id, output.build_id) in named:
            return True
        if build.state is not BuildState.SUCCEEDED:
            return False
        if build.purpose is BuildPurpose.DEPLOY:
            return True
        # The newest successful preview, or one that succeeded since the sweep looked (its
        # preview may be flipping to it now).
        return newest_preview is None or output.build_id >= newest_preview

    def _newest_preview(self, app_id: str) -> str | None:
        cursor: str | None = None
        while True:
            page = self.builds.list(app_id, cursor, limit=50, purpose=BuildPurpose.PREVIEW)
            found = next((b for b in page.builds if b.state is BuildState.SUCCEEDED), None)
            if found is not None or page.next_cursor is None:
                return found.id if found is not None else None
            cursor = page.next_cursor


def _removed(build: Build) -> Build:
    tail = f"{build.log_tail}\n{REMOVED}" if build.log_tail else REMOVED
    return replace(build, output=None, log_tail=tail[-LOG_TAIL_CHARS:])
