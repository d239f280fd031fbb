"""TurnLog in DynamoDB: turns' events on AWS where there is no cache (the cheap profile).

One item per event: partition ``turn`` (``{appId}#{turn}``), sort ``seq``, the event's wire
``name`` and ``data``, and ``expires_at`` a day on (TTL). DynamoDB deletes expired items
late (up to days), so reads drop them themselves. An append is a conditional put of the
next number, so two writers can never both take one; a follower polls with consistent
reads while the turn runs (there is no blocking read in DynamoDB). Sequence number 0 holds
no event: it is the request to stop the turn, which the turn's process polls; the log's
entries are 1, 2, ...
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.dynamodb.tables import ensure_table
from zerocode.engine.events import TurnEvent
from zerocode.engine.turn_log import (
    KEEP_SECONDS,
    Logged,
    OutOfStep,
    check_batch,
    logged,
    polled,
)


def create_turn_events_table(client: Any, name: str) -> None:
    ensure_table(
        client,
        name,
        "turn",
        {"turn": "S", "seq": "N"},
        range_key="seq",
        ttl_attribute="expires_at",
    )


class DynamoTurnLog:
    def __init__(
        self,
        client: Any,
        table: str,
        keep_seconds: float = KEEP_SECONDS,
        poll_seconds: float = 0.5,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.client, self.table, self.keep_seconds = client, table, keep_seconds
        self.poll_seconds, self.now = poll_seconds, now

    @staticmethod
    def _pk(app_id: str, turn: int) -> dict[str, str]:
        return {"S": f"{app_id}#{turn}"}

    async def append(self, app_id: str, turn: int, event: TurnEvent) -> Logged:
        return await asyncio.to_thread(self._append, app_id, turn, event)

    def _append(self, app_id: str, turn: int, event: TurnEvent) -> Logged:
        while True:
            last = self._query(app_id, turn, 0, newest=True)
            if last and last[0].done:
                raise ValueError(f"turn {turn} of app {app_id} has ended: its log is closed")
            entry = logged(turn, (last[0].seq if last else 0) + 1, event)
            if self._put(app_id, entry):
                return entry
            # another writer took that number: read again

    async def append_many(self, app_id: str, turn: int, entries: Sequence[Logged]) -> None:
        check_batch(entries)
        if entries:
            await asyncio.to_thread(self._append_many, app_id, turn, entries)

    def _append_many(self, app_id: str, turn: int, entries: Sequence[Logged]) -> None:
        """One conditional put per entry (DynamoDB has no cheaper ordered append), all in
        one thread hop; each number can be taken once, so a lost race is OutOfStep."""
        last = self._query(app_id, turn, 0, newest=True)
        newest = last[0].seq if last else 0
        if last and last[0] == entries[-1]:
            return  # written already: a retry
        if last and last[0].done:
            raise ValueError(f"turn {turn} of app {app_id} has ended: its log is closed")
        if newest != entries[0].seq - 1:
            raise OutOfStep(f"turn {turn} of app {app_id}: {entries[0].id} after {newest}")
        for entry in entries:
            if not self._put(app_id, entry):
                raise OutOfStep(f"turn {turn} of app {app_id}: {entry.id} was taken")

    def _put(self, app_id: str, entry: Logged) -> bool:
        """Write the entry under its number; False when that number is taken."""
        try:
            self.client.put_item(
                TableName=self.table,
                Item={
                    "turn": self._pk(app_id, entry.turn),
                    "seq": {"N": str(entry.seq)},
                    "name": {"S": entry.name},
                    "data": {"S": entry.data},
                    "expires_at": {"N": str(int(self.now() + self.keep_seconds))},
                },
                ConditionExpression="attribute_not_exists(seq)",
            )
        except ClientError as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def _query(self, app_id: str, turn: int, after: int, *, newest: bool = False) -> list[Logged]:
        params: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "#t = :t AND #s > :after",
            "ExpressionAttributeNames": {"#t": "turn", "#s": "seq"},
            "ExpressionAttributeValues": {
                ":t": self._pk(app_id, turn),
                ":after": {"N": str(max(after, 0))},
            },
            "ConsistentRead": True,
            "ScanIndexForward": not newest,
        }
        if newest:
            params["Limit"] = 1
        found: list[Logged] = []
        now = self.now()
        while True:
            page = self.client.query(**params)
            for item in page.get("Items", []):
                if float(item["expires_at"]["N"]) <= now:
                    continue  # expired: TTL has not deleted it yet
                found.append(
                    Logged(
                        turn=turn,
                        seq=int(item["seq"]["N"]),
                        name=item["name"]["S"],
                        data=item["data"]["S"],
                    )
                )
            if newest or "LastEvaluatedKey" not in page:
                return found
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    async def read(self, app_id: str, turn: int, after: int = 0) -> list[Logged]:
        return await asyncio.to_thread(self._query, app_id, turn, after)

    async def follow(self, app_id: str, turn: int, after: int = 0) -> AsyncIterator[Logged]:
        if not await self._known(app_id, turn):
            return
        reader = functools.partial(self.read, app_id, turn)
        ended = functools.partial(asyncio.to_thread, self._ended_at, app_id, turn)
        async for entry in polled(reader, ended, after, self.poll_seconds):
            yield entry

    def _ended_at(self, app_id: str, turn: int) -> int | None:
        last = self._query(app_id, turn, 0, newest=True)
        if not last:
            return 0  # expired
        return last[0].seq if last[0].done else None

    async def _known(self, app_id: str, turn: int) -> bool:
        return await self.last(app_id, turn) is not None

    async def last(self, app_id: str, turn: int) -> Logged | None:
        found = await asyncio.to_thread(self._query, app_id, turn, 0, newest=True)
        return found[0] if found else None

    async def begin(self, app_id: str, turn: int) -> None:
        await asyncio.to_thread(self._begin, app_id, turn)

    def _begin(self, app_id: str, turn: int) -> None:
        params: dict[str, Any] = {
            "TableName": self.table,
            "KeyConditionExpression": "#t = :t",
            "ExpressionAttributeNames": {"#t": "turn"},
            "ExpressionAttributeValues": {":t": self._pk(app_id, turn)},
            "ProjectionExpression": "seq",
            "ConsistentRead": True,
        }
        while True:
            page = self.client.query(**params)
            for item in page.get("Items", []):
                self.client.delete_item(
                    TableName=self.table, Key={"turn": self._pk(app_id, turn), "seq": item["seq"]}
                )
            if "LastEvaluatedKey" not in page:
                return
            params["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    async def request_stop(self, app_id: str, turn: int) -> None:
        await asyncio.to_thread(
            self.client.put_item,
            TableName=self.table,
            Item={
                "turn": self._pk(app_id, turn),
                "seq": {"N": "0"},
                "name": {"S": "stop"},
                "data": {"S": ""},
                "expires_at": {"N": str(int(self.now() + self.keep_seconds))},
            },
        )

    async def stop_requested(self, app_id: str, turn: int) -> bool:
        answer = await asyncio.to_thread(
            self.client.get_item,
            TableName=self.table,
            Key={"turn": self._pk(app_id, turn), "seq": {"N": "0"}},
            ConsistentRead=True,
        )
        item = answer.get("Item")
        return item is not None and float(item["expires_at"]["N"]) > self.now()
