"""Publisher over a CloudFront KeyValueStore, read at the edge by ``site_router.js``.

One ``PutKey`` flips a pointer for every edge location at once, and the build it names is
already in the bucket, so visitors never see a half-published site.

Every write is ETag-conditional, and the whole store has one ETag: *any* write to *any*
key changes it. So each write first reads the current ETag (``DescribeKeyValueStore``),
then writes with ``IfMatch``; a writer that lost a race to an unrelated key gets a
conflict, re-reads the ETag and tries again. After ``max_attempts`` it gives up with
:class:`zerocode.errors.Conflict` rather than spin while the store is busy.

The store holds 5 MB (a CloudFront quota), about 37,000 apps at a site and a preview
pointer each (docs/operations.md, "Site pointers: the KeyValueStore's ceiling"); the preview
sweep (``zerocode.publishing.eviction``) walks it with ``pointers`` and removes stale preview
pointers with ``remove_if``, and ``size`` reports what it holds.

The data-plane API is signed with SigV4A, which botocore does only with ``awscrt``
installed (``botocore[crt]``); without it every call fails before reaching AWS.

With the pointer table as the truth the store is its hot set, and :class:`HotSetLedger`
keeps the order of its promotions (``zerocode.publishing.hot_set``) in that table, with only
the calls a publisher may make there (GetItem, UpdateItem).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code, error_message
from zerocode.errors import Conflict
from zerocode.publishing.hot_set import RING_SLOTS, RingFull, Slot
from zerocode.publishing.pointers import SiteTarget
from zerocode.publishing.prerender import routes_value

_MISSING = {"ResourceNotFoundException"}
# A stale IfMatch; S3-style codes too, in case a proxy or emulator speaks those.
_STALE = {"ConflictException", "PreconditionFailed", "412", "409"}


def _stale_etag(exc: ClientError) -> bool:
    """Whether ``exc`` means another write changed the store's ETag under us."""
    code = error_code(exc)
    if code in _STALE:
        return True
    # Any other ValidationException (a key too long, say) is a real error, not a race.
    message = error_message(exc).lower()
    return code == "ValidationException" and ("etag" in message or "if-match" in message)


LIST_PAGE = 50  # ListKeys' largest page
ROUTES_PREFIX = "routes:"  # a deploy's prerendered routes (put_routes), never a pointer


@dataclass(frozen=True)
class StoreSize:
    items: int
    bytes: int  # TotalSizeInBytes, as the service counts it against its 5 MB


class KvsPublisher:
    def __init__(self, client: Any, kvs_arn: str, max_attempts: int = 5) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.client = client
        self.kvs_arn = kvs_arn
        self.max_attempts = max_attempts

    def point(self, pointer: str, target: SiteTarget) -> None:
        value = target.encode()
        self._conditional(
            lambda etag: self.client.put_key(
                KvsARN=self.kvs_arn, Key=pointer, Value=value, IfMatch=etag
            )
        )

    def target(self, pointer: str) -> SiteTarget | None:
        try:
            response = self.client.get_key(KvsARN=self.kvs_arn, Key=pointer)
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return None
            raise
        return SiteTarget.decode(str(response["Value"]))

    def remove(self, pointer: str) -> None:
        def delete(etag: str) -> None:
            try:
                self.client.delete_key(KvsARN=self.kvs_arn, Key=pointer, IfMatch=etag)
            except ClientError as exc:
                # Only a missing key is "already removed"; a missing store stays an error.
                if error_code(exc) not in _MISSING:
                    raise

        self._conditional(delete)

    def pointers(self, prefix: str) -> Iterator[tuple[str, SiteTarget | None]]:
        """Every key starting with ``prefix`` and the target it names (None for a value
        that is no pointer). ListKeys has no prefix filter: the whole store is paged."""
        kwargs: dict[str, Any] = {"KvsARN": self.kvs_arn, "MaxResults": LIST_PAGE}
        while True:
            page = self.client.list_keys(**kwargs)
            for item in page.get("Items", []):
                key = str(item["Key"])
                if key.startswith(prefix):
                    yield key, _decoded(str(item.get("Value", "")))
            token = page.get("NextToken")
            if not token:
                return
            kwargs["NextToken"] = token

    def remove_if(self, pointer: str, expected: SiteTarget | None) -> bool:
        """Delete ``pointer`` only while it names ``expected``: the value is read after the
        store's ETag and the delete is conditional on that ETag, so a write that flipped the
        pointer in between (a turn's new preview) makes the delete fail and the check run
        again. Whether it was deleted."""
        for _ in range(self.max_attempts):
            etag = str(self.client.describe_key_value_store(KvsARN=self.kvs_arn)["ETag"])
            try:
                current = self.client.get_key(KvsARN=self.kvs_arn, Key=pointer)
            except ClientError as exc:
                if error_code(exc) in _MISSING:
                    return False
                raise
            if _decoded(str(current.get("Value", ""))) != expected:
                return False
            try:
                self.client.delete_key(KvsARN=self.kvs_arn, Key=pointer, IfMatch=etag)
                return True
            except ClientError as exc:
                if error_code(exc) in _MISSING:
                    return False
                if not _stale_etag(exc):
                    raise
        raise Conflict("the site pointer store is busy; the sweep tries again next time")

    def put_routes(self, app_id: str, build_id: str, routes: list[str]) -> None:
        """A deploy's prerendered routes, for ``site_router.js`` (issue 44, point 3): the key
        ``routes:{appId}/{buildId}``, the routes without their leading "/", space-separated,
        as many as fit in the store's 1 KB value (a route left out gets the app's shell, as
        any path with no page). Written before the deploy is published; a build's output
        never changes, so neither does this key. Nothing for a build with no routes."""
        value = routes_value(routes)
        if not value:
            return
        key = f"{ROUTES_PREFIX}{SiteTarget(app_id, build_id).encode()}"
        self._conditional(
            lambda etag: self.client.put_key(
                KvsARN=self.kvs_arn, Key=key, Value=value, IfMatch=etag
            )
        )

    def drop_routes(self, app_id: str, build_id: str) -> None:
        """The build's routes key gone (its app is deleted); none is no error."""
        self.remove(f"{ROUTES_PREFIX}{SiteTarget(app_id, build_id).encode()}")

    def size(self) -> StoreSize:
        answer = self.client.describe_key_value_store(KvsARN=self.kvs_arn)
        return StoreSize(int(answer.get("ItemCount", 0)), int(answer.get("TotalSizeInBytes", 0)))

    def _conditional(self, write: Callable[[str], object]) -> None:
        """Run ``write(etag)`` with a fresh ETag until no other writer slips in between."""
        for _ in range(self.max_attempts):
            etag = str(self.client.describe_key_value_store(KvsARN=self.kvs_arn)["ETag"])
            try:
                write(etag)
                return
            except ClientError as exc:
                if not _stale_etag(exc):
                    raise
        raise Conflict("publishing raced other updates; try again")


POINTER = "pointer"  # the pointer table's key (zerocode.adapters.dynamodb.pointers)
# Ledger items: never a pointer's key (those start "site:" or "preview:"), so neither the edge
# router nor the preview sweep reads them.
NEXT, PLACE = "hotset:next", "hotset:place:"
_FAILED = "ConditionalCheckFailedException"


class HotSetLedger:
    """The hot set's promotions, as a ring of ``slots`` places in the pointer table.

    ``hotset:next`` counts promotions (``ADD``, one write per promotion); promotion ``n``
    takes the place ``hotset:place:{(n - 1) % slots}`` (one item: ``p`` the pointer, ``q`` the
    promotion's number, ``t`` its time), written only while its holder is older than the
    time kept, and the write returns that holder: the oldest promotion of the ring. The
    pointer's own item carries ``hot_seq``, its latest promotion, so a holder promoted again
    since (or removed: the item goes with it) is not demoted. Promotions are rollbacks and an
    operator's, a few a second at most, so the one counter item is no hot partition.
    """

    def __init__(self, client: Any, table: str, slots: int = RING_SLOTS) -> None:
        if slots < 1:
            raise ValueError("slots must be at least 1")
        self.client, self.table, self.slots = client, table, slots

    def take(self, pointer: str, now: float, keep_after: float) -> Slot:
        # Looked at first, so a refused promotion does not move the ring past the oldest
        # (only two promotions racing for one place can still skip it).
        held = self._item(self._place(self._item(NEXT).get("n", {}).get("N", "0"), 1))
        if "t" in held and float(held["t"]["N"]) >= keep_after:
            raise RingFull("the oldest promotion is kept")
        counted = self.client.update_item(
            TableName=self.table,
            Key={POINTER: {"S": NEXT}},
            UpdateExpression="ADD n :one",
            ExpressionAttributeValues={":one": {"N": "1"}},
            ReturnValues="UPDATED_NEW",
        )
        seq = int(counted["Attributes"]["n"]["N"])
        try:
            answer = self.client.update_item(
                TableName=self.table,
                Key={POINTER: {"S": self._place(seq)}},
                UpdateExpression="SET p = :p, q = :q, t = :t",
                ConditionExpression="attribute_not_exists(t) OR t < :keep",
                ExpressionAttributeValues={
                    ":p": {"S": pointer},
                    ":q": {"N": str(seq)},
                    ":t": {"N": repr(float(now))},
                    ":keep": {"N": repr(float(keep_after))},
                },
                ReturnValues="ALL_OLD",
            )
        except ClientError as exc:
            if error_code(exc) == _FAILED:
                raise RingFull(f"place of promotion {seq} is held by a recent one") from exc
            raise
        old = answer.get("Attributes") or {}
        evicted = (str(old["p"]["S"]), int(old["q"]["N"])) if "p" in old and "q" in old else None
        return Slot(seq, evicted)

    def holds(self, pointer: str, seq: int) -> bool:
        return str(self._item(pointer).get("hot_seq", {}).get("N")) == str(seq)

    def _place(self, seq: int | str, ahead: int = 0) -> str:
        return f"{PLACE}{(int(seq) + ahead - 1) % self.slots}"

    def _item(self, key: str) -> dict[str, Any]:
        item = self.client.get_item(
            TableName=self.table, Key={POINTER: {"S": key}}, ConsistentRead=True
        ).get("Item")
        return dict(item or {})

    def mark(self, pointer: str, seq: int) -> bool:
        return self._update(
            pointer,
            "SET hot_seq = :q",
            "attribute_exists(app_id)",  # never an item of its own: the pointer must exist
            {":q": {"N": str(seq)}},
        )

    def unmark(self, pointer: str, seq: int) -> None:
        self._update(pointer, "REMOVE hot_seq", "hot_seq = :q", {":q": {"N": str(seq)}})

    def _update(self, pointer: str, update: str, condition: str, values: dict[str, Any]) -> bool:
        try:
            self.client.update_item(
                TableName=self.table,
                Key={POINTER: {"S": pointer}},
                UpdateExpression=update,
                ConditionExpression=condition,
                ExpressionAttributeValues=values,
            )
        except ClientError as exc:
            if error_code(exc) == _FAILED:
                return False
            raise
        return True


def _decoded(value: str) -> SiteTarget | None:
    try:
        return SiteTarget.decode(value)
    except ValueError:
        return None
