"""The DynamoDB StepJournal: one item per app in the leases table (key ``step:{app}``).

It shares the leases table because both are small, per-app and short-lived; the TTL sweeps
records of apps whose turns ended long ago.
"""

from __future__ import annotations

import time
from typing import Any

from zerocode.engine.journal import PendingStep

KEEP_SECONDS = 7 * 24 * 3600


class DynamoJournal:
    def __init__(self, client: Any, table: str) -> None:
        self.client, self.table = client, table

    def write(self, app_id: str, step: PendingStep) -> None:
        self.client.put_item(
            TableName=self.table,
            Item={
                "key": {"S": f"step:{app_id}"},
                "step": {"S": step.encode()},
                "expires_at": {"N": str(int(time.time()) + KEEP_SECONDS)},
            },
        )

    def read(self, app_id: str) -> PendingStep | None:
        got = self.client.get_item(
            TableName=self.table, Key={"key": {"S": f"step:{app_id}"}}, ConsistentRead=True
        )
        item = got.get("Item")
        return PendingStep.decode(item["step"]["S"]) if item and "step" in item else None

    def clear(self, app_id: str) -> None:
        self.client.delete_item(TableName=self.table, Key={"key": {"S": f"step:{app_id}"}})
