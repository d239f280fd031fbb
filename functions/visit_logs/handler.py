"""Lambda entry point: a new CloudFront log file in the visit logs bucket (an S3 event) →
zerocode.entrypoints.visit_logs."""

from __future__ import annotations

import functools
from typing import Any

from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints import visit_logs
from zerocode.observability import configure_logging
from zerocode.publishing.visit_logs import VisitLogs


@functools.cache
def _logs() -> VisitLogs:
    """Built once per container: the log bucket, the visits table and the pointer table,
    nothing else (no Cognito, no model key, no other bucket)."""
    configure_logging()
    return wiring.visit_logs(Settings())


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    return visit_logs.handle(event, _logs())
