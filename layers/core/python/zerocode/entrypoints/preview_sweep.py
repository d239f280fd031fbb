"""The preview sweep (``zerocode.publishing.eviction``): stale preview pointers leave the
site pointer store, so the KeyValueStore's 5 MB go to sites and to previews in use.

On AWS ``functions/preview_sweep`` runs it once a day with the apps table (read) and the
KeyValueStore (list, read, delete), nothing else (``wiring.preview_sweep``). It writes the
store's size as the EMF metrics ``SitePointerBytes`` and ``SitePointers`` (namespace
``zerocode``), which an alarm watches at 80 % of the ceiling. Locally the pointers live in
SQLite, which has no ceiling, and nothing sweeps them.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from zerocode.observability import metrics
from zerocode.publishing.eviction import PreviewSweep

log = logging.getLogger(__name__)


def handle(sweep: PreviewSweep, now: float | None = None) -> dict[str, Any]:
    report = sweep.run(time.time() if now is None else now).as_dict()
    size = getattr(sweep.store, "size", None)
    if callable(size):
        held = size()
        report |= {"pointers": held.items, "bytes": held.bytes}
        metrics.add_metric(name="SitePointerBytes", unit=MetricUnit.Bytes, value=held.bytes)
        metrics.add_metric(name="SitePointers", unit=MetricUnit.Count, value=held.items)
        metrics.flush_metrics()
    log.info("preview sweep: %s", report)
    return report
