"""The DynamoDB AppStore: the serverless home of app records.

Apps live in one table keyed by ``id``. GSIs serve the other lookups, each a Query, never
a Scan:

* ``by_owner`` (``owner``, sort ``created_key``): "my apps", newest first.
* ``by_preview_key`` (``preview_key``): the sites origin answers with one Query.
* ``featured`` (``featured_pk``, sort ``featured_key``): sparse, only apps whose priority
  is at least ``FEATURED_PRIORITY`` carry its attributes; highest priority, then newest.
* ``all_apps`` (``all_pk``, sort ``created_key``): every app, newest first, for admins.

All project everything, so a list is answered from the index alone. GSI reads are
eventually consistent: an app put a moment ago may be missing from a list for a moment;
``get`` by id is strongly consistent.

Name search keeps ``name_lower`` (the name casefolded, as ``name_matches`` compares) on
each item and filters with ``contains``. A filter is applied after a Query's ``Limit``, so
a filtered list reads on until it has a page of matches or the index ends: its cost grows
with the apps it skips, not with the page size.

Items written before ``name_lower``, ``featured_*`` and ``all_pk`` existed lack them: they
are missing from search, featured and the admin list until they are put again.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from zerocode.adapters.dynamodb.tables import Item, ensure_table
from zerocode.apps.records import FEATURED_PRIORITY, App, AppPage, CodeGenType, check_limit
from zerocode.errors import InvalidInput

BY_OWNER = "by_owner"
BY_PREVIEW_KEY = "by_preview_key"
FEATURED = "featured"
ALL_APPS = "all_apps"
FEATURED_PK = "featured"  # the one partition of the sparse ``featured`` index
ALL_PK = "app"  # the one partition of ``all_apps``

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


def create_apps_table(client: Any, name: str) -> None:
    """The apps table with its four GSIs. An existing table is left as it is: one made
    before ``featured`` and ``all_apps`` existed needs them added (UpdateTable) by hand."""
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
            "all_pk": "S",
        },
        gsis=[
            {
                "IndexName": BY_OWNER,
                "KeySchema": [
                    {"AttributeName": "owner", "KeyType": "HASH"},
                    {"AttributeName": "created_key", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            # ALL, not KEYS_ONLY: a preview request is answered from the index alone.
            {
                "IndexName": BY_PREVIEW_KEY,
                "KeySchema": [{"AttributeName": "preview_key", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            },
            # Sparse: only featured apps carry featured_pk, so only they are in the index.
            {
                "IndexName": FEATURED,
                "KeySchema": [
                    {"AttributeName": "featured_pk", "KeyType": "HASH"},
                    {"AttributeName": "featured_key", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
            {
                "IndexName": ALL_APPS,
                "KeySchema": [
                    {"AttributeName": "all_pk", "KeyType": "HASH"},
                    {"AttributeName": "created_key", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
        ],
    )


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
        """Every app, newest first, for admins.

        ``all_apps`` puts every app in one partition (``all_pk`` = "app"). That is fine for
        an admin page, but it is a hot key at very large scale: every app write also writes
        to that one index key, which can throttle (a partition takes on the order of 1,000
        writes/s), and a throttled GSI pushes back on writes to the table itself. Past that,
        shard ``all_pk`` ("app#0".."app#N") and merge the shards' pages here. A filtered
        page may read every app.
        """
        return self._list(
            ALL_APPS, "all_pk", ALL_PK, "created_key", _CREATED_KEY, cursor, limit, query
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
        condition, names = "#pk = :pk", {"#pk": pk_name}
        values: dict[str, Any] = {":pk": {"S": pk}}
        if cursor is not None:
            condition += " AND #sk < :sk"
            names["#sk"], values[":sk"] = sk_name, {"S": _decode_cursor(cursor, sk_shape)}
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
        apps = [_app(i) for i in items[:limit]]
        more = len(items) > limit
        return AppPage(apps, _encode_cursor(items[limit - 1][sk_name]["S"]) if more else None)

    def delete(self, app_id: str) -> bool:
        old = self.client.delete_item(
            TableName=self.table, Key={"id": {"S": app_id}}, ReturnValues="ALL_OLD"
        ).get("Attributes")
        return bool(old)


def created_key(app: App) -> str:
    """GSI sort key: time first for order, the id after it so equal times never collide."""
    return f"{app.created_at:017.6f}#{app.id}"


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
    item["all_pk"] = {"S": ALL_PK}
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
