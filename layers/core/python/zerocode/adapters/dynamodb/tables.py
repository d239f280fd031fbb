"""DynamoDB tables: the typed item form, table creation and the queries the stores share.

Every per-app table is one partition per app (partition key ``app_id``); reads query the
newest items of one partition with a limit, never a Scan.
"""

from __future__ import annotations

import time
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.errors import ZerocodeError

Item = dict[str, dict[str, Any]]  # DynamoDB's typed form: {"seq": {"N": "3"}, ...}

# DynamoDB items are capped at 400 KB, names and all.
ITEM_MAX = 400 * 1024


def create_partition_table(client: Any, name: str, sort_key: str, sort_type: str) -> None:
    """A per-app table: partition key ``app_id``, sort key ``sort_key``, TTL on ``expires_at``."""
    ensure_table(
        client,
        name,
        "app_id",
        {"app_id": "S", sort_key: sort_type},
        range_key=sort_key,
        ttl_attribute="expires_at",
    )


def ensure_table(
    client: Any,
    name: str,
    hash_key: str,
    attributes: dict[str, str],
    *,
    gsis: list[dict[str, Any]] | None = None,
    range_key: str | None = None,
    ttl_attribute: str | None = None,
) -> None:
    """Create the table unless it exists (deploys and local starts may race), then wait."""
    params: dict[str, Any] = {
        "TableName": name,
        "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [
            {"AttributeName": k, "AttributeType": t} for k, t in attributes.items()
        ],
        "KeySchema": [{"AttributeName": hash_key, "KeyType": "HASH"}],
    }
    if range_key is not None:
        params["KeySchema"].append({"AttributeName": range_key, "KeyType": "RANGE"})
    if gsis:
        params["GlobalSecondaryIndexes"] = gsis
    try:
        client.create_table(**params)
    except ClientError as exc:
        if error_code(exc) != "ResourceInUseException":
            raise
    client.get_waiter("table_exists").wait(TableName=name)
    if ttl_attribute is None:
        return
    ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        client.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl_attribute},
        )


def app_key(app_id: str, sort_key: str, value: dict[str, str]) -> Item:
    return {"app_id": {"S": app_id}, sort_key: value}


def item_size(item: Item) -> int:
    """DynamoDB's item size, near enough: attribute names plus values (numbers as text)."""
    size = 0
    for name, value in item.items():
        ((kind, data),) = value.items()
        size += len(name.encode()) + (len(data) if kind == "B" else len(str(data).encode()))
    return size


def query_partition(client: Any, table: str, app_id: str, **params: Any) -> dict[str, Any]:
    """One Query page of an app's partition, newest first unless told otherwise."""
    params.setdefault("KeyConditionExpression", "#app = :a")
    params.setdefault("ExpressionAttributeValues", {":a": {"S": app_id}})
    params["ExpressionAttributeNames"] = {
        "#app": "app_id",
        **params.get("ExpressionAttributeNames", {}),
    }
    params.setdefault("ScanIndexForward", False)
    result: dict[str, Any] = client.query(TableName=table, ConsistentRead=True, **params)
    return result


def query_newest(client: Any, table: str, app_id: str, limit: int, **params: Any) -> list[Item]:
    """The newest ``limit`` items. A 1 MB response page can stop short of ``limit``; only
    then is the next page read, and only for the items still missing."""
    items: list[Item] = []
    while len(items) < limit:
        page = query_partition(client, table, app_id, Limit=limit - len(items), **params)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            break
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
    return items


def delete_partition(client: Any, table: str, app_id: str, sort_key: str) -> int:
    """Delete every item of one app, reading keys only, 25 deletes per batch."""
    deleted = 0
    params: dict[str, Any] = {}
    while True:
        page = query_partition(
            client,
            table,
            app_id,
            ProjectionExpression="#app, #sk",
            ExpressionAttributeNames={"#sk": sort_key},
            **params,
        )
        keys = page["Items"]
        for start in range(0, len(keys), 25):
            batch_delete(client, table, keys[start : start + 25])
        deleted += len(keys)
        if "LastEvaluatedKey" not in page:
            return deleted
        params = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def batch_delete(client: Any, table: str, keys: list[Item], attempts: int = 8) -> None:
    requests = [{"DeleteRequest": {"Key": key}} for key in keys]
    for attempt in range(attempts):
        unprocessed = client.batch_write_item(RequestItems={table: requests}).get(
            "UnprocessedItems", {}
        )
        requests = unprocessed.get(table, [])
        if not requests:
            return
        time.sleep(min(0.05 * 2**attempt, 2.0))  # throttled: back off as AWS advises
    raise ZerocodeError(f"DynamoDB kept {len(requests)} deletes from {table} unprocessed")
