"""The DynamoDB AppStore: the serverless home of app records.

Apps live in one table keyed by ``id``. GSIs serve the other lookups, each a Query, never
a Scan:

* ``by_owner`` (``owner``, sort ``created_key``): "my apps", newest first.
* ``by_preview_key`` (``preview_key``): one app by its preview key.
* ``featured`` (``featured_pk``, sort ``featured_key``): sparse, only apps whose priority
  is at least ``FEATURED_PRIORITY`` carry its attributes; highest priority, then newest.
* ``all_apps_sharded`` (``all_shard``, sort ``created_key``): every app, newest first, for
  admins, spread over ``ALL_SHARDS`` partitions (``app#0`` .. ``app#15``, by a stable hash
  of the id) and merged here; see :meth:`DynamoAppStore.list_all`.

No key takes every app's writes. ``by_owner`` and ``by_preview_key`` have a partition per
owner or per app; ``featured``'s one partition holds only the apps an admin featured, and
``all_apps_sharded`` projects its keys and ``name_lower`` only, so an app's index entry is
written when the app is created, renamed or deleted, not at each of its other writes (a
write that changes no key or projected attribute of an index does not write to it).

``by_owner``, ``by_preview_key`` and ``featured`` project everything (each says why at
:func:`create_apps_table`), so their lists are answered from the index alone;
``all_apps_sharded`` is answered from the index and one BatchGetItem for the page. GSI
reads are eventually consistent: an app put a moment ago may be missing from a list for a
moment; ``get`` by id is strongly consistent.

Name search keeps ``name_lower`` (the name casefolded, as ``name_matches`` compares) on
each item and filters with ``contains``. A filter is applied after a Query's ``Limit``, so
a filtered list reads on until it has a page of matches or the index ends: its cost grows
with the apps it skips, not with the page size.

Items written before ``name_lower``, ``featured_*`` and ``all_shard`` existed lack them:
they are missing from search, featured and the admin list until they are put again, or
until :func:`backfill_all_shards` gives them their shard (docs/operations.md, "The apps
table's indexes").
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import heapq
import itertools
import re
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import Item, ensure_table
from zerocode.apps.records import FEATURED_PRIORITY, App, AppPage, CodeGenType, check_limit
from zerocode.errors import InvalidInput, ZerocodeError

BY_OWNER = "by_owner"
BY_PREVIEW_KEY = "by_preview_key"
FEATURED = "featured"
ALL_APPS = "all_apps_sharded"
FEATURED_PK = "featured"  # the one partition of the sparse ``featured`` index
# Partitions of ``all_apps_sharded``. A partition of an index takes about 1,000 write
# units a second (AWS's per-partition limit) and an entry here (keys and the folded name,
# well under 1 KB) is one unit, written when an app is created, renamed or deleted. One
# key would cap that at ~1,000 a second for the whole platform, and a throttled index
# throttles writes to the table itself; 16 shards take ~16,000 a second. A list then reads
# 16 partitions (one Query each, in parallel): more shards cost admin reads, not writes.
ALL_SHARDS = 16
# Before the shards every item carried ``all_pk`` = "app", the one key of the index
# ``all_apps`` (still in the stack until every item is backfilled: docs/operations.md).
LEGACY_ALL_PK = "all_pk"

_STRINGS = ("id", "owner", "name", "init_prompt", "preview_key")
_OPTIONAL_STRINGS = ("deploy_key", "deploy_url", "cover", "deploy_build_id", "preview_cover")
# Zero-padded epoch seconds sort as text the way they sort as numbers (until year 2286).
_CREATED_KEY = re.compile(r"^\d{10}\.\d{6}#\S+$")
# Priority is padded to this many digits so it, too, sorts as text the way it does as a number.
_PRIORITY_DIGITS = 5
_FEATURED_KEY = re.compile(rf"^\d{{{_PRIORITY_DIGITS}}}#\d{{10}}\.\d{{6}}#\S+$")
# Items a filtered Query reads per request: a filter drops items after Limit is counted,
# so asking for only "limit + 1" would cost a round trip per few matches.
FILTERED_READ = 100
_BATCH_ATTEMPTS = 8


def create_apps_table(client: Any, name: str) -> None:
    """The apps table with its four GSIs. An existing table is left as it is: one made
    before an index existed needs it added (UpdateTable) by hand."""
    ensure_table(
        client,
        name,
        "id",
        {
            "id": "S",
            "owner": "S",
            "created_key": "S",
            "preview_key": "S",
            "featured_pk": "S",
            "featured_key": "S",
            "all_shard": "S",
        },
        gsis=[
            # ALL: "my apps" shows every field of each app but its prompt, so a narrower
            # projection would need a BatchGetItem per page; its partition is one owner's.
            {
                "IndexName": BY_OWNER,
                "KeySchema": [
                    {"AttributeName": "owner", "KeyType": "HASH"},
                    {"AttributeName": "created_key", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            # ALL: it answers with the whole app; its partitions are one app's each.
            {
                "IndexName": BY_PREVIEW_KEY,
                "KeySchema": [{"AttributeName": "preview_key", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            },
            # Sparse: only featured apps carry featured_pk, so only they are in the index,
            # and only their writes reach its one partition (a few an admin chose). ALL:
            # the public home page reads it far more often than it changes, and shows
            # whole apps; one Query per page, where a narrower one would add a BatchGetItem.
            # Sharding would not spread those reads: every page would read every shard.
            {
                "IndexName": FEATURED,
                "KeySchema": [
                    {"AttributeName": "featured_pk", "KeyType": "HASH"},
                    {"AttributeName": "featured_key", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            # Every app: keys and the folded name (the search filter) only, so an app's
            # other writes (covers, deploys, each touch) never write here.
            {
                "IndexName": ALL_APPS,
                "KeySchema": [
                    {"AttributeName": "all_shard", "KeyType": "HASH"},
                    {"AttributeName": "created_key", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["name_lower"]},
            },
        ],
    )


def all_shard(app_id: str) -> str:
    """The ``all_apps_sharded`` partition of an app: a stable hash of its id (not Python's
    ``hash``, which differs between processes), so every writer puts it in the same one."""
    digest = hashlib.sha256(app_id.encode()).digest()
    return f"app#{int.from_bytes(digest[:8], 'big') % ALL_SHARDS}"


class DynamoAppStore:
    def __init__(self, client: Any, table: str, *, filtered_read: int = FILTERED_READ) -> None:
        self.client, self.table = client, table
        self.filtered_read = filtered_read  # items read per Query while a name filter is on

    def put(self, app: App) -> None:
        """A PutItem replaces the whole item, so an app that stops being featured loses its
        ``featured_*`` attributes, and with them its place in the sparse index."""
        self.client.put_item(TableName=self.table, Item=_item(app))

    def get(self, app_id: str) -> App | None:
        item = self.client.get_item(
            TableName=self.table, ConsistentRead=True, Key={"id": {"S": app_id}}
        ).get("Item")
        return _app(item) if item else None

    def by_preview_key(self, preview_key: str) -> App | None:
        items = self.client.query(
            TableName=self.table,
            IndexName=BY_PREVIEW_KEY,
            Limit=1,
            KeyConditionExpression="#pk = :pk",
            ExpressionAttributeNames={"#pk": "preview_key"},
            ExpressionAttributeValues={":pk": {"S": preview_key}},
        )["Items"]
        return _app(items[0]) if items else None

    def list_by_owner(
        self, owner: str, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        """Newest first; ``query`` keeps the names containing it, whatever the case. A
        filtered page reads at most all of this owner's apps."""
        return self._list(
            BY_OWNER, "owner", owner, "created_key", _CREATED_KEY, cursor, limit, query
        )

    def list_featured(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        """Highest priority first, then newest (then, at equal times, the greater id). The
        sort key ``featured_key`` ends with ``created_key``, itself ending with the id, so
        no two apps share one: a cursor is an exact position."""
        return self._list(
            FEATURED,
            "featured_pk",
            FEATURED_PK,
            "featured_key",
            _FEATURED_KEY,
            cursor,
            limit,
            query,
        )

    def list_all(
        self, cursor: str | None = None, limit: int = 20, query: str | None = None
    ) -> AppPage:
        """Every app, newest first, for admins: the newest ``limit + 1`` (matching) entries
        of each of the ``ALL_SHARDS`` partitions, read in parallel (one round trip each,
        so waiting for them in turn would be 16 round trips), merged by ``created_key``.
        That key is unique (it ends with the id) and every shard holds its own apps in
        that order, so the merge's first ``limit + 1`` are the index's, and the cursor (the
        last returned key) is exact for every shard: each resumes below it. The page's
        whole items come from one BatchGetItem; an app deleted between the two reads is
        left out. A filtered page may read every app.
        """
        check_limit(limit)
        after = _decode_cursor(cursor, _CREATED_KEY) if cursor is not None else None

        def shard(n: int) -> list[Item]:
            pk = f"app#{n}"
            return self._query(ALL_APPS, "all_shard", pk, "created_key", after, limit, query)

        with ThreadPoolExecutor(max_workers=ALL_SHARDS) as pool:
            shards = list(pool.map(shard, range(ALL_SHARDS)))
        newest = heapq.merge(*shards, key=lambda i: str(i["created_key"]["S"]), reverse=True)
        entries = list(itertools.islice(newest, limit + 1))
        apps = self._get_many([str(e["id"]["S"]) for e in entries[:limit]])
        more = len(entries) > limit
        return AppPage(
            apps, _encode_cursor(entries[limit - 1]["created_key"]["S"]) if more else None
        )

    def _list(
        self,
        index: str,
        pk_name: str,
        pk: str,
        sk_name: str,
        sk_shape: re.Pattern[str],
        cursor: str | None,
        limit: int,
        query: str | None,
    ) -> AppPage:
        """Query ``index`` descending from after ``cursor``. One extra match is read to learn
        whether another page exists; the cursor is the last returned item's sort key."""
        check_limit(limit)
        after = _decode_cursor(cursor, sk_shape) if cursor is not None else None
        items = self._query(index, pk_name, pk, sk_name, after, limit, query)
        apps = [_app(i) for i in items[:limit]]
        more = len(items) > limit
        return AppPage(apps, _encode_cursor(items[limit - 1][sk_name]["S"]) if more else None)

    def _query(
        self,
        index: str,
        pk_name: str,
        pk: str,
        sk_name: str,
        after: str | None,
        limit: int,
        query: str | None,
    ) -> list[Item]:
        """Up to ``limit + 1`` (matching) items of one index partition, descending, below
        the sort key ``after``."""
        condition, names = "#pk = :pk", {"#pk": pk_name}
        values: dict[str, Any] = {":pk": {"S": pk}}
        if after is not None:
            condition += " AND #sk < :sk"
            names["#sk"], values[":sk"] = sk_name, {"S": after}
        params: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": index,
            "ScanIndexForward": False,
            "KeyConditionExpression": condition,
        }
        if query:
            params["FilterExpression"] = "contains(#nl, :q)"
            names["#nl"], values[":q"] = "name_lower", {"S": query.casefold()}
        params["ExpressionAttributeNames"], params["ExpressionAttributeValues"] = names, values
        items: list[Item] = []
        # Keep reading while short: a 1 MB response can stop short of Limit, and a filter
        # drops items after Limit has counted them.
        while len(items) <= limit:
            wanted = limit + 1 - len(items)
            page = self.client.query(
                Limit=max(wanted, self.filtered_read) if query else wanted, **params
            )
            items += page["Items"]
            if "LastEvaluatedKey" not in page:
                break
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        return items[: limit + 1]

    def _get_many(self, ids: list[str]) -> list[App]:
        """The apps of ``ids`` (at most a page, under BatchGetItem's 100 keys), in that
        order; the ones that no longer exist are left out."""
        found: dict[str, App] = {}
        keys, attempt = [{"id": {"S": i}} for i in ids], 0
        while keys:
            if attempt == _BATCH_ATTEMPTS:
                raise ZerocodeError(f"DynamoDB kept {len(keys)} reads from {self.table} unread")
            if attempt:
                time.sleep(min(0.05 * 2**attempt, 2.0))  # throttled: back off as AWS advises
            answer = self.client.batch_get_item(RequestItems={self.table: {"Keys": keys}})
            for item in answer["Responses"].get(self.table, []):
                found[item["id"]["S"]] = _app(item)
            keys = answer.get("UnprocessedKeys", {}).get(self.table, {}).get("Keys", [])
            attempt += 1
        return [found[i] for i in ids if i in found]

    def delete(self, app_id: str) -> bool:
        old = self.client.delete_item(
            TableName=self.table, Key={"id": {"S": app_id}}, ReturnValues="ALL_OLD"
        ).get("Attributes")
        return bool(old)


def created_key(app: App) -> str:
    """GSI sort key: time first for order, the id after it so equal times never collide."""
    return _created_key(app.created_at, app.id)


def _created_key(created_at: float, app_id: str) -> str:
    return f"{created_at:017.6f}#{app_id}"


def featured_key(app: App) -> str:
    """``featured`` GSI sort key. Descending, the padded priority orders first (highest),
    then ``created_key`` (newest, then the greater id): unique, since it ends with the id."""
    if app.priority >= 10**_PRIORITY_DIGITS:  # would sort below 99999 as text
        raise InvalidInput(f"priority must be below {10**_PRIORITY_DIGITS}")
    return f"{app.priority:0{_PRIORITY_DIGITS}d}#{created_key(app)}"


def _item(app: App) -> Item:
    item: Item = {k: {"S": getattr(app, k)} for k in _STRINGS}
    item.update({k: {"S": v} for k in _OPTIONAL_STRINGS if (v := getattr(app, k)) is not None})
    item["code_gen_type"] = {"S": app.code_gen_type.value}
    item["priority"] = {"N": str(app.priority)}
    # repr() round-trips a float exactly; DynamoDB keeps up to 38 significant digits.
    item["created_at"] = {"N": repr(float(app.created_at))}
    item["updated_at"] = {"N": repr(float(app.updated_at))}
    if app.deployed_at is not None:
        item["deployed_at"] = {"N": repr(float(app.deployed_at))}
    if app.require_checks:
        item["require_checks"] = {"BOOL": True}
    item["created_key"] = {"S": created_key(app)}
    item["name_lower"] = {"S": app.name.casefold()}  # casefold, as name_matches compares
    item["all_shard"] = {"S": all_shard(app.id)}
    if app.priority >= FEATURED_PRIORITY:  # otherwise absent: out of the sparse index
        item["featured_pk"] = {"S": FEATURED_PK}
        item["featured_key"] = {"S": featured_key(app)}
    return item


def _app(item: Item) -> App:
    def optional(name: str) -> str | None:
        return str(item[name]["S"]) if name in item else None

    return App(
        id=item["id"]["S"],
        owner=item["owner"]["S"],
        name=item["name"]["S"],
        code_gen_type=CodeGenType(item["code_gen_type"]["S"]),
        init_prompt=item["init_prompt"]["S"],
        preview_key=item["preview_key"]["S"],
        deploy_key=optional("deploy_key"),
        deploy_url=optional("deploy_url"),
        cover=optional("cover"),
        priority=int(item["priority"]["N"]),
        created_at=float(item["created_at"]["N"]),
        updated_at=float(item["updated_at"]["N"]),
        deploy_build_id=optional("deploy_build_id"),
        deployed_at=float(item["deployed_at"]["N"]) if "deployed_at" in item else None,
        require_checks=bool(item.get("require_checks", {}).get("BOOL", False)),
        preview_cover=optional("preview_cover"),
    )


def backfill_all_shards(client: Any, table: str) -> int:
    """Once, after the deploy that adds ``all_apps_sharded``: give every item written
    before it its shard (and the sort key and folded name the oldest items lack) and take
    away ``all_pk``, so it moves from the one-key index ``all_apps`` to the sharded one.
    One Scan of the table and an UpdateItem per such item; how many were moved. Safe to
    run again (it finds nothing left), and beside live traffic: the update never brings
    back an app deleted since the Scan, and a name or key already set is kept as is."""
    moved = 0
    params: dict[str, Any] = {
        "TableName": table,
        "FilterExpression": "attribute_not_exists(all_shard) OR attribute_exists(#legacy)",
        "ProjectionExpression": "id, #name, created_at",
        "ExpressionAttributeNames": {"#legacy": LEGACY_ALL_PK, "#name": "name"},
    }
    while True:
        page = client.scan(**params)
        for item in page["Items"]:
            moved += _backfill_one(client, table, item)
        if "LastEvaluatedKey" not in page:
            return moved
        params["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def _backfill_one(client: Any, table: str, item: Item) -> int:
    app_id = str(item["id"]["S"])
    try:
        client.update_item(
            TableName=table,
            Key={"id": {"S": app_id}},
            UpdateExpression="SET all_shard = :shard, created_key = if_not_exists("
            "created_key, :ck), name_lower = if_not_exists(name_lower, :nl) REMOVE #legacy",
            ConditionExpression="attribute_exists(id)",
            ExpressionAttributeNames={"#legacy": LEGACY_ALL_PK},
            ExpressionAttributeValues={
                ":shard": {"S": all_shard(app_id)},
                ":ck": {"S": _created_key(float(item["created_at"]["N"]), app_id)},
                ":nl": {"S": str(item["name"]["S"]).casefold()},
            },
        )
    except ClientError as exc:
        if error_code(exc) != "ConditionalCheckFailedException":
            raise
        return 0  # deleted since the Scan
    return 1


def _encode_cursor(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str, shape: re.Pattern[str]) -> str:
    try:
        key = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (ValueError, binascii.Error) as exc:  # UnicodeDecodeError is a ValueError
        raise InvalidInput("cursor is not one returned by this API") from exc
    if not shape.match(key):
        raise InvalidInput("cursor is not one returned by this API")
    return key
