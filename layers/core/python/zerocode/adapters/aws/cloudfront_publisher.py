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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code, error_message
from zerocode.errors import Conflict
from zerocode.publishing.pointers import SiteTarget

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


def _decoded(value: str) -> SiteTarget | None:
    try:
        return SiteTarget.decode(value)
    except ValueError:
        return None
