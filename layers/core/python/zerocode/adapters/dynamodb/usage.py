"""The DynamoDB UsageLedger: one table, one partition per app, per account and per day.

- ``app#{appId}`` / ``req#{turn:08d}#{at}#{random}``: one model request, in time order
  within its turn;
- ``app#{appId}`` / ``day#{YYYY-MM-DD}`` and ``account#{owner}`` / ``day#{YYYY-MM-DD}``:
  that day's sums, added to with ``ADD``;
- ``day#{YYYY-MM-DD}`` / ``account#{owner}`` and ``day#{YYYY-MM-DD}`` /
  ``model#{shard}#{model}``: the same day's sums again, for the platform's totals (an
  admin's view): one query per day finds every account and model that spent anything. A
  model's day is spread over :data:`MODEL_SHARDS` items (each request adds to one, at
  random), so requests of one model ending at once across the platform seldom conflict;
- ``account#{owner}`` / ``budget``: the account's own token budget, set by an admin
  (``per_day``, ``per_month``, each absent for no limit); outside ``day#`` ranges.

A request and its four days go in one TransactWriteItems, so the days always add up to the
requests (botocore's own retries of it are idempotent by its token). Two requests ending at
once may conflict on a day item: the one DynamoDB cancels is sent again, with a new token
(nothing of it was applied), a few times. Deleting an app queries its one partition and
deletes it; its owner's days and the models' stay.
"""

from __future__ import annotations

import datetime as dt
import random
import secrets
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from zerocode.accounts.usage import COUNTS, AccountBudget, DayUsage, Scope, Spent, Tally
from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import Item, batch_delete, ensure_table

_COUNTS = COUNTS
CONFLICT_ATTEMPTS = 8
MODEL_SHARDS = 8  # items per model per day (summed on reading)
READERS = 8  # days queried at once for the platform's totals


def create_usage_table(client: Any, name: str) -> None:
    ensure_table(client, name, "pk", {"pk": "S", "sk": "S"}, range_key="sk")


class DynamoUsageLedger:
    def __init__(self, client: Any, table: str) -> None:
        self.client, self.table = client, table

    def record(self, spent: Spent) -> None:
        request: Item = {
            "pk": {"S": f"app#{spent.app_id}"},
            # In the order recorded: when it ended, then when it was written (one turn's
            # requests are written one after another), then a tie-breaker.
            "sk": {
                "S": f"req#{spent.turn:08d}#{spent.at:017.6f}#{time.time_ns():020d}"
                f"#{secrets.token_hex(4)}"
            },
            "account": {"S": spent.account},
            "turn": {"N": str(spent.turn)},
            "round": {"N": str(spent.round)},
            "model": {"S": spent.model},
            "at": {"N": repr(float(spent.at))},
            "input_tokens": {"N": str(spent.input_tokens)},
            "output_tokens": {"N": str(spent.output_tokens)},
            "cached_tokens": {"N": str(spent.cached_tokens)},
            "estimated": {"BOOL": spent.estimated},
        }
        if spent.cost_micros is not None:
            request["cost_micros"] = {"N": str(spent.cost_micros)}
        added = {
            ":requests": {"N": "1"},
            ":input_tokens": {"N": str(spent.input_tokens)},
            ":output_tokens": {"N": str(spent.output_tokens)},
            ":cached_tokens": {"N": str(spent.cached_tokens)},
            ":estimated": {"N": "1" if spent.estimated else "0"},
            ":cost_micros": {"N": str(spent.cost_micros or 0)},
            ":unpriced": {"N": "1" if spent.cost_micros is None else "0"},
        }
        day = {
            "TableName": self.table,
            "UpdateExpression": "ADD " + ", ".join(f"{c} :{c}" for c in _COUNTS),
            "ExpressionAttributeValues": added,
        }
        on = f"day#{spent.day}"
        shard = random.randrange(MODEL_SHARDS)
        days = (
            (f"app#{spent.app_id}", on),
            (f"account#{spent.account}", on),
            (on, f"account#{spent.account}"),
            (on, f"model#{shard}#{spent.model}"),
        )
        items = [
            {"Put": {"TableName": self.table, "Item": request}},
            *({"Update": {**day, "Key": {"pk": {"S": pk}, "sk": {"S": sk}}}} for pk, sk in days),
        ]
        token = secrets.token_hex(14)
        for attempt in range(CONFLICT_ATTEMPTS):
            try:
                self.client.transact_write_items(
                    TransactItems=items, ClientRequestToken=f"{token}-{attempt}"
                )
                return
            except ClientError as exc:
                if not _conflict(exc) or attempt == CONFLICT_ATTEMPTS - 1:
                    raise
                time.sleep(random.uniform(0, min(0.02 * 2**attempt, 1.0)))

    def of_turn(self, app_id: str, turn: int) -> list[Spent]:
        return [
            Spent(
                account=i["account"]["S"],
                app_id=app_id,
                turn=int(i["turn"]["N"]),
                round=int(i["round"]["N"]),
                model=i["model"]["S"],
                at=float(i["at"]["N"]),
                input_tokens=int(i["input_tokens"]["N"]),
                output_tokens=int(i["output_tokens"]["N"]),
                cached_tokens=int(i["cached_tokens"]["N"]),
                estimated=i["estimated"]["BOOL"],
                cost_micros=int(i["cost_micros"]["N"]) if "cost_micros" in i else None,
            )
            for i in self._query(
                "pk = :pk AND begins_with(sk, :turn)",
                {":pk": {"S": f"app#{app_id}"}, ":turn": {"S": f"req#{turn:08d}#"}},
            )
        ]

    def days(self, scope: Scope, key: str, first: str, last: str) -> list[DayUsage]:
        return [
            _day(i["sk"]["S"].removeprefix("day#"), i)
            for i in self._query(
                "pk = :pk AND sk BETWEEN :first AND :last",
                {
                    ":pk": {"S": f"{scope}#{key}"},
                    ":first": {"S": f"day#{first}"},
                    ":last": {"S": f"day#{last}"},
                },
            )
        ]

    def tallies(self, first: str, last: str) -> list[Tally]:
        """One query per day (at most a year's: MAX_DAYS), a few at once."""
        start, end = dt.date.fromisoformat(first), dt.date.fromisoformat(last)
        days = [(start + dt.timedelta(n)).isoformat() for n in range((end - start).days + 1)]
        with ThreadPoolExecutor(min(READERS, max(1, len(days)))) as pool:
            return [t for found in pool.map(self._tallies_of, days) for t in found]

    def _tallies_of(self, day: str) -> list[Tally]:
        found = []
        for i in self._query("pk = :pk", {":pk": {"S": f"day#{day}"}}):
            kind, _, key = i["sk"]["S"].partition("#")
            if kind == "account":
                found.append(Tally(group="account", key=key, usage=_day(day, i)))
            elif kind == "model":  # model#{shard}#{name}: the shards add up on reading
                found.append(Tally(group="model", key=key.partition("#")[2], usage=_day(day, i)))
        return found

    def budget_of(self, account: str) -> AccountBudget | None:
        item = self.client.get_item(
            TableName=self.table, Key=_budget_key(account), ConsistentRead=True
        ).get("Item")
        if item is None:
            return None
        return AccountBudget(*(int(item[k]["N"]) if k in item else None for k in _BUDGET))

    def set_budget(self, account: str, budget: AccountBudget) -> None:
        item: Item = {**_budget_key(account)}
        for name, value in zip(_BUDGET, (budget.per_day, budget.per_month), strict=True):
            if value is not None:
                item[name] = {"N": str(value)}
        self.client.put_item(TableName=self.table, Item=item)

    def clear_budget(self, account: str) -> None:
        self.client.delete_item(TableName=self.table, Key=_budget_key(account))

    def delete_app(self, app_id: str) -> None:
        keys = [
            {"pk": i["pk"], "sk": i["sk"]}
            for i in self._query("pk = :pk", {":pk": {"S": f"app#{app_id}"}}, keys_only=True)
        ]
        for at in range(0, len(keys), 25):  # BatchWriteItem takes 25 at a time
            batch_delete(self.client, self.table, keys[at : at + 25])

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


_BUDGET = ("per_day", "per_month")


def _budget_key(account: str) -> Item:
    return {"pk": {"S": f"account#{account}"}, "sk": {"S": "budget"}}


def _day(day: str, i: Item) -> DayUsage:
    return DayUsage(day=day, **{c: int(i[c]["N"]) for c in _COUNTS})


def _conflict(exc: ClientError) -> bool:
    """DynamoDB cancelled the transaction for another one on the same item (nothing of it
    was applied)."""
    code = error_code(exc)
    if code == "TransactionConflictException":
        return True
    reasons = exc.response.get("CancellationReasons", [])
    return code == "TransactionCanceledException" and any(
        r.get("Code") == "TransactionConflict" for r in reasons
    )
