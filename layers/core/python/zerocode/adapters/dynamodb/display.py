"""The DynamoDB DisplayHistoryStore: one partition per app, sort key the entry id."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from zerocode.adapters.dynamodb.tables import (
    ITEM_MAX,
    Item,
    create_partition_table,
    delete_partition,
    item_size,
    query_newest,
)
from zerocode.errors import PayloadTooLarge
from zerocode.memory.display import (
    DisplayEntry,
    DisplayPage,
    DisplayRole,
    DisplayStatus,
    KeyClock,
    check_page,
)
from zerocode.memory.transcript import (
    expires_at,
)


def create_display_table(client: Any, name: str) -> None:
    create_partition_table(client, name, "id", "S")


class DynamoDisplayHistoryStore:
    def __init__(
        self,
        client: Any,
        table: str,
        *,
        retention_days: int = 0,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.client, self.table, self.retention_days, self.now = client, table, retention_days, now
        self.keys = KeyClock()

    def append(
        self,
        app_id: str,
        role: DisplayRole,
        content: str,
        *,
        status: DisplayStatus = DisplayStatus.OK,
        turn: int = 0,
        element: dict[str, Any] | None = None,
        images: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        mode: str | None = None,
    ) -> DisplayEntry:
        key = self.keys.next_key()
        item: Item = {
            "app_id": {"S": app_id},
            "id": {"S": key},
            "role": {"S": role.value},
            "content": {"S": content},
            "status": {"S": status.value},
            "turn": {"N": str(turn)},
        }
        if element is not None:
            item["element"] = {"S": json.dumps(element)}
        if images:
            item["images"] = {"S": json.dumps(images)}
        if usage:
            item["usage"] = {"S": json.dumps(usage)}
        if mode:
            item["mode"] = {"S": mode}
        expires = expires_at(self.retention_days, self.now())
        if expires is not None:
            item["expires_at"] = {"N": str(expires)}
        if item_size(item) > ITEM_MAX:
            raise PayloadTooLarge(
                f"display message of app {app_id} is over DynamoDB's "
                f"{ITEM_MAX // 1024} KB item limit"
            )
        self.client.put_item(TableName=self.table, Item=item)
        return DisplayEntry.keyed(
            key,
            role=role,
            content=content,
            status=status,
            turn=turn,
            element=element,
            images=images,
            usage=usage,
            mode=mode,
        )

    def page(self, app_id: str, before: str | None = None, limit: int = 20) -> DisplayPage:
        check_page(before, limit)
        extra: dict[str, Any] = {}
        if before is not None:
            extra = {
                "KeyConditionExpression": "#app = :a AND #id < :before",
                "ExpressionAttributeNames": {"#id": "id"},
                "ExpressionAttributeValues": {":a": {"S": app_id}, ":before": {"S": before}},
            }
        items = query_newest(self.client, self.table, app_id, limit + 1, **extra)
        entries = [
            DisplayEntry.keyed(
                i["id"]["S"],
                role=DisplayRole(i["role"]["S"]),
                content=i["content"]["S"],
                status=DisplayStatus(i["status"]["S"]),
                turn=int(i["turn"]["N"]),
                element=json.loads(i["element"]["S"]) if "element" in i else None,
                images=json.loads(i["images"]["S"]) if "images" in i else None,
                usage=json.loads(i["usage"]["S"]) if "usage" in i else None,
                mode=i["mode"]["S"] if "mode" in i else None,
            )
            for i in items[:limit]
        ]
        return DisplayPage(entries, entries[-1].id if len(items) > limit else None)

    def delete_app(self, app_id: str) -> int:
        return delete_partition(self.client, self.table, app_id, "id")
