"""The DynamoDB RecordStore (zerocode/data/records.py) over the app-data table
(``app_data.py`` says its keys). A create and the collection's count are one transaction
(so the record past the bound is refused even when creates race), as are a delete and the
count; lists query one of two local secondary indexes (creation order, or one owner's in
creation order) in one partition, never a Scan.

Field filters and the builder's search are applied to what the index returns, page by
page, until the page is full; a list reads at most :data:`READ_BUDGET` records for one
answer and then answers the records it found with a cursor where it stopped (fewer than
asked for, with more to come: what the API's cursor already allows).
"""

from __future__ import annotations

import builtins
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.app_data import (
    BY_OWNER,
    BY_TIME,
    KEY,
    OWNER_KEY,
    SCOPE,
    SPACES_OF_AN_APP,
    TIME_KEY,
    TRANSACTION_ITEMS,
    Cancelled,
    clear_scope,
    key,
    scope,
    scratch_ttl,
    transact,
)
from zerocode.adapters.dynamodb.tables import Item
from zerocode.data.records import CollectionFull, Page, Query, Record, Space, cursor_of

READ_BUDGET = 2_000  # records one list may read to fill a filtered page
_HIGH = "\uffff"  # sorts after every character a key holds


class DynamoRecordStore:
    def __init__(self, client: Any, table: str, now: Callable[[], float] = time.time) -> None:
        self.client, self.table, self.now = client, table, now

    def create(self, app_id: str, space: Space, collection: str, record: Record, most: int) -> None:
        s = scope(app_id, space)
        try:
            transact(
                self.client,
                [
                    self._count_update(s, collection, 1, space, most=most),
                    {
                        "Put": {
                            "TableName": self.table,
                            "Item": _item(s, collection, record) | scratch_ttl(space, self.now),
                            "ConditionExpression": "attribute_not_exists(#k)",
                            "ExpressionAttributeNames": {"#k": KEY},
                        }
                    },
                ],
            )
        except Cancelled as exc:
            if exc.reasons[:1] == ["ConditionalCheckFailed"]:
                held = self.count(app_id, space, collection)
                raise CollectionFull(
                    f"{collection} holds {held} records, as many as it may; delete some first"
                ) from None
            raise

    def get(self, app_id: str, space: Space, collection: str, record_id: str) -> Record | None:
        found = self.client.get_item(
            TableName=self.table,
            Key=key(scope(app_id, space), f"r#{collection}#{record_id}"),
            ConsistentRead=True,
        ).get("Item")
        return _record(found) if found else None

    def replace(self, app_id: str, space: Space, collection: str, record: Record) -> bool:
        try:
            self.client.update_item(
                TableName=self.table,
                Key=key(scope(app_id, space), f"r#{collection}#{record.id}"),
                UpdateExpression="SET #f = :f, #u = :u",
                ConditionExpression="attribute_exists(#k)",
                ExpressionAttributeNames={"#f": "fields", "#u": "updated", "#k": KEY},
                ExpressionAttributeValues={
                    ":f": {"S": _fields(record)},
                    ":u": {"S": record.updated_at},
                },
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def delete(self, app_id: str, space: Space, collection: str, record_id: str) -> bool:
        s = scope(app_id, space)
        try:
            transact(
                self.client,
                [
                    {
                        "Delete": {
                            "TableName": self.table,
                            "Key": key(s, f"r#{collection}#{record_id}"),
                            "ConditionExpression": "attribute_exists(#k)",
                            "ExpressionAttributeNames": {"#k": KEY},
                        }
                    },
                    self._count_update(s, collection, -1, space),
                ],
            )
        except Cancelled as exc:
            if exc.reasons[:1] == ["ConditionalCheckFailed"]:
                return False
            raise
        return True

    def list(self, app_id: str, space: Space, collection: str, query: Query) -> Page:
        s = scope(app_id, space)
        prefix = f"{collection}#" if query.owner is None else f"{collection}#{query.owner}#"
        index, sort = (BY_TIME, TIME_KEY) if query.owner is None else (BY_OWNER, OWNER_KEY)
        low, high = prefix, prefix + _HIGH
        after = None if query.after is None else prefix + "#".join(query.after)
        if after is not None:
            low, high = (low, after) if query.newest else (after, high)
        params: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": index,
            "KeyConditionExpression": "#s = :s AND #o BETWEEN :lo AND :hi",
            "ExpressionAttributeNames": {"#s": SCOPE, "#o": sort},
            "ExpressionAttributeValues": {
                ":s": {"S": s},
                ":lo": {"S": low},
                ":hi": {"S": high},
            },
            "ScanIndexForward": not query.newest,
            "ConsistentRead": True,
        }
        found: list[Record] = []
        read = 0
        last: Record | None = None
        while True:
            page = self.client.query(
                Limit=min(query.limit + 1, 100) if _plain(query) else 200, **params
            )
            for item in page["Items"]:
                if after is not None and item[sort]["S"] == after:
                    continue  # BETWEEN holds the bound: the cursor's own record
                record = _record(item)
                read += 1
                last = record
                if _matches(record, query):
                    found.append(record)
                    if len(found) > query.limit:
                        shown = tuple(found[: query.limit])
                        return Page(shown, cursor_of(shown[-1]))
                if read >= READ_BUDGET:  # answer what was found; go on from here next time
                    return Page(tuple(found), cursor_of(last))
            if "LastEvaluatedKey" not in page:
                return Page(tuple(found), None)
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def count(self, app_id: str, space: Space, collection: str) -> int:
        found = self.client.get_item(
            TableName=self.table,
            Key=key(scope(app_id, space), f"c#{collection}"),
            ConsistentRead=True,
        ).get("Item", {})
        return int(found.get("count", {}).get("N", "0"))

    def seed(self, app_id: str, space: Space, collection: str, records: Sequence[Record]) -> bool:
        """The first transaction marks the collection seeded with the first records; the
        rest follow in more (a transaction holds at most 25 items), each with its count."""
        s = scope(app_id, space)
        first = TRANSACTION_ITEMS - 1
        try:
            transact(self.client, self._seeding(s, collection, space, records[:first], mark=True))
        except Cancelled as exc:
            if exc.reasons[:1] == ["ConditionalCheckFailed"]:
                return False  # seeded already since its space was cleared
            raise
        for start in range(first, len(records), first):
            chunk = records[start : start + first]
            transact(self.client, self._seeding(s, collection, space, chunk, mark=False))
        return True

    def clear(self, app_id: str, space: Space | None = None) -> int:
        spaces = SPACES_OF_AN_APP if space is None else (space,)
        return sum(
            clear_scope(self.client, self.table, scope(app_id, one), ("r#", "c#")) for one in spaces
        )

    def delete_app(self, app_id: str) -> int:
        return self.clear(app_id)

    def _count_update(
        self, s: str, collection: str, by: int, space: Space, most: int | None = None
    ) -> dict[str, Any]:
        sets = [f"#{name} = :{name}" for name in scratch_ttl(space)]  # a scratch space's TTL
        update: dict[str, Any] = {
            "TableName": self.table,
            "Key": key(s, f"c#{collection}"),
            "UpdateExpression": "ADD #n :by" + (f" SET {', '.join(sets)}" if sets else ""),
            "ExpressionAttributeNames": {"#n": "count", **{f"#{n}": n for n in scratch_ttl(space)}},
            "ExpressionAttributeValues": {
                ":by": {"N": str(by)},
                **{f":{n}": v for n, v in scratch_ttl(space, self.now).items()},
            },
        }
        if most is not None:
            update["ConditionExpression"] = "attribute_not_exists(#n) OR #n < :most"
            update["ExpressionAttributeValues"][":most"] = {"N": str(most)}
        return {"Update": update}

    def _seeding(
        self, s: str, collection: str, space: Space, records: Sequence[Record], *, mark: bool
    ) -> builtins.list[dict[str, Any]]:
        counted = self._count_update(s, collection, len(records), space)
        if mark:
            update = counted["Update"]
            joined = ", " if " SET " in update["UpdateExpression"] else " SET "
            update["UpdateExpression"] += joined + "#seeded = :yes"
            update["ConditionExpression"] = "attribute_not_exists(#seeded)"
            update["ExpressionAttributeNames"]["#seeded"] = "seeded"
            update["ExpressionAttributeValues"][":yes"] = {"BOOL": True}
        ttl = scratch_ttl(space, self.now)
        puts = [
            {"Put": {"TableName": self.table, "Item": _item(s, collection, r) | ttl}}
            for r in records
        ]
        return [counted, *puts]


def _plain(query: Query) -> bool:
    return not query.equals and not query.search


def _matches(record: Record, query: Query) -> bool:
    for name, value in query.equals.items():
        held = record.fields.get(name)
        if held != value or isinstance(held, bool) != isinstance(value, bool):
            return False
    if query.search:
        return query.search.lower() in _fields(record).lower()
    return True


def _fields(record: Record) -> str:
    return json.dumps(dict(record.fields), separators=(",", ":"), ensure_ascii=False)


def _item(s: str, collection: str, record: Record) -> Item:
    item: Item = {
        **key(s, f"r#{collection}#{record.id}"),
        "created": {"S": record.created_at},
        "updated": {"S": record.updated_at},
        "fields": {"S": _fields(record)},
        TIME_KEY: {"S": f"{collection}#{record.created_at}#{record.id}"},
    }
    if record.owner is not None:
        item["owner"] = {"S": record.owner}
        item[OWNER_KEY] = {"S": f"{collection}#{record.owner}#{record.created_at}#{record.id}"}
    return item


def _record(item: Item) -> Record:
    return Record(
        id=item[KEY]["S"].rsplit("#", 1)[1],
        owner=item["owner"]["S"] if "owner" in item else None,
        created_at=item["created"]["S"],
        updated_at=item["updated"]["S"],
        fields=json.loads(item["fields"]["S"]),
    )
