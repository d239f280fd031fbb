"""CloudFront's log files in S3 (``publishing/visit_logs.py``'s LogObjects): read as text
lines, decompressed as they stream (a file is gzip'd, a few KB to a few MB), then deleted.

A file already gone (a duplicate notification of one counted and deleted before: S3's
notifications come at least once) reads as no lines, and deleting it again is no error.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code

MISSING = ("NoSuchKey", "404", "NotFound")


class S3VisitLogs:
    def __init__(self, client: Any) -> None:
        self.client = client

    def lines(self, bucket: str, key: str) -> Iterator[str]:
        try:
            body = self.client.get_object(Bucket=bucket, Key=key)["Body"]
        except ClientError as exc:
            if error_code(exc) in MISSING:
                return
            raise
        try:
            raw: Any = (
                gzip.GzipFile(fileobj=body) if key.endswith(".gz") else io.BytesIO(body.read())
            )
            yield from io.TextIOWrapper(raw, encoding="utf-8", errors="replace")
        finally:
            body.close()

    def delete(self, bucket: str, key: str) -> None:
        self.client.delete_object(Bucket=bucket, Key=key)
