"""The site and preview pointers in DynamoDB: the source of truth at a million sites.

One item per pointer, partition key ``pointer`` (``site:{deployKey}`` /
``preview:{previewKey}``), with ``app_id`` and ``build_id`` (the build it serves),
``version`` (incremented by every write) and ``updated_at``. Publishing and rolling back
are one ``UpdateItem`` each (atomic: a reader sees the old build or the new one); the build
it names is already whole in the bucket. Every key is its own partition, so a million
pointers spread over the table's partitions and no write lands on a shared one.

Read at the edge by the Lambda@Edge router (``functions/edge_router/router.py``) with a
``GetItem`` on a cache miss, eventually consistent (half a read unit). ``pointers`` is a
Scan: the preview sweep needs it only for the KeyValueStore's 5 MB, which this table does
not have, so nothing on a hot path calls it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import ensure_table
from zerocode.publishing.pointers import SiteTarget
from zerocode.publishing.prerender import routes_value

KEY = "pointer"


def create_pointers_table(client: Any, name: str) -> None:
    ensure_table(client, name, KEY, {KEY: "S"})


class DynamoPointerStore:
    """The Publisher (and PointerStore) port over one DynamoDB table."""

    def __init__(self, client: Any, table: str, now: Callable[[], float] = time.time) -> None:
        self.client, self.table, self.now = client, table, now

    def point(self, pointer: str, target: SiteTarget) -> None:
        self._write(pointer, target)

    def put_routes(self, app_id: str, build_id: str, routes: list[str]) -> None:
        """A deploy's prerendered routes for the edge router (issue 44, point 3): the item
        ``routes:{appId}/{buildId}`` with ``routes``, as the KeyValueStore holds them
        (prerender.routes_value); no ``app_id``, so it is no pointer to anything that lists
        them. Written before the deploy is pointed at; never changed after."""
        value = routes_value(routes)
        if value:
            self.client.put_item(
                TableName=self.table,
                Item={
                    KEY: {"S": f"routes:{SiteTarget(app_id, build_id).encode()}"},
                    "routes": {"S": value},
                },
            )

    def point_if(self, pointer: str, target: SiteTarget, expected: SiteTarget | None) -> bool:
        """Flip ``pointer`` to ``target`` only while it still names ``expected`` (None: only
        while it does not exist): one conditional write. Whether it was written."""
        values: dict[str, Any] = {}
        if expected is None:
            condition = f"attribute_not_exists({KEY})"
        else:
            condition = "app_id = :ea AND build_id = :eb"
            values = {":ea": {"S": expected.app_id}, ":eb": {"S": expected.build_id}}
        try:
            self._write(pointer, target, ConditionExpression=condition, values=values)
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def drop_routes(self, app_id: str, build_id: str) -> None:
        """The build's routes item gone (its app is deleted); none is no error."""
        key = f"routes:{SiteTarget(app_id, build_id).encode()}"
        self.client.delete_item(TableName=self.table, Key={KEY: {"S": key}})

    def _write(
        self,
        pointer: str,
        target: SiteTarget,
        values: dict[str, Any] | None = None,
        **condition: str,
    ) -> None:
        self.client.update_item(
            TableName=self.table,
            Key={KEY: {"S": pointer}},
            UpdateExpression="SET app_id = :a, build_id = :b, updated_at = :t ADD version :one",
            ExpressionAttributeValues={
                ":a": {"S": target.app_id},
                ":b": {"S": target.build_id},
                ":t": {"N": repr(float(self.now()))},
                ":one": {"N": "1"},
                **(values or {}),
            },
            **condition,
        )

    def target(self, pointer: str) -> SiteTarget | None:
        item = self.client.get_item(
            TableName=self.table, Key={KEY: {"S": pointer}}, ConsistentRead=True
        ).get("Item")
        return _decoded(item) if item else None

    def version(self, pointer: str) -> int:
        """How many times the pointer was written (0: never, or removed)."""
        item = self.client.get_item(
            TableName=self.table, Key={KEY: {"S": pointer}}, ConsistentRead=True
        ).get("Item")
        return int(item["version"]["N"]) if item and "version" in item else 0

    def remove(self, pointer: str) -> None:
        self.client.delete_item(TableName=self.table, Key={KEY: {"S": pointer}})

    def pointers(self, prefix: str) -> Iterator[tuple[str, SiteTarget | None]]:
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            "FilterExpression": f"begins_with({KEY}, :p)",
            "ExpressionAttributeValues": {":p": {"S": prefix}},
        }
        while True:
            page = self.client.scan(**kwargs)
            for item in page.get("Items", []):
                yield str(item[KEY]["S"]), _decoded(item)
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def remove_if(self, pointer: str, expected: SiteTarget | None) -> bool:
        if expected is None:
            return False
        try:
            self.client.delete_item(
                TableName=self.table,
                Key={KEY: {"S": pointer}},
                ConditionExpression="app_id = :a AND build_id = :b",
                ExpressionAttributeValues={
                    ":a": {"S": expected.app_id},
                    ":b": {"S": expected.build_id},
                },
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True


def _decoded(item: dict[str, Any]) -> SiteTarget | None:
    try:
        return SiteTarget.decode(f"{item['app_id']['S']}/{item['build_id']['S']}")
    except (KeyError, ValueError):
        return None
