"""Lambda entry point: EventBridge "CodeBuild Build State Change" → zerocode.build_events."""

from __future__ import annotations

import functools
from typing import Any

from zerocode import build_events, wiring
from zerocode.observability import configure_logging
from zerocode.platform import Platform
from zerocode.settings import Settings


@functools.cache
def _platform() -> Platform:
    """Built once per container, reused across invocations."""
    configure_logging()
    return wiring.platform(Settings())


def handler(event: dict[str, Any], context: Any) -> dict[str, str]:
    return build_events.handle(_platform().publishing, event)
