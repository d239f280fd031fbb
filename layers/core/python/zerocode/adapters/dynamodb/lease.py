"""The DynamoDB Lease: one item per key, taken by a conditional put.

A lease is one item per key; taking and giving it back are single conditional writes, so
two Lambda containers can never both believe they hold it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import ensure_table


def create_leases_table(client: Any, name: str) -> None:
    """TTL only sweeps dead leases; correctness comes from the condition on ``expires_at``."""
    ensure_table(client, name, "key", {"key": "S"}, ttl_attribute="expires_at")


class DynamoLease:
    def __init__(self, client: Any, table: str, now: Callable[[], float] = time.time) -> None:
        self.client, self.table, self.now = client, table, now

    def acquire(self, key: str, holder: str, ttl_seconds: float) -> bool:
        """One conditional put: free, ours (renew) or expired. Expired means ``now`` has
        reached ``expires_at``, as in SqliteLease."""
        now = self.now()
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "key": {"S": key},
                    "holder": {"S": holder},
                    "expires_at": {"N": repr(float(now + ttl_seconds))},
                },
                ConditionExpression="attribute_not_exists(#k) OR #h = :h OR #e <= :now",
                ExpressionAttributeNames={"#k": "key", "#h": "holder", "#e": "expires_at"},
                ExpressionAttributeValues={":h": {"S": holder}, ":now": {"N": repr(float(now))}},
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def release(self, key: str, holder: str) -> None:
        try:
            self.client.delete_item(
                TableName=self.table,
                Key={"key": {"S": key}},
                ConditionExpression="#h = :h",
                ExpressionAttributeNames={"#h": "holder"},
                ExpressionAttributeValues={":h": {"S": holder}},
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise  # a failed condition means someone took it over: not ours to free

    def held(self, key: str) -> bool:
        item = self.client.get_item(
            TableName=self.table, Key={"key": {"S": key}}, ConsistentRead=True
        ).get("Item")
        return item is not None and float(item["expires_at"]["N"]) > self.now()
