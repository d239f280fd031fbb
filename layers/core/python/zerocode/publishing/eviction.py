"""The preview sweep: stale preview pointers leave the site pointer store.

On AWS the pointers live in one CloudFront KeyValueStore, whose 5 MB hold about 37,000 apps
at a site and a preview pointer each (docs/operations.md, "Site pointers: the
KeyValueStore's ceiling"). A CloudFront Function reads one store only, so the store cannot
be sharded under the router; instead previews nobody is working on give their room back.
A preview pointer goes when

* its build is older than ``idle_seconds`` (a build id carries the time it was asked for,
  and every turn that changes files makes a new preview build, so this is "no change for
  that long");
* or its app is gone, or the app has another preview key now (orphans a failed deletion
  or a key renewal left behind);
* or its value names no build.

Sites are never touched: a published site stays up however old it is. A removed preview
comes back when its owner opens the app (``Publishing.restore_preview``, one write naming the
newest successful preview build, whose output is immutable and still there, unless it expires
within ``RESTORE_MARGIN_DAYS``) or with the next turn's build. Each removal is conditional
on the pointer still naming what the sweep saw, so a turn that flips it meanwhile keeps its
new preview.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from zerocode.apps.records import AppStore
from zerocode.publishing.builds import built_at
from zerocode.publishing.pointers import PREVIEW_PREFIX, PointerStore, SiteTarget

log = logging.getLogger(__name__)

DAY = 86_400.0
# A preview build's output expires (AWS: tagged, a lifecycle rule; docs/operations.md,
# "Preview outputs expire"). Opening an app puts its pointer back only while the build is
# this many days short of that; the sweep removes it again within a day, so even a week of
# failed sweeps leaves no pointer naming an expired build.
RESTORE_MARGIN_DAYS = 7


@dataclass(frozen=True, kw_only=True)
class SweepReport:
    previews: int  # preview pointers seen
    idle: int  # removed: their build is older than the idle time
    orphaned: int  # removed: no such app, another key, or no build named
    kept: int

    def as_dict(self) -> dict[str, int]:
        return {
            "previews": self.previews,
            "idle": self.idle,
            "orphaned": self.orphaned,
            "kept": self.kept,
        }


@dataclass
class PreviewSweep:
    store: PointerStore
    apps: AppStore
    idle_seconds: float

    def run(self, now: float) -> SweepReport:
        seen = idle = orphaned = 0
        for pointer, target in list(self.store.pointers(PREVIEW_PREFIX)):
            seen += 1
            why = self._stale(pointer, target, now)
            if why is None:
                continue
            if self.store.remove_if(pointer, target):
                if why == "idle":
                    idle += 1
                else:
                    orphaned += 1
                log.info(
                    "preview pointer removed (%s)",
                    why,
                    extra={"app_id": target.app_id if target else None, "reason": why},
                )
        return SweepReport(previews=seen, idle=idle, orphaned=orphaned, kept=seen - idle - orphaned)

    def _stale(self, pointer: str, target: SiteTarget | None, now: float) -> str | None:
        if target is None:
            return "no build named"
        made = built_at(target.build_id)
        if made is not None and now - made > self.idle_seconds:
            return "idle"  # decided from the pointer alone: no app read
        app = self.apps.get(target.app_id)
        if app is None:
            return "no such app"
        if PREVIEW_PREFIX + app.preview_key != pointer:
            return "not the app's preview key"
        return None
