"""The DynamoDB BuildModels (zerocode/data/in_force.py): each build's data model file in
the app-data table, one partition per app (``{app_id}#builds``), keyed by build id.
A model file is at most 256 KB, well inside an item's 400 KB."""

from __future__ import annotations

from typing import Any

from zerocode.adapters.dynamodb.app_data import builds_scope, clear_scope, key


class DynamoBuildModels:
    def __init__(self, client: Any, table: str) -> None:
        self.client, self.table = client, table

    def put(self, app_id: str, build_id: str, data: bytes) -> None:
        self.client.put_item(
            TableName=self.table,
            Item=key(builds_scope(app_id), f"b#{build_id}") | {"data": {"B": data}},
        )

    def get(self, app_id: str, build_id: str) -> bytes | None:
        found = self.client.get_item(
            TableName=self.table,
            Key=key(builds_scope(app_id), f"b#{build_id}"),
            ConsistentRead=True,
        ).get("Item")
        return bytes(found["data"]["B"]) if found else None

    def delete_app(self, app_id: str) -> int:
        return clear_scope(self.client, self.table, builds_scope(app_id), ("b#",))
