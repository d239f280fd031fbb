"""The DynamoDB UsageLedger: one table, one partition per app and per account.

- ``app#{appId}`` / ``req#{turn:08d}#{at}#{random}``: one model request, in time order
  within its turn;
- ``app#{appId}`` / ``day#{YYYY-MM-DD}`` and ``account#{owner}`` / ``day#{YYYY-MM-DD}``:
  that day's sums, added to with ``ADD``.

A request and both days go in one TransactWriteItems, so the days always add up to the
requests (botocore's own retries of it are idempotent by its token). Two requests of one
app or account ending at once may conflict on a day item: the one DynamoDB cancels is sent
again, with a new token (nothing of it was applied), a few times. Deleting an app queries
its one partition and deletes it; its owner's days stay.
"""

from __future__ import annotations

import random
import secrets
import time
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from zerocode.accounts.usage import DayUsage, Scope, Spent
from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import Item, batch_delete, ensure_table

_COUNTS = (
    "requests",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "estimated",
    "cost_micros",
    "unpriced",
)
CONFLICT_ATTEMPTS = 8


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
        items = [
            {"Put": {"TableName": self.table, "Item": request}},
            *(
                {"Update": {**day, "Key": {"pk": {"S": pk}, "sk": {"S": f"day#{spent.day}"}}}}
                for pk in (f"app#{spent.app_id}", f"account#{spent.account}")
            ),
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
            DayUsage(
                day=i["sk"]["S"].removeprefix("day#"),
                requests=int(i["requests"]["N"]),
                input_tokens=int(i["input_tokens"]["N"]),
                output_tokens=int(i["output_tokens"]["N"]),
                cached_tokens=int(i["cached_tokens"]["N"]),
                estimated=int(i["estimated"]["N"]),
                cost_micros=int(i["cost_micros"]["N"]),
                unpriced=int(i["unpriced"]["N"]),
            )
            for i in self._query(
                "pk = :pk AND sk BETWEEN :first AND :last",
                {
                    ":pk": {"S": f"{scope}#{key}"},
                    ":first": {"S": f"day#{first}"},
                    ":last": {"S": f"day#{last}"},
                },
            )
        ]

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
