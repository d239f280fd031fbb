"""The apps' own data in DynamoDB (issue 39, point 7): one table for records, end users,
sessions and each build's data model, shared by the three stores beside this module.

Every partition is one app's one space (``scope`` = ``{app_id}#{space}``) or one app's
build models (``{app_id}#builds``), so an app's data never shares a partition with
another's and a request path reads one partition by key or by index, never a Scan. Sort
keys (``key``) by prefix:

- ``r#{collection}#{id}``: a record (``fields`` as compact JSON, ``owner``, ``created``,
  ``updated``), with ``ct`` = ``{collection}#{created}#{id}`` for the creation-order index
  and, when it has an owner, ``ot`` = ``{collection}#{owner}#{created}#{id}`` for the
  owner index (both local secondary indexes: lists read strongly consistent, so a record
  just added is listed at once);
- ``c#{collection}``: the collection's count and whether its seeds were added;
- ``u#{username}`` and ``i#{user_id}``: an end user, by name and by id (the same
  attributes); ``m#users``: how many there are;
- ``s#{token_sha}``: a session, expired by DynamoDB's TTL (``expires_at``) and refused once
  past it even before;
- in ``{app_id}#builds``, the key is a build id and ``data`` its ``zerocode.data.json``.

A check's scratch space (``check-…``, ``zerocode/data/check_spaces.py``) is deleted when
its check ends; every item written there also carries ``expires_at`` a day ahead, so a
check that died leaves nothing for long.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import Item, batch_delete
from zerocode.data.records import Space

SCOPE, KEY = "scope", "key"
BY_TIME, BY_OWNER = "by_time", "by_owner"
TIME_KEY, OWNER_KEY = "ct", "ot"
TTL = "expires_at"
SCRATCH_SECONDS = 86_400
SPACES_OF_AN_APP: tuple[Space, ...] = ("preview", "live")
TRANSACTION_ITEMS = 25  # the fewest any DynamoDB (or stand-in) takes in one transaction
_CONFLICT_ATTEMPTS = 12


def scope(app_id: str, space: Space) -> str:
    return f"{app_id}#{space}"


def builds_scope(app_id: str) -> str:
    return f"{app_id}#builds"


def key(scope_value: str, sort: str) -> Item:
    return {SCOPE: {"S": scope_value}, KEY: {"S": sort}}


def scratch_ttl(space: Space, now: Callable[[], float] = time.time) -> Item:
    """``expires_at`` for an item of a check's scratch space; nothing for the others."""
    if space in SPACES_OF_AN_APP:
        return {}
    return {TTL: {"N": str(int(now()) + SCRATCH_SECONDS)}}


def create_app_data_table(client: Any, name: str) -> None:
    """The table as the stack declares it (``infra/zerocode_infra/data.py``)."""
    try:
        client.create_table(
            TableName=name,
            BillingMode="PAY_PER_REQUEST",
            AttributeDefinitions=[
                {"AttributeName": n, "AttributeType": "S"}
                for n in (SCOPE, KEY, TIME_KEY, OWNER_KEY)
            ],
            KeySchema=[
                {"AttributeName": SCOPE, "KeyType": "HASH"},
                {"AttributeName": KEY, "KeyType": "RANGE"},
            ],
            LocalSecondaryIndexes=[
                {
                    "IndexName": index,
                    "KeySchema": [
                        {"AttributeName": SCOPE, "KeyType": "HASH"},
                        {"AttributeName": sort, "KeyType": "RANGE"},
                    ],
                    "Projection": {"ProjectionType": "ALL"},
                }
                for index, sort in ((BY_TIME, TIME_KEY), (BY_OWNER, OWNER_KEY))
            ],
        )
    except ClientError as exc:
        if error_code(exc) != "ResourceInUseException":
            raise
    client.get_waiter("table_exists").wait(TableName=name)
    ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        client.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": TTL}
        )


class Cancelled(Exception):
    """A transaction's condition failed; ``reasons`` are DynamoDB's codes, one per action."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__(reasons)
        self.reasons = reasons


def transact(client: Any, actions: list[dict[str, Any]]) -> None:
    """Write ``actions`` as one transaction. A conflict with another transaction on the
    same items (creates racing for a collection's count) is tried again; a failed
    condition raises :class:`Cancelled` with the reasons, nothing written."""
    for attempt in range(_CONFLICT_ATTEMPTS):
        try:
            client.transact_write_items(TransactItems=actions, ClientRequestToken=uuid.uuid4().hex)
            return
        except ClientError as exc:
            if error_code(exc) != "TransactionCanceledException":
                raise
            reasons = [r.get("Code", "None") for r in exc.response.get("CancellationReasons", [])]
            if "ConditionalCheckFailed" in reasons or not reasons:
                raise Cancelled(reasons) from exc
            time.sleep(min(0.01 * 2**attempt, 0.5))  # TransactionConflict: the other won
    raise Cancelled(["TransactionConflict"])


def partition_keys(client: Any, table: str, scope_value: str, prefix: str = "") -> Iterator[Item]:
    """The keys of one partition's items (those whose sort key starts with ``prefix``)."""
    condition = "#s = :s" + (" AND begins_with(#k, :p)" if prefix else "")
    values: Item = {":s": {"S": scope_value}, **({":p": {"S": prefix}} if prefix else {})}
    params: dict[str, Any] = {}
    while True:
        page = client.query(
            TableName=table,
            KeyConditionExpression=condition,
            ExpressionAttributeNames={"#s": SCOPE, "#k": KEY},
            ExpressionAttributeValues=values,
            ProjectionExpression="#s, #k",
            ConsistentRead=True,
            **params,
        )
        yield from page["Items"]
        if "LastEvaluatedKey" not in page:
            return
        params = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def delete_keys(client: Any, table: str, keys: list[Item]) -> None:
    for start in range(0, len(keys), 25):
        batch_delete(client, table, keys[start : start + 25])


def clear_scope(client: Any, table: str, scope_value: str, prefixes: tuple[str, ...]) -> int:
    """Delete the partition's items under ``prefixes``; how many had the first prefix."""
    keys = [k for k in partition_keys(client, table, scope_value) if k[KEY]["S"][:2] in prefixes]
    delete_keys(client, table, keys)
    return sum(1 for k in keys if k[KEY]["S"].startswith(prefixes[0]))
