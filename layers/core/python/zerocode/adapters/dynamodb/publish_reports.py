"""The DynamoDB PublishReports (zerocode/publishing/publish_report.py), in the checks table:
the app's partition, one item per deploy build's report under the sort key
``report#{buildId}`` (beside the suite's ``check#``, ``run#`` and ``deploy#`` items; deleting
the app's checks deletes them too). A report is at most a few tens of KB (its checks' lines
are bounded), well inside an item's 400 KB."""

from __future__ import annotations

import json
import time
from typing import Any

from zerocode.adapters.dynamodb.checks import SORT_KEY
from zerocode.adapters.dynamodb.tables import Item, batch_delete, query_partition
from zerocode.errors import ZerocodeError
from zerocode.publishing.publish_report import PublishReport, ReportState, Summary, Tally

REPORT = "report#"
_NAMES = {"#st": "state", "#sk": SORT_KEY}
_SUMMARY = "#sk, #st, started_at, passed, failed, not_run"


class DynamoPublishReports:
    def __init__(self, client: Any, table: str) -> None:
        self.client, self.table = client, table

    def _key(self, app_id: str, build_id: str) -> Item:
        return {"app_id": {"S": app_id}, SORT_KEY: {"S": REPORT + build_id}}

    def put(self, report: PublishReport) -> None:
        tally = report.tally()
        item = self._key(report.app_id, report.build_id) | {
            "state": {"S": report.state.value},
            "started_at": {"N": repr(float(report.started_at))},
            "body": {"S": json.dumps(report.body())},
            "passed": {"N": str(tally.passed)},
            "failed": {"N": str(tally.failed)},
            "not_run": {"N": str(tally.not_run)},
        }
        if report.finished_at is not None:
            item["finished_at"] = {"N": repr(float(report.finished_at))}
        self.client.put_item(TableName=self.table, Item=item)

    def get(self, app_id: str, build_id: str) -> PublishReport | None:
        item = self.client.get_item(
            TableName=self.table, Key=self._key(app_id, build_id), ConsistentRead=True
        ).get("Item")
        if item is None:
            return None
        return PublishReport.of(
            app_id,
            build_id,
            item["state"]["S"],
            float(item["started_at"]["N"]),
            float(item["finished_at"]["N"]) if "finished_at" in item else None,
            json.loads(item["body"]["S"]),
        )

    def summaries(self, app_id: str, build_ids: list[str]) -> dict[str, Summary]:
        """One BatchGetItem per 100 builds (a page of the builds list has at most 50)."""
        found: dict[str, Summary] = {}
        unique = list(dict.fromkeys(build_ids))
        for start in range(0, len(unique), 100):
            keys = [self._key(app_id, b) for b in unique[start : start + 100]]
            for item in self._batch_get(keys):
                build_id = item[SORT_KEY]["S"].removeprefix(REPORT)
                found[build_id] = Summary(
                    ReportState(item["state"]["S"]),
                    float(item["started_at"]["N"]),
                    Tally(*(int(item[k]["N"]) for k in ("passed", "failed", "not_run"))),
                )
        return found

    def _batch_get(self, keys: list[Item], attempts: int = 8) -> list[Item]:
        items: list[Item] = []
        request: dict[str, Any] = {
            self.table: {
                "Keys": keys,
                "ConsistentRead": True,
                "ProjectionExpression": _SUMMARY,
                "ExpressionAttributeNames": _NAMES,
            }
        }
        for attempt in range(attempts):
            answer = self.client.batch_get_item(RequestItems=request)
            items += answer.get("Responses", {}).get(self.table, [])
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                return items
            time.sleep(min(0.05 * 2**attempt, 2.0))  # throttled: back off as AWS advises
        raise ZerocodeError(f"DynamoDB left reads of {self.table} unprocessed")

    def delete_app(self, app_id: str) -> int:
        """The app's reports (its whole partition goes with its checks anyway)."""
        keys: list[Item] = []
        params: dict[str, Any] = {}
        while True:
            page = query_partition(
                self.client,
                self.table,
                app_id,
                KeyConditionExpression="#app = :a AND begins_with(#sk, :p)",
                ExpressionAttributeValues={":a": {"S": app_id}, ":p": {"S": REPORT}},
                ExpressionAttributeNames={"#sk": SORT_KEY},
                ProjectionExpression="#app, #sk",
                **params,
            )
            keys += page["Items"]
            if "LastEvaluatedKey" not in page:
                break
            params = {"ExclusiveStartKey": page["LastEvaluatedKey"]}
        for start in range(0, len(keys), 25):
            batch_delete(self.client, self.table, keys[start : start + 25])
        return len(keys)
