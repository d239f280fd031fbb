"""The AWS storage probe: one item put into the leases table.

The leases table is the one every API container already writes (turn leases, rate-limit
logs without Redis), so the probe needs no permission of its own. Its item,
``health:probe``, is overwritten on each probe (at most once per
``ZEROCODE_HEALTH_PROBE_SECONDS`` per container) and expires by the table's TTL. There is
no free-space check: DynamoDB and S3 have no disk to fill; throttling, a missing table or
an unreachable endpoint is what "cannot take a write" means here.
"""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.apps.storage_health import StorageHealth

KEY = "health:probe"


class DynamoStorageProbe:
    def __init__(self, client: Any, table: str) -> None:
        self.client, self.table = client, table

    def check(self) -> StorageHealth:
        now = time.time()
        try:
            self.client.put_item(
                TableName=self.table,
                Item={"key": {"S": KEY}, "expires_at": {"N": repr(float(now + 3600))}},
            )
        except ClientError as exc:
            return self._problem(error_code(exc) or "ClientError")
        except BotoCoreError as exc:  # no answer at all (endpoint, connection, timeout)
            return self._problem(type(exc).__name__)
        return StorageHealth()

    def _problem(self, kind: str) -> StorageHealth:
        return StorageHealth((f"the DynamoDB table {self.table} cannot take a write: {kind}",))
