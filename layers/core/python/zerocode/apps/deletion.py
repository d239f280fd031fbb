"""Deleting an app (M8): users lose sight of it first, then its data goes, and a deletion
that fails midway is remembered and retried, so nothing is left behind for long and
nothing left behind is reachable."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)


class PendingDeletions(Protocol):
    def add(self, app_id: str) -> None: ...

    def done(self, app_id: str) -> None: ...

    def failed(self, app_id: str, error: str) -> None:
        """Count a failed attempt; the app stays pending."""
        ...

    def pending(self, limit: int = 50) -> list[str]:
        """Apps whose data is still being deleted, oldest first."""
        ...


def purge(
    app_id: str, steps: Sequence[Callable[[str], object]], deletions: PendingDeletions
) -> bool:
    """Run every idempotent delete step; True when all succeeded and the app is forgotten."""
    try:
        for step in steps:
            step(app_id)
    except Exception as exc:  # any store may fail; the deletion is retried later
        log.error(
            "deleting the data of app %s failed, will retry: %s",
            app_id,
            exc,
            extra={"app_id": app_id},
        )
        deletions.failed(app_id, str(exc)[:500])
        return False
    deletions.done(app_id)
    return True


@dataclass(frozen=True)
class DeletionSweep:
    """Finishes deletions that failed midway: the server runs it at start and every few
    minutes, ``functions/deletion_sweep`` on a schedule on AWS."""

    deletions: PendingDeletions
    steps: Sequence[Callable[[str], object]]

    def run(self) -> int:
        """How many pending deletions completed."""
        return sum(purge(app_id, self.steps, self.deletions) for app_id in self.deletions.pending())
