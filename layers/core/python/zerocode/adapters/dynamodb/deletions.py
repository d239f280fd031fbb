"""The DynamoDB PendingDeletions: apps whose data is still being deleted."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import ensure_table


def create_deletions_table(client: Any, name: str) -> None:
    ensure_table(client, name, "app_id", {"app_id": "S"})


class DynamoPendingDeletions:
    """Apps whose data is still being deleted: one item each, in a table of their own.

    The table holds only deletions in progress (normally none, a few after an outage), so
    ``pending`` scans it and sorts by age; a Scan over an almost empty table costs almost
    nothing, and no index is needed for a list this short.
    """

    def __init__(self, client: Any, table: str, now: Callable[[], float] = time.time) -> None:
        self.client, self.table, self.now = client, table, now

    def add(self, app_id: str) -> None:
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "app_id": {"S": app_id},
                    "since": {"N": repr(float(self.now()))},
                    "attempts": {"N": "0"},
                },
                ConditionExpression="attribute_not_exists(app_id)",
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise  # already pending: keep its age and attempts

    def done(self, app_id: str) -> None:
        self.client.delete_item(TableName=self.table, Key={"app_id": {"S": app_id}})

    def failed(self, app_id: str, error: str) -> None:
        try:
            self.client.update_item(
                TableName=self.table,
                Key={"app_id": {"S": app_id}},
                UpdateExpression="ADD attempts :one SET last_error = :e",
                ConditionExpression="attribute_exists(app_id)",
                ExpressionAttributeValues={":one": {"N": "1"}, ":e": {"S": error[:500]}},
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise  # finished by another process meanwhile: nothing to count

    def pending(self, limit: int = 50) -> list[str]:
        found: list[tuple[float, str]] = []
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "ConsistentRead": True,
            "ProjectionExpression": "app_id, since",
        }
        while True:
            page = self.client.scan(**kwargs)
            found += [(float(i["since"]["N"]), i["app_id"]["S"]) for i in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                break
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return [app_id for _, app_id in sorted(found)[:limit]]
