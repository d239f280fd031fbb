"""Lambda entry point: EventBridge "CodeBuild Build State Change" →
zerocode.entrypoints.build_events."""

from __future__ import annotations

import functools
from typing import Any

from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints import build_events
from zerocode.observability import configure_logging


@functools.cache
def _platform() -> Platform:
    """Built once per container, reused across invocations."""
    configure_logging()
    return wiring.platform(Settings())


def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    return build_events.handle(_platform().publishing, event)
