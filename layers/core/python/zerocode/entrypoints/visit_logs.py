"""Visits counted from CloudFront's logs (issue 44, point 4, on AWS): the sites
distribution writes its standard logs to the visit logs bucket, and each new file invokes
``functions/visit_logs`` with EventBridge's "Object Created" event naming it. Each file is
read, its page views of published sites counted (``publishing/visit_logs.py``,
``publishing/visits.py``) into the visits table, and deleted; the bucket's lifecycle deletes
within a day any file a failure left (docs/operations.md, "Analytics on AWS").

A failure raises, and the event is retried (EventBridge, then Lambda); a file counted and
deleted before (an event may come twice) reads as empty. A retry after a failure midway may
count that file's views again (its visitors not: each is counted once a day).
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import unquote_plus

from zerocode.publishing.visit_logs import VisitLogs

log = logging.getLogger(__name__)


def handle(event: dict[str, Any], logs: VisitLogs) -> dict[str, Any]:
    files = views = 0
    for bucket, key in log_files(event):
        views += logs.count_file(bucket, key)
        files += 1
    log.info("visit logs: %d file(s), %d page view(s) counted", files, views)
    return {"files": files, "views": views}


def log_files(event: dict[str, Any]) -> list[tuple[str, str]]:
    """The files an event names: EventBridge's "Object Created" (what the stack sends: its
    key as it is) or S3's own notification (its records' keys URL-encoded)."""
    found: list[tuple[str, str]] = []
    detail = event.get("detail")
    if isinstance(detail, dict):
        bucket = (detail.get("bucket") or {}).get("name")
        key = (detail.get("object") or {}).get("key")
        if bucket and key:
            found.append((bucket, key))
    for record in event.get("Records") or []:
        s3 = record.get("s3") or {}
        bucket = (s3.get("bucket") or {}).get("name")
        key = (s3.get("object") or {}).get("key")
        if bucket and key:
            found.append((bucket, unquote_plus(key)))
    return found
