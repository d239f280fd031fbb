"""DynamoDB build records: one partition per app, sorted by build id (= request order)."""

from __future__ import annotations

from typing import Any

from zerocode.adapters.dynamodb.tables import Item, batch_delete, ensure_table
from zerocode.apps.records import CodeGenType, check_limit
from zerocode.publishing.builds import Build, BuildPage, BuildPurpose, BuildState, check_build_id

_STRINGS = ("id", "app_id", "source_digest", "log_tail")
_OPTIONAL_STRINGS = ("output", "error", "runner_id")
_OPTIONAL_NUMBERS = ("started_at", "finished_at")


def create_builds_table(client: Any, name: str) -> None:
    ensure_table(client, name, "app_id", {"app_id": "S", "id": "S"}, range_key="id")


class DynamoBuildStore:
    def __init__(self, client: Any, table: str) -> None:
        self.client, self.table = client, table

    def put(self, build: Build) -> None:
        self.client.put_item(TableName=self.table, Item=_item(build))

    def get(self, app_id: str, build_id: str) -> Build | None:
        item = self.client.get_item(
            TableName=self.table,
            ConsistentRead=True,
            Key={"app_id": {"S": app_id}, "id": {"S": build_id}},
        ).get("Item")
        return _build(item) if item else None

    def list(
        self,
        app_id: str,
        cursor: str | None = None,
        limit: int = 20,
        purpose: BuildPurpose | None = None,
    ) -> BuildPage:
        """Newest first. With ``purpose`` the filter applies after each read, so this reads
        on until it has a page (builds of one app are few: hundreds, not millions)."""
        check_limit(limit)
        params: dict[str, Any] = {
            "TableName": self.table,
            "ConsistentRead": True,
            "ScanIndexForward": False,
            "KeyConditionExpression": "app_id = :a",
            "ExpressionAttributeValues": {":a": {"S": app_id}},
        }
        if cursor is not None:
            params["KeyConditionExpression"] += " AND id < :c"
            params["ExpressionAttributeValues"][":c"] = {"S": check_build_id(cursor)}
        if purpose is not None:
            params["FilterExpression"] = "purpose = :p"
            params["ExpressionAttributeValues"][":p"] = {"S": purpose.value}
        found: list[Build] = []
        while len(found) <= limit:
            page = self.client.query(
                **params, Limit=limit + 1 - len(found) if purpose is None else 100
            )
            found += [_build(i) for i in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                break
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        builds = found[:limit]
        return BuildPage(builds, builds[-1].id if len(found) > limit else None)

    def delete_app(self, app_id: str) -> int:
        keys: list[Item] = []
        params: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "app_id = :a",
            "ExpressionAttributeValues": {":a": {"S": app_id}},
            "ProjectionExpression": "id",
        }
        while True:
            page = self.client.query(**params)
            keys += [{"app_id": {"S": app_id}, "id": i["id"]} for i in page.get("Items", [])]
            if "LastEvaluatedKey" not in page:
                break
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]
        for start in range(0, len(keys), 25):
            batch_delete(self.client, self.table, keys[start : start + 25])
        return len(keys)


def _item(build: Build) -> Item:
    item: Item = {k: {"S": getattr(build, k)} for k in _STRINGS}
    item.update({k: {"S": v} for k in _OPTIONAL_STRINGS if (v := getattr(build, k)) is not None})
    item.update(
        {
            k: {"N": repr(float(v))}
            for k in _OPTIONAL_NUMBERS
            if (v := getattr(build, k)) is not None
        }
    )
    item["purpose"] = {"S": build.purpose.value}
    item["kind"] = {"S": build.kind.value}
    item["state"] = {"S": build.state.value}
    item["created_at"] = {"N": repr(float(build.created_at))}
    return item


def _build(item: Item) -> Build:
    def opt_s(name: str) -> str | None:
        return str(item[name]["S"]) if name in item else None

    def opt_n(name: str) -> float | None:
        return float(item[name]["N"]) if name in item else None

    return Build(
        id=item["id"]["S"],
        app_id=item["app_id"]["S"],
        purpose=BuildPurpose(item["purpose"]["S"]),
        kind=CodeGenType(item["kind"]["S"]),
        source_digest=item["source_digest"]["S"],
        state=BuildState(item["state"]["S"]),
        created_at=float(item["created_at"]["N"]),
        started_at=opt_n("started_at"),
        finished_at=opt_n("finished_at"),
        log_tail=item["log_tail"]["S"],
        output=opt_s("output"),
        error=opt_s("error"),
        runner_id=opt_s("runner_id"),
    )
