"""The DynamoDB EndUserStore (zerocode/data/end_users.py) over the app-data table
(``app_data.py`` says its keys). A sign-up writes the user by name (the name's uniqueness
is that item's condition), by id, and the space's count in one transaction. A session is an
item under the app and space it was made for, keyed by its token's hash alone, with
``expires_at`` for DynamoDB's TTL; it names its user by id, and a user removed takes every
session of theirs with them at once, because a session counts only while its user's item
is there (the items themselves expire with the TTL).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from zerocode.adapters.dynamodb.app_data import (
    KEY,
    SCOPE,
    SPACES_OF_AN_APP,
    TTL,
    Cancelled,
    clear_scope,
    key,
    scope,
    scratch_ttl,
    transact,
)
from zerocode.adapters.dynamodb.tables import Item
from zerocode.data.end_users import EndUser, UsernameTaken, UsersFull
from zerocode.data.records import Space

COUNT = "m#users"


class DynamoEndUserStore:
    def __init__(self, client: Any, table: str, now: Callable[[], float] = time.time) -> None:
        self.client, self.table, self.now = client, table, now

    def create(self, app_id: str, space: Space, user: EndUser, most: int) -> None:
        s = scope(app_id, space)
        ttl = scratch_ttl(space, self.now)
        fields = _fields(user) | ttl
        try:
            transact(
                self.client,
                [
                    {
                        "Update": {
                            "TableName": self.table,
                            "Key": key(s, COUNT),
                            "UpdateExpression": "ADD #n :one" + (" SET #t = :t" if ttl else ""),
                            "ConditionExpression": "attribute_not_exists(#n) OR #n < :most",
                            "ExpressionAttributeNames": {
                                "#n": "count",
                                **({"#t": TTL} if ttl else {}),
                            },
                            "ExpressionAttributeValues": {
                                ":one": {"N": "1"},
                                ":most": {"N": str(most)},
                                **({":t": ttl[TTL]} if ttl else {}),
                            },
                        }
                    },
                    {
                        "Put": {
                            "TableName": self.table,
                            "Item": key(s, f"u#{user.username}") | fields,
                            "ConditionExpression": "attribute_not_exists(#k)",
                            "ExpressionAttributeNames": {"#k": KEY},
                        }
                    },
                    {"Put": {"TableName": self.table, "Item": key(s, f"i#{user.id}") | fields}},
                ],
            )
        except Cancelled as exc:
            if exc.reasons[:1] == ["ConditionalCheckFailed"]:
                raise UsersFull(f"this app has {most} users, as many as it may") from None
            if exc.reasons[1:2] == ["ConditionalCheckFailed"]:
                raise UsernameTaken(f"the username {user.username} is taken") from None
            raise

    def by_username(self, app_id: str, space: Space, username: str) -> EndUser | None:
        return self._one(scope(app_id, space), f"u#{username}")

    def get(self, app_id: str, space: Space, user_id: str) -> EndUser | None:
        return self._one(scope(app_id, space), f"i#{user_id}")

    def list(
        self, app_id: str, space: Space, after: str | None, limit: int
    ) -> tuple[list[EndUser], str | None]:
        low = f"u#{after}" if after else "u#"
        page = self.client.query(
            TableName=self.table,
            KeyConditionExpression="#s = :s AND #k BETWEEN :lo AND :hi",
            ExpressionAttributeNames={"#s": SCOPE, "#k": KEY},
            ExpressionAttributeValues={
                ":s": {"S": scope(app_id, space)},
                ":lo": {"S": low},
                ":hi": {"S": "u#\uffff"},
            },
            Limit=limit + 2,  # the bound's own item, the page, and whether more follow
            ConsistentRead=True,
        )
        users = [_user(i) for i in page["Items"] if i[KEY]["S"] != f"u#{after}"]
        shown = users[:limit]
        more = len(users) > limit or (len(users) == limit and "LastEvaluatedKey" in page)
        return shown, shown[-1].username if more and shown else None

    def remove(self, app_id: str, space: Space, user_id: str) -> bool:
        s = scope(app_id, space)
        user = self._one(s, f"i#{user_id}")
        if user is None:
            return False
        try:
            transact(
                self.client,
                [
                    {
                        "Delete": {
                            "TableName": self.table,
                            "Key": key(s, f"i#{user_id}"),
                            "ConditionExpression": "attribute_exists(#k)",
                            "ExpressionAttributeNames": {"#k": KEY},
                        }
                    },
                    {"Delete": {"TableName": self.table, "Key": key(s, f"u#{user.username}")}},
                    {
                        "Update": {
                            "TableName": self.table,
                            "Key": key(s, COUNT),
                            "UpdateExpression": "ADD #n :less",
                            "ExpressionAttributeNames": {"#n": "count"},
                            "ExpressionAttributeValues": {":less": {"N": "-1"}},
                        }
                    },
                ],
            )
        except Cancelled as exc:
            if exc.reasons[:1] == ["ConditionalCheckFailed"]:
                return False  # removed meanwhile
            raise
        return True

    def put_session(
        self, app_id: str, space: Space, token_sha: str, user_id: str, expires_at: float
    ) -> None:
        self.client.put_item(
            TableName=self.table,
            Item=key(scope(app_id, space), f"s#{token_sha}")
            | {"user_id": {"S": user_id}, TTL: {"N": str(math.ceil(expires_at))}},
        )

    def session_user(self, app_id: str, space: Space, token_sha: str, now: float) -> EndUser | None:
        s = scope(app_id, space)
        found = self.client.get_item(
            TableName=self.table, Key=key(s, f"s#{token_sha}"), ConsistentRead=True
        ).get("Item")
        if found is None:
            return None
        if float(found[TTL]["N"]) <= now:  # TTL deletes within days: not soon enough
            self.delete_session(app_id, space, token_sha)
            return None
        return self._one(s, f"i#{found['user_id']['S']}")

    def delete_session(self, app_id: str, space: Space, token_sha: str) -> None:
        self.client.delete_item(
            TableName=self.table, Key=key(scope(app_id, space), f"s#{token_sha}")
        )

    def clear(self, app_id: str, space: Space | None = None) -> int:
        spaces = SPACES_OF_AN_APP if space is None else (space,)
        prefixes = ("u#", "i#", "s#", "m#")
        return sum(
            clear_scope(self.client, self.table, scope(app_id, one), prefixes) for one in spaces
        )

    def delete_app(self, app_id: str) -> int:
        return self.clear(app_id)

    def _one(self, s: str, sort: str) -> EndUser | None:
        found = self.client.get_item(TableName=self.table, Key=key(s, sort), ConsistentRead=True)
        item = found.get("Item")
        return _user(item) if item else None


def _fields(user: EndUser) -> Item:
    return {
        "id": {"S": user.id},
        "username": {"S": user.username},
        "created": {"S": user.created_at},
        "hash": {"S": user.password_hash},
    }


def _user(item: Item) -> EndUser:
    return EndUser(item["id"]["S"], item["username"]["S"], item["created"]["S"], item["hash"]["S"])
