"""Publisher over a CloudFront KeyValueStore, read at the edge by ``site_router.js``.

One ``PutKey`` flips a pointer for every edge location at once, and the build it names is
already in the bucket, so visitors never see a half-published site.

Every write is ETag-conditional, and the whole store has one ETag: *any* write to *any*
key changes it. So each write first reads the current ETag (``DescribeKeyValueStore``),
then writes with ``IfMatch``; a writer that lost a race to an unrelated key gets a
conflict, re-reads the ETag and tries again. After ``max_attempts`` it gives up with
:class:`zerocode.errors.Conflict` rather than spin while the store is busy.

The data-plane API is signed with SigV4A, which botocore does only with ``awscrt``
installed (``botocore[crt]``); without it every call fails before reaching AWS.
"""

from __future__ import annotations

from collections.abc import Callable
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
