"""The DynamoDB VisitStore (``publishing/visits.py``): the published sites' visits on AWS,
counted from CloudFront's logs by ``functions/visit_logs`` and read by the API. One table:

- ``app#{appId}`` / ``day#{YYYY-MM-DD}``: that day's ``views``, ``visitors`` and
  ``bot_views``, added to with ``ADD`` (atomic: log files counted at once add up);
- ``salt`` / ``day#{YYYY-MM-DD}``: the day's random salt, shared by every invocation: made by
  the first one that needs it (a conditional put; the others read it), never used past
  ``until`` (:func:`salt_until`), deleted by the invocation that makes a newer day's salt,
  and expired by TTL (``expires_at``) where none does;
- ``seen#{appId}#{YYYY-MM-DD}`` / ``{visitor}``: a visitor counted that day (its hash only),
  put only if absent, so each is counted once however many log files hold it; it expires by
  TTL with its day's salt (once the salt is gone the hash can be tried against nothing).

No address and no User-Agent is written, only counts and hashes. Deleting an app deletes its
days; its visitors' hashes expire within a day or two.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import repeat
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import Item, batch_delete, ensure_table
from zerocode.publishing.visits import SALT_BYTES, DayVisits, Tally, salt_until

SALT_KEY = "salt"
TTL = "expires_at"
PUTTERS = 16  # visitors' conditional puts at once


def create_visits_table(client: Any, name: str) -> None:
    ensure_table(client, name, "pk", {"pk": "S", "sk": "S"}, range_key="sk", ttl_attribute=TTL)


class DynamoVisitStore:
    def __init__(
        self, client: Any, table: str, random: Callable[[int], bytes] = secrets.token_bytes
    ) -> None:
        self.client, self.table, self.random = client, table, random

    def salt(self, day: str, now: float) -> bytes | None:
        until = salt_until(day)
        if until <= now:
            return None
        key: Item = {"pk": {"S": SALT_KEY}, "sk": {"S": f"day#{day}"}}
        found = self._salt(key, now)
        if found is not None:
            return found
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    **key,
                    "salt": {"B": self.random(SALT_BYTES)},
                    "until": {"N": repr(until)},
                    TTL: {"N": str(int(until) + 1)},
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if error_code(exc) != "ConditionalCheckFailedException":
                raise
        else:
            self._forget(now)  # a new day: the salts past their time go now
        made = self._salt(key, now)
        assert made is not None  # another invocation's, or ours
        return made

    def add(self, tallies: Sequence[Tally], now: float) -> None:
        for tally in tallies:
            until = salt_until(tally.day)
            if until > now and tally.visitors:
                # One conditional put per visitor, PUTTERS at once (a busy site's log file
                # holds thousands; the client is thread-safe).
                with ThreadPoolExecutor(min(PUTTERS, len(tally.visitors))) as pool:
                    firsts = pool.map(
                        self._first_time,
                        repeat(tally),
                        tally.visitors,
                        repeat(until),
                    )
                    new = sum(firsts)
            else:
                new = len(tally.visitors)
            self.client.update_item(
                TableName=self.table,
                Key={"pk": {"S": f"app#{tally.app_id}"}, "sk": {"S": f"day#{tally.day}"}},
                UpdateExpression="ADD #v :v, visitors :u, bot_views :b",
                ExpressionAttributeNames={"#v": "views"},
                ExpressionAttributeValues={
                    ":v": {"N": str(tally.views)},
                    ":u": {"N": str(new)},
                    ":b": {"N": str(tally.bot_views)},
                },
            )

    def days(self, app_id: str, first: str, last: str) -> list[DayVisits]:
        items = self._query(
            "pk = :pk AND sk BETWEEN :first AND :last",
            {
                ":pk": {"S": f"app#{app_id}"},
                ":first": {"S": f"day#{first}"},
                ":last": {"S": f"day#{last}"},
            },
        )
        return [
            DayVisits(
                day=i["sk"]["S"].removeprefix("day#"),
                views=int(i.get("views", {"N": "0"})["N"]),
                visitors=int(i.get("visitors", {"N": "0"})["N"]),
                bot_views=int(i.get("bot_views", {"N": "0"})["N"]),
            )
            for i in items
        ]

    def delete_app(self, app_id: str) -> None:
        keys = [
            {"pk": i["pk"], "sk": i["sk"]}
            for i in self._query("pk = :pk", {":pk": {"S": f"app#{app_id}"}}, keys_only=True)
        ]
        for at in range(0, len(keys), 25):  # BatchWriteItem takes 25 at a time
            batch_delete(self.client, self.table, keys[at : at + 25])

    def _salt(self, key: Item, now: float) -> bytes | None:
        item = self.client.get_item(TableName=self.table, Key=key, ConsistentRead=True).get("Item")
        if item is None or float(item["until"]["N"]) <= now:
            return None
        return bytes(item["salt"]["B"])

    def _first_time(self, tally: Tally, visitor: str, until: float) -> bool:
        """Whether ``visitor`` is new on its app's day (and now remembered until then)."""
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "pk": {"S": f"seen#{tally.app_id}#{tally.day}"},
                    "sk": {"S": visitor},
                    TTL: {"N": str(int(until) + 1)},
                },
                ConditionExpression="attribute_not_exists(pk)",
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def _forget(self, now: float) -> None:
        """Every salt past its time, deleted (TTL would, but only within a day or two)."""
        old = [
            {"pk": i["pk"], "sk": i["sk"]}
            for i in self._query("pk = :pk", {":pk": {"S": SALT_KEY}})
            if float(i["until"]["N"]) <= now
        ]
        if old:
            batch_delete(self.client, self.table, old)

    def _query(
        self, condition: str, values: dict[str, Any], *, keys_only: bool = False
    ) -> Iterator[Item]:
        params: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": condition,
            "ExpressionAttributeValues": values,
            "ConsistentRead": True,
        }
        if keys_only:
            params["ProjectionExpression"] = "pk, sk"
        while True:
            page = self.client.query(**params)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
