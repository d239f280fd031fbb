"""The S3 half of the AWS storage probe: one small object put into the workspaces bucket.

Every app's files, versions and message images are in that bucket, so a bucket that cannot
take a write (a missing bucket, a policy or key that refuses the API, throttling, no
answer) is storage that cannot take a change. The object is
``versions/.health/probe``: under the prefix the API already writes (no grant of its own),
and ``.health`` is no app id (ids hold no dot), so it can never be an app's.
"""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.apps.storage_health import StorageHealth

KEY = "versions/.health/probe"


class S3StorageProbe:
    def __init__(self, client: Any, bucket: str, key: str = KEY) -> None:
        self.client, self.bucket, self.key = client, bucket, key

    def check(self) -> StorageHealth:
        try:
            self.client.put_object(
                Bucket=self.bucket, Key=self.key, Body=repr(time.time()).encode()
            )
        except ClientError as exc:
            return self._problem(error_code(exc) or "ClientError")
        except BotoCoreError as exc:  # no answer at all (endpoint, connection, timeout)
            return self._problem(type(exc).__name__)
        return StorageHealth()

    def _problem(self, kind: str) -> StorageHealth:
        return StorageHealth((f"the S3 bucket {self.bucket} cannot take a write: {kind}",))
