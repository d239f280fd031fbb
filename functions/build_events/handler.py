"""Lambda entry point: EventBridge "CodeBuild Build State Change" →
zerocode.entrypoints.build_events."""

from __future__ import annotations

import functools
from typing import Any

from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints import build_events
from zerocode.observability import configure_logging
from zerocode.publishing.build_signals import BuildSignals
from zerocode.publishing.service import Publishing


@functools.cache
def _publishing() -> Publishing:
    """Built once per container, reused across invocations: publishing alone (no Cognito,
    no model key, no memory)."""
    configure_logging()
    return wiring.publishing(Settings())


@functools.cache
def _signals() -> BuildSignals | None:
    """Where a run's end is told to the turn waiting for it (one client per container)."""
    return wiring.build_signals(Settings())


def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    return build_events.handle(_publishing(), event, _signals())
