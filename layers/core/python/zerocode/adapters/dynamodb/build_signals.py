"""Build signals in DynamoDB: one item per finished run in the leases table, kept an hour.

The table every profile has and both functions may write (build_events tells, the API
hears), read strongly consistent so a waiter hears a signal as soon as it is told.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

PREFIX = "build-done#"
KEEP_SECONDS = 3600  # longer than any build (15 minutes on Lambda compute) and its waiter


class DynamoBuildSignals:
    """:class:`zerocode.publishing.build_signals.BuildSignals` in the leases table."""

    def __init__(self, client: Any, table: str, now: Callable[[], float] = time.time) -> None:
        self.client, self.table, self.now = client, table, now

    def tell(self, runner_id: str, status: str) -> None:
        self.client.put_item(
            TableName=self.table,
            Item={
                "key": {"S": PREFIX + runner_id},
                "status": {"S": status},
                "expires_at": {"N": repr(float(self.now() + KEEP_SECONDS))},
            },
        )

    def heard(self, runner_id: str) -> str | None:
        item = self.client.get_item(
            TableName=self.table, Key={"key": {"S": PREFIX + runner_id}}, ConsistentRead=True
        ).get("Item")
        return str(item["status"]["S"]) if item and "status" in item else None
