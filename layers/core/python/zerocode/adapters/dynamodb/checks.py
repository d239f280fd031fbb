"""The DynamoDB CheckStore: an app's acceptance suite and its runs in one table (issue 25).

One partition per app (``app_id``), items told apart by a typed sort key ``sk``:

* ``check#0000000007``: check c7 (its JSON, the turn that added it; once retired, why
  and by which turn). Numbers are zero-padded so text order is number order.
* ``counter#check``: ``last`` (the last check number given) and ``live`` (checks not
  retired). Adding a check is one transaction: the counter moves from the ``last`` the
  writer read (and only while ``live`` is under MAX_CHECKS) and the check is put where
  none is, so two writers can never both take c7 nor both take the fiftieth place; the
  loser reads again. Retiring is one transaction too: the check's update (only when it
  exists and is not retired) with ``live`` counted down.
* ``run#0000000007``: run 7 (its fields and the results as encoded JSON, screenshots
  apart). A run is a conditional put of the number after the newest run's, as the turn
  log's appends are; a collision reads again. Past MAX_RUNS the oldest runs go, with
  their screenshots.
* ``shot#0000000007#c2``: the screenshot of c2's failure in run 7 (binary), only when
  ``kept_screenshot`` keeps it (at most MAX_SCREENSHOT bytes, well within the 400 KB item).
  Put after their run, one by one (a run's screenshots can outgrow a transaction's 4 MB):
  a writer stopped between keeps the run, and ``screenshot`` answers None for the rest.
* ``deploy#<buildId>``: the suite's tally for the version a deploy build published.

Reads are Queries of one partition (strongly consistent), never a Scan.
"""

from __future__ import annotations

import builtins
import json
import uuid
from dataclasses import replace
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import (
    Item,
    batch_delete,
    delete_partition,
    ensure_table,
    query_newest,
)
from zerocode.engine.acceptance import Check, CheckInvalid, parse_check
from zerocode.engine.check_suite import (
    MAX_CHECKS,
    MAX_RUNS,
    StoredCheck,
    SuiteRun,
    Tally,
    check_id,
    check_number,
    decode_results,
    encode,
    encode_results,
    kept_screenshot,
    retire_reason,
)
from zerocode.errors import Conflict, NotFound

SORT_KEY = "sk"
CHECK, RUN, SHOT, DEPLOY = "check#", "run#", "shot#", "deploy#"
CHECK_COUNTER = "counter#check"
# A writer that keeps losing races this many times in a row gives up with a Conflict.
ATTEMPTS = 25
_KEY_MAX = 1024  # bytes of a sort key


def create_checks_table(client: Any, name: str) -> None:
    ensure_table(client, name, "app_id", {"app_id": "S", SORT_KEY: "S"}, range_key=SORT_KEY)


def _number(n: int) -> str:
    return f"{n:010d}"


def _shot_key(run: int, check_id_: str) -> str:
    return f"{SHOT}{_number(run)}#{check_id_}"


class DynamoCheckStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client, self.table = client, table

    def _key(self, app_id: str, sk: str) -> Item:
        return {"app_id": {"S": app_id}, SORT_KEY: {"S": sk}}

    # -- checks ---------------------------------------------------------------------------

    def add(self, app_id: str, check: Check, turn: int) -> StoredCheck:
        body = encode(check)
        for _ in range(ATTEMPTS):
            counter = self._get(app_id, CHECK_COUNTER) or {}
            last = int(counter["last"]["N"]) if "last" in counter else 0
            live = int(counter["live"]["N"]) if "live" in counter else 0
            if live >= MAX_CHECKS:
                raise CheckInvalid(
                    f"the app has {MAX_CHECKS} checks; retire one that no longer applies first"
                )
            n = last + 1
            values: dict[str, Any] = {":n": {"N": str(n)}, ":one": {"N": "1"}}
            if last:
                condition = "#last = :prev AND #live < :max"
                values[":prev"] = {"N": str(last)}
                values[":max"] = {"N": str(MAX_CHECKS)}
            else:
                condition = "attribute_not_exists(#last)"
            item = self._key(app_id, CHECK + _number(n))
            item["body"] = {"S": body}
            item["added_turn"] = {"N": str(turn)}
            actions = [
                {
                    "Update": {
                        "TableName": self.table,
                        "Key": self._key(app_id, CHECK_COUNTER),
                        "UpdateExpression": "SET #last = :n ADD #live :one",
                        "ConditionExpression": condition,
                        "ExpressionAttributeNames": {"#last": "last", "#live": "live"},
                        "ExpressionAttributeValues": values,
                    }
                },
                {
                    "Put": {
                        "TableName": self.table,
                        "Item": item,
                        "ConditionExpression": "attribute_not_exists(#sk)",
                        "ExpressionAttributeNames": {"#sk": SORT_KEY},
                    }
                },
            ]
            if self._transact(actions):
                return StoredCheck(id=check_id(n), check=check, added_turn=turn)
        raise Conflict(f"could not add a check to app {app_id}: too many writers at once")

    def retire(self, app_id: str, check_id_: str, reason: str, turn: int) -> StoredCheck:
        why = retire_reason(reason)
        n = check_number(check_id_)
        if n is None:
            raise NotFound(f"check {check_id_[:20]} not found")
        sk = CHECK + _number(n)
        actions = [
            {
                "Update": {
                    "TableName": self.table,
                    "Key": self._key(app_id, sk),
                    "UpdateExpression": "SET #r = :why, #rt = :turn",
                    "ConditionExpression": "attribute_exists(#sk) AND attribute_not_exists(#r)",
                    "ExpressionAttributeNames": {
                        "#sk": SORT_KEY,
                        "#r": "retired",
                        "#rt": "retired_turn",
                    },
                    "ExpressionAttributeValues": {
                        ":why": {"S": why},
                        ":turn": {"N": str(turn)},
                    },
                }
            },
            {
                "Update": {
                    "TableName": self.table,
                    "Key": self._key(app_id, CHECK_COUNTER),
                    "UpdateExpression": "ADD #live :minus",
                    "ExpressionAttributeNames": {"#live": "live"},
                    "ExpressionAttributeValues": {":minus": {"N": "-1"}},
                }
            },
        ]
        for _ in range(ATTEMPTS):
            if self._transact(actions):
                break
            # Cancelled: no such check, retired already, or (retried) a concurrent write.
            item = self._get(app_id, sk)
            if item is None:
                raise NotFound(f"check {check_id_} not found")
            if "retired" in item:
                raise Conflict(f"check {check_id_} is retired already")
        else:
            raise Conflict(f"could not retire check {check_id_}: too many writers at once")
        item = self._get(app_id, sk)
        assert item is not None  # retired checks are kept; only delete_app removes them
        return _stored_check(item)

    def list(self, app_id: str) -> list[StoredCheck]:
        return [_stored_check(i) for i in self._all(app_id, CHECK)]

    # -- runs -----------------------------------------------------------------------------

    def record_run(self, app_id: str, run: SuiteRun) -> SuiteRun:
        results = encode_results(run.results)
        for _ in range(ATTEMPTS):
            newest = self._newest(app_id, RUN, 1)
            n = int(newest[0][SORT_KEY]["S"].removeprefix(RUN)) + 1 if newest else 1
            item = self._key(app_id, RUN + _number(n))
            item["turn"] = {"N": str(run.turn)}
            item["round"] = {"N": str(run.round)}
            item["at"] = {"N": repr(float(run.at))}
            item["results"] = {"S": results}
            for name, value in (
                ("build_id", run.build_id),
                ("digest", run.digest),
                ("why_not_run", run.why_not_run),
            ):
                if value is not None:
                    item[name] = {"S": value}
            try:
                self.client.put_item(
                    TableName=self.table,
                    Item=item,
                    ConditionExpression="attribute_not_exists(#sk)",
                    ExpressionAttributeNames={"#sk": SORT_KEY},
                )
            except ClientError as exc:
                if error_code(exc) == "ConditionalCheckFailedException":
                    continue  # another writer took that number: read again
                raise
            break
        else:
            raise Conflict(f"could not record a run of app {app_id}: too many writers at once")
        for result in run.results:
            shot = kept_screenshot(result)
            key = self._key(app_id, _shot_key(n, result.check_id))
            if shot is not None and len(key[SORT_KEY]["S"].encode()) <= _KEY_MAX:
                self.client.put_item(TableName=self.table, Item={**key, "png": {"B": shot}})
        if n > MAX_RUNS:
            self._drop_runs(app_id, n - MAX_RUNS)
        return replace(run, number=n, results=decode_results(results))

    def _drop_runs(self, app_id: str, upto: int) -> None:
        """Delete runs 1..``upto`` and their screenshots (normally one run goes per run).
        Run ``upto + 1``'s bare prefix sorts after every screenshot key of run ``upto``."""
        for low, high in ((RUN, RUN + _number(upto)), (SHOT, SHOT + _number(upto + 1))):
            keys = self._keys_between(app_id, low, high)
            for start in range(0, len(keys), 25):
                batch_delete(self.client, self.table, keys[start : start + 25])

    def runs(self, app_id: str, limit: int = 20) -> builtins.list[SuiteRun]:
        return [_suite_run(i) for i in self._newest(app_id, RUN, limit)]

    def screenshot(self, app_id: str, run: int, check_id_: str) -> bytes | None:
        sk = _shot_key(run, check_id_)
        if len(sk.encode()) > _KEY_MAX:
            return None
        item = self._get(app_id, sk)
        return bytes(item["png"]["B"]) if item else None

    # -- deploys and deletion -------------------------------------------------------------

    def stamp_deploy(self, app_id: str, build_id: str, tally: Tally) -> None:
        self.client.put_item(
            TableName=self.table,
            Item={
                **self._key(app_id, DEPLOY + build_id),
                "tally": {"S": json.dumps(tally.to_json())},
            },
        )

    def deploy_stamps(self, app_id: str) -> dict[str, Tally]:
        return {
            i[SORT_KEY]["S"].removeprefix(DEPLOY): Tally.from_json(json.loads(i["tally"]["S"]))
            for i in self._all(app_id, DEPLOY)
        }

    def delete_app(self, app_id: str) -> None:
        delete_partition(self.client, self.table, app_id, SORT_KEY)

    # -- reads ----------------------------------------------------------------------------

    def _get(self, app_id: str, sk: str) -> Item | None:
        item: Item | None = self.client.get_item(
            TableName=self.table, ConsistentRead=True, Key=self._key(app_id, sk)
        ).get("Item")
        return item

    def _newest(self, app_id: str, prefix: str, limit: int) -> builtins.list[Item]:
        return query_newest(
            self.client,
            self.table,
            app_id,
            limit,
            KeyConditionExpression="#app = :a AND begins_with(#sk, :p)",
            ExpressionAttributeNames={"#sk": SORT_KEY},
            ExpressionAttributeValues={":a": {"S": app_id}, ":p": {"S": prefix}},
        )

    def _all(self, app_id: str, prefix: str) -> builtins.list[Item]:
        """Every item of the app whose sort key starts with ``prefix``, in key order."""
        return self._query(
            {
                "KeyConditionExpression": "#app = :a AND begins_with(#sk, :p)",
                "ExpressionAttributeNames": {"#app": "app_id", "#sk": SORT_KEY},
                "ExpressionAttributeValues": {":a": {"S": app_id}, ":p": {"S": prefix}},
            }
        )

    def _keys_between(self, app_id: str, low: str, high: str) -> builtins.list[Item]:
        return self._query(
            {
                "KeyConditionExpression": "#app = :a AND #sk BETWEEN :low AND :high",
                "ExpressionAttributeNames": {"#app": "app_id", "#sk": SORT_KEY},
                "ExpressionAttributeValues": {
                    ":a": {"S": app_id},
                    ":low": {"S": low},
                    ":high": {"S": high},
                },
                "ProjectionExpression": "#app, #sk",
            }
        )

    def _query(self, params: dict[str, Any]) -> builtins.list[Item]:
        items: builtins.list[Item] = []
        while True:
            page = self.client.query(TableName=self.table, ConsistentRead=True, **params)
            items += page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return items
            params = {**params, "ExclusiveStartKey": page["LastEvaluatedKey"]}

    def _transact(self, actions: builtins.list[dict[str, Any]]) -> bool:
        """True when written; False when cancelled (a condition failed, or a concurrent
        transaction held one of the items): nothing was written then."""
        try:
            # The token makes botocore's retry after a lost response idempotent.
            self.client.transact_write_items(
                TransactItems=actions, ClientRequestToken=uuid.uuid4().hex
            )
        except ClientError as exc:
            if error_code(exc) == "TransactionCanceledException":
                return False
            raise
        return True


def _stored_check(item: Item) -> StoredCheck:
    return StoredCheck(
        id=check_id(int(item[SORT_KEY]["S"].removeprefix(CHECK))),
        check=parse_check(json.loads(item["body"]["S"])),
        added_turn=int(item["added_turn"]["N"]),
        retired=item["retired"]["S"] if "retired" in item else None,
        retired_turn=int(item["retired_turn"]["N"]) if "retired_turn" in item else None,
    )


def _suite_run(item: Item) -> SuiteRun:
    def optional(name: str) -> str | None:
        return str(item[name]["S"]) if name in item else None

    return SuiteRun(
        number=int(item[SORT_KEY]["S"].removeprefix(RUN)),
        turn=int(item["turn"]["N"]),
        round=int(item["round"]["N"]),
        build_id=optional("build_id"),
        digest=optional("digest"),
        at=float(item["at"]["N"]),
        results=decode_results(item["results"]["S"]),
        why_not_run=optional("why_not_run"),
    )
