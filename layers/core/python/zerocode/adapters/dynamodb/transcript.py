"""DynamoDB adapters: the serverless backend (one table per port, partition key ``app_id``).

Transcript appends are one ``TransactWriteItems``: a step's entries land together or not
at all (M2). Large message bodies are compressed and, past the item limit, kept in S3 so a
long file written by a tool never makes a turn fail. Reads always query the newest items
of one partition with a limit: no Scan, no Count (M6). Reads are strongly consistent, so a
turn that starts right after another one sees everything the other one wrote.
"""

from __future__ import annotations

import logging
import time
import uuid
import zlib
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code, error_message
from zerocode.adapters.dynamodb.tables import (
    Item,
    app_key,
    create_partition_table,
    delete_partition,
    item_size,
    query_newest,
)
from zerocode.errors import Conflict, PayloadTooLarge, ZerocodeError
from zerocode.memory.transcript import (
    EMPTY_HEAD,
    Entry,
    Head,
    check_continues,
    entry_attributes,
    entry_from_attributes,
    expires_at,
    head_from_attributes,
)

log = logging.getLogger(__name__)

# Bodies up to 8 KB stay readable JSON text; bigger ones (files written or read by tools)
# are zlib-compressed, which typically shrinks source code 4-10x and with it the write cost
# (DynamoDB bills per KB written).
COMPRESS_OVER = 8 * 1024
# DynamoDB items are capped at 400 KB, names and all: past 300 KB compressed the body goes
# to S3 and the item keeps only the object key.
INLINE_MAX = 300 * 1024
# One transaction holds at most 100 actions and 4 MB of items; keep room for the head
# check and for the error in our size estimate.
MAX_ENTRIES = 99
TRANSACTION_BUDGET = 3_800_000

_ENTRY_NUMBERS = ("seq", "turn", "unit", "turn_start", "covers")
_ENTRY_STRINGS = ("kind", "uid")


def create_transcript_table(client: Any, name: str) -> None:
    """Sort key ``seq`` is numeric so query order is append order past 9, 99, 999..."""
    create_partition_table(client, name, "seq", "N")


class DynamoTranscriptStore:
    def __init__(
        self,
        client: Any,
        table: str,
        *,
        retention_days: int = 0,
        s3: Any = None,
        payload_bucket: str | None = None,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.client, self.table, self.retention_days = client, table, retention_days
        self.s3, self.payload_bucket, self.now = s3, payload_bucket, now

    def head(self, app_id: str) -> Head:
        items = query_newest(
            self.client,
            self.table,
            app_id,
            1,
            ProjectionExpression="#seq, #turn, #ts, #kind, #uid",
            ExpressionAttributeNames={
                "#seq": "seq",
                "#turn": "turn",
                "#ts": "turn_start",
                "#kind": "kind",
                "#uid": "uid",
            },
        )
        if not items:
            return EMPTY_HEAD
        return head_from_attributes(
            app_id,
            {k: next(iter(v.values()), None) for k, v in items[0].items() if isinstance(v, dict)},
        )

    def append(self, app_id: str, entries: Sequence[Entry], expected_head: int) -> None:
        """Write ``entries`` in one transaction, or raise Conflict and write nothing.

        Each Put requires its seq to be free, so a writer behind the head collides on
        ``expected_head + 1``; the ConditionCheck requires ``expected_head`` to exist, so a
        writer ahead of the head (say, of a transcript deleted meanwhile) fails too.
        """
        check_continues(entries, expected_head)
        if len(entries) > MAX_ENTRIES:
            raise ValueError(
                f"a transcript append holds at most {MAX_ENTRIES} entries "
                f"(one DynamoDB transaction), got {len(entries)}"
            )
        items, uploads = self._encode(app_id, entries)
        actions: list[dict[str, Any]] = [
            {
                "Put": {
                    "TableName": self.table,
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(seq)",
                }
            }
            for item in items
        ]
        if expected_head > 0:
            actions.append(
                {
                    "ConditionCheck": {
                        "TableName": self.table,
                        "Key": app_key(app_id, "seq", {"N": str(expected_head)}),
                        "ConditionExpression": "attribute_exists(seq)",
                    }
                }
            )
        try:
            for key, blob in uploads:
                self.s3.put_object(Bucket=self.payload_bucket, Key=key, Body=blob)
            # The token makes botocore's retry after a lost response idempotent, instead of
            # a spurious Conflict against our own first attempt.
            self.client.transact_write_items(
                TransactItems=actions, ClientRequestToken=uuid.uuid4().hex
            )
        except ClientError as exc:
            # AWS answered no, so nothing was written. (After a timeout the step may have
            # landed: its payloads stay, and delete_app sweeps any that are orphans.)
            self._forget(uploads)
            if error_code(exc) == "TransactionCanceledException" and _lost_race(exc):
                raise Conflict(
                    f"transcript of app {app_id} is not at seq {expected_head} as "
                    f"this writer expected; another turn is writing"
                ) from exc
            raise

    def _encode(
        self, app_id: str, entries: Sequence[Entry]
    ) -> tuple[list[Item], list[tuple[str, bytes]]]:
        """Items to put, and the S3 objects to upload first for bodies that do not fit."""
        expires = expires_at(self.retention_days, self.now())
        items: list[Item] = []
        for entry in entries:
            attrs = entry_attributes(entry)
            item: Item = {"app_id": {"S": app_id}}
            item.update({k: {"N": str(attrs[k])} for k in _ENTRY_NUMBERS})
            item.update({k: {"S": str(attrs[k])} for k in _ENTRY_STRINGS})
            body = attrs["body"].encode()
            if len(body) > COMPRESS_OVER:
                item["bodyz"] = {"B": zlib.compress(body)}
            else:
                item["body"] = {"S": attrs["body"]}
            if expires is not None:
                item["expires_at"] = {"N": str(expires)}
            items.append(item)
        # Offload the largest compressed bodies: all that exceed the item limit, then more
        # while the transaction is over its size limit.
        total = sum(item_size(i) for i in items)
        uploads: list[tuple[str, bytes]] = []
        for item in sorted((i for i in items if "bodyz" in i), key=lambda i: -len(i["bodyz"]["B"])):
            blob = item["bodyz"]["B"]
            if len(blob) <= INLINE_MAX and total <= TRANSACTION_BUDGET:
                break
            key = f"transcript/{app_id}/{int(item['seq']['N']):012d}-{item['uid']['S']}.json.z"
            del item["bodyz"]
            item["bodyref"] = {"S": key}
            total += len(key) - len(blob)
            uploads.append((key, blob))
        if uploads and not (self.s3 and self.payload_bucket):
            raise PayloadTooLarge(
                f"transcript of app {app_id}: {len(uploads)} message(s) too "
                f"large to store in DynamoDB and no payload bucket is set"
            )
        if total > TRANSACTION_BUDGET:
            raise PayloadTooLarge(
                f"transcript of app {app_id}: a step of {len(items)} entries "
                f"needs {total} bytes, over one transaction's limit"
            )
        return items, uploads

    def _forget(self, uploads: list[tuple[str, bytes]]) -> None:
        """Remove payloads of a failed append (best effort; delete_app sweeps leftovers)."""
        for key, _ in uploads:
            try:
                self.s3.delete_object(Bucket=self.payload_bucket, Key=key)
            except ClientError as exc:
                log.warning("could not remove payload %s of a failed append: %s", key, exc)

    def tail(self, app_id: str, limit: int) -> list[Entry]:
        items = query_newest(self.client, self.table, app_id, limit)
        return [self._decode(app_id, item) for item in reversed(items)]

    def get(self, app_id: str, seq: int) -> Entry | None:
        item = self.client.get_item(
            TableName=self.table, ConsistentRead=True, Key=app_key(app_id, "seq", {"N": str(seq)})
        ).get("Item")
        return self._decode(app_id, item) if item else None

    def _decode(self, app_id: str, item: Item) -> Entry:
        """Never raises: a body we cannot restore makes an unreadable entry."""
        attrs: dict[str, Any] = {
            k: next(iter(v.values()), None) for k, v in item.items() if isinstance(v, dict)
        }
        try:
            attrs["body"] = self._body(item)
        except Exception as exc:  # any bad stored data, S3 or zlib failure
            log.error(
                "cannot restore transcript body app=%s seq=%s: %s",
                app_id,
                attrs.get("seq"),
                exc,
                extra={"app_id": app_id, "seq": attrs.get("seq")},
            )
            attrs["body"] = None
            entry = entry_from_attributes(app_id, attrs)
            return replace(entry, error=f"cannot restore body: {exc}")
        return entry_from_attributes(app_id, attrs)

    def _body(self, item: Item) -> str:
        if "body" in item:
            return str(item["body"]["S"])
        if "bodyz" in item:
            return zlib.decompress(item["bodyz"]["B"]).decode()
        if "bodyref" in item:
            if not (self.s3 and self.payload_bucket):
                raise ValueError("body is in S3 but no payload bucket is set")
            obj = self.s3.get_object(Bucket=self.payload_bucket, Key=item["bodyref"]["S"])
            return zlib.decompress(obj["Body"].read()).decode()
        raise ValueError("item has no body")

    def delete_app(self, app_id: str) -> int:
        deleted = delete_partition(self.client, self.table, app_id, "seq")
        if self.s3 and self.payload_bucket:
            pages = self.s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.payload_bucket, Prefix=f"transcript/{app_id}/"
            )
            for page in pages:
                keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                if keys:
                    errors = self.s3.delete_objects(
                        Bucket=self.payload_bucket, Delete={"Objects": keys}
                    ).get("Errors")
                    if errors:
                        raise ZerocodeError(
                            f"could not delete payloads of app {app_id}: {errors[:3]}"
                        )
        return deleted


def _lost_race(exc: ClientError) -> bool:
    """True when a condition failed or a concurrent transaction held one of our items."""
    codes = [r.get("Code") for r in exc.response.get("CancellationReasons", [])]
    if not codes:  # older SDKs only have the reasons in the message text
        message = error_message(exc)
        return "ConditionalCheckFailed" in message or "TransactionConflict" in message
    return "ConditionalCheckFailed" in codes or "TransactionConflict" in codes
