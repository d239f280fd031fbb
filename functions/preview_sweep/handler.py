"""Lambda entry point: a daily scheduled rule → zerocode.entrypoints.preview_sweep."""

from __future__ import annotations

import functools
from typing import Any

from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints import preview_sweep
from zerocode.observability import configure_logging
from zerocode.publishing.eviction import PreviewSweep


@functools.cache
def _sweep() -> PreviewSweep:
    """Built once per container: the apps table and the site pointer store, nothing else
    (no Cognito, no model key, no buckets)."""
    configure_logging()
    return wiring.preview_sweep(Settings())


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return preview_sweep.handle(_sweep())
