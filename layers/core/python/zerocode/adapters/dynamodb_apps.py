"""DynamoDB adapters for apps and leases: the serverless AppStore and Lease.

Apps live in one table keyed by ``id``. Two GSIs serve the other lookups: ``by_owner``
(sort key ``created_key``, so "newest first" is a descending Query, never a Scan) and
``by_preview_key`` (projects everything, so the sites origin answers with one Query).
GSI reads are eventually consistent: an app put a moment ago may be missing from the list
for a moment; ``get`` by id is strongly consistent.

A lease is one item per key; taking and giving it back are single conditional writes, so
two Lambda containers can never both believe they hold it.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.dynamodb import Item, _code
from zerocode.apps import App, AppPage, CodeGenType, check_limit
from zerocode.errors import InvalidInput

BY_OWNER = "by_owner"
BY_PREVIEW_KEY = "by_preview_key"

_STRINGS = ("id", "owner", "name", "init_prompt", "preview_key")
_OPTIONAL_STRINGS = ("deploy_key", "deploy_url", "cover")
# Zero-padded epoch seconds sort as text the way they sort as numbers (until year 2286).
_CREATED_KEY = re.compile(r"^\d{10}\.\d{6}#\S+$")


def create_apps_table(client: Any, name: str) -> None:
    _ensure_table(client, name, "id", {"id": "S", "owner": "S", "created_key": "S",
                                       "preview_key": "S"}, gsis=[
        {"IndexName": BY_OWNER,
         "KeySchema": [{"AttributeName": "owner", "KeyType": "HASH"},
                       {"AttributeName": "created_key", "KeyType": "RANGE"}],
         "Projection": {"ProjectionType": "ALL"}},
        # ALL, not KEYS_ONLY: a preview request is answered from the index alone.
        {"IndexName": BY_PREVIEW_KEY,
         "KeySchema": [{"AttributeName": "preview_key", "KeyType": "HASH"}],
         "Projection": {"ProjectionType": "ALL"}}])


def create_leases_table(client: Any, name: str) -> None:
    """TTL only sweeps dead leases; correctness comes from the condition on ``expires_at``."""
    _ensure_table(client, name, "key", {"key": "S"}, ttl_attribute="expires_at")


def _ensure_table(client: Any, name: str, hash_key: str, attributes: dict[str, str], *,
                  gsis: list[dict[str, Any]] | None = None,
                  ttl_attribute: str | None = None) -> None:
    """Create the table unless it exists (deploys and local starts may race), then wait."""
    params: dict[str, Any] = {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": k, "AttributeType": t}
                                 for k, t in attributes.items()],
        "KeySchema": [{"AttributeName": hash_key, "KeyType": "HASH"}]}
    if gsis:
        params["GlobalSecondaryIndexes"] = gsis
    try:
        client.create_table(**params)
    except ClientError as exc:
        if _code(exc) != "ResourceInUseException":
            raise
    client.get_waiter("table_exists").wait(TableName=name)
    if ttl_attribute is None:
        return
    ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        client.update_time_to_live(TableName=name, TimeToLiveSpecification={
            "Enabled": True, "AttributeName": ttl_attribute})


class DynamoAppStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client, self.table = client, table

    def put(self, app: App) -> None:
        self.client.put_item(TableName=self.table, Item=_item(app))

    def get(self, app_id: str) -> App | None:
        item = self.client.get_item(TableName=self.table, ConsistentRead=True,
                                    Key={"id": {"S": app_id}}).get("Item")
        return _app(item) if item else None

    def by_preview_key(self, preview_key: str) -> App | None:
        items = self.client.query(
            TableName=self.table, IndexName=BY_PREVIEW_KEY, Limit=1,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": "preview_key"},
            ExpressionAttributeValues={":pk": {"S": preview_key}})["Items"]
        return _app(items[0]) if items else None

    def list_by_owner(self, owner: str, cursor: str | None = None, limit: int = 20) -> AppPage:
        """Newest first. One extra item is read to learn whether another page exists."""
        check_limit(limit)
        condition, names, values = "#o = :o", {"#o": "owner"}, {":o": {"S": owner}}
        if cursor is not None:
            condition += " AND #ck < :ck"
            names["#ck"], values[":ck"] = "created_key", {"S": _decode_cursor(cursor)}
        params: dict[str, Any] = {
            "TableName": self.table, "IndexName": BY_OWNER, "ScanIndexForward": False,
            "KeyConditionExpression": condition, "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values}
        items: list[Item] = []
        while len(items) <= limit:  # a 1 MB response page can stop short of Limit
            page = self.client.query(Limit=limit + 1 - len(items), **params)
            items += page["Items"]
            if "LastEvaluatedKey" not in page:
                break
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        apps = [_app(i) for i in items[:limit]]
        more = len(items) > limit
        return AppPage(apps, _encode_cursor(items[limit - 1]["created_key"]["S"])
                       if more else None)

    def delete(self, app_id: str) -> bool:
        old = self.client.delete_item(TableName=self.table, Key={"id": {"S": app_id}},
                                      ReturnValues="ALL_OLD").get("Attributes")
        return bool(old)


def created_key(app: App) -> str:
    """GSI sort key: time first for order, the id after it so equal times never collide."""
    return f"{app.created_at:017.6f}#{app.id}"


def _item(app: App) -> Item:
    item: Item = {k: {"S": getattr(app, k)} for k in _STRINGS}
    item.update({k: {"S": v} for k in _OPTIONAL_STRINGS if (v := getattr(app, k)) is not None})
    item["code_gen_type"] = {"S": app.code_gen_type.value}
    item["priority"] = {"N": str(app.priority)}
    # repr() round-trips a float exactly; DynamoDB keeps up to 38 significant digits.
    item["created_at"] = {"N": repr(float(app.created_at))}
    item["updated_at"] = {"N": repr(float(app.updated_at))}
    item["created_key"] = {"S": created_key(app)}
    return item


def _app(item: Item) -> App:
    def optional(name: str) -> str | None:
        return str(item[name]["S"]) if name in item else None

    return App(
        id=item["id"]["S"], owner=item["owner"]["S"], name=item["name"]["S"],
        code_gen_type=CodeGenType(item["code_gen_type"]["S"]),
        init_prompt=item["init_prompt"]["S"], preview_key=item["preview_key"]["S"],
        deploy_key=optional("deploy_key"), deploy_url=optional("deploy_url"),
        cover=optional("cover"), priority=int(item["priority"]["N"]),
        created_at=float(item["created_at"]["N"]), updated_at=float(item["updated_at"]["N"]))


def _encode_cursor(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> str:
    try:
        key = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, binascii.Error) as exc:  # UnicodeDecodeError is a ValueError
        raise InvalidInput("cursor is not one returned by this API") from exc
    if not _CREATED_KEY.match(key):
        raise InvalidInput("cursor is not one returned by this API")
    return key


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
                Item={"key": {"S": key}, "holder": {"S": holder},
                      "expires_at": {"N": repr(float(now + ttl_seconds))}},
                ConditionExpression="attribute_not_exists(#k) OR #h = :h OR #e <= :now",
                ExpressionAttributeNames={"#k": "key", "#h": "holder", "#e": "expires_at"},
                ExpressionAttributeValues={":h": {"S": holder},
                                           ":now": {"N": repr(float(now))}})
        except ClientError as exc:
            if _code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def release(self, key: str, holder: str) -> None:
        try:
            self.client.delete_item(
                TableName=self.table, Key={"key": {"S": key}},
                ConditionExpression="#h = :h",
                ExpressionAttributeNames={"#h": "holder"},
                ExpressionAttributeValues={":h": {"S": holder}})
        except ClientError as exc:
            if _code(exc) != "ConditionalCheckFailedException":
                raise  # a failed condition means someone took it over: not ours to free
