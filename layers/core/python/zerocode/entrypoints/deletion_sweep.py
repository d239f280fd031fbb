"""The pending-deletion sweep (M8, docs/invariants.md): finish deleting the data of apps
whose deletion failed midway.

Locally ``zerocode serve`` sweeps at start and every five minutes; on AWS
``functions/deletion_sweep`` runs this on a schedule, with only the stores an app's data
lives in (``wiring.deletion_sweep``: no accounts, no model key).
"""

from __future__ import annotations

import logging

from zerocode.apps.deletion import DeletionSweep

log = logging.getLogger(__name__)


def handle(sweep: DeletionSweep) -> dict[str, int]:
    finished = sweep.run()
    left = len(sweep.deletions.pending())
    if finished or left:
        log.info("deletion sweep: %d finished, %d still pending", finished, left)
    return {"finished": finished, "pending": left}
