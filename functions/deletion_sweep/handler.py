"""Lambda entry point: a scheduled rule → zerocode.entrypoints.deletion_sweep."""

from __future__ import annotations

import functools
from typing import Any

from zerocode.apps.deletion import DeletionSweep
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints import deletion_sweep
from zerocode.observability import configure_logging


@functools.cache
def _sweep() -> DeletionSweep:
    """Built once per container, reused across invocations: only the stores an app's data
    lives in (no Cognito, no model key)."""
    configure_logging()
    return wiring.deletion_sweep(Settings())


def handler(event: dict[str, Any], context: Any) -> dict[str, int]:
    return deletion_sweep.handle(_sweep())
