"""Storage that refuses a write, told apart from a bug (issue 29).

A full disk, a quota, a read-only or failing file system, SQLite's SQLITE_FULL / IOERR /
READONLY, DynamoDB's throttling and S3's 5xx after botocore's retries all mean the same to
a user: nothing more can be saved right now, what was saved before is safe. The API
answers them with one error (503 ``storage_unavailable``, :class:`StorageUnavailable`),
a turn ends with ``event: error`` naming the phase and the kind, and the rest of the code
keeps answering a real bug with 500 ``internal``.

The exception is recognised wherever it was wrapped (``raise ... from``): its causes and
contexts are walked. Cloud errors are recognised by their shape (botocore's ``response``
dict, redis' OOM answer), so the domain imports no SDK.
"""

from __future__ import annotations

import errno
import sqlite3
from dataclasses import dataclass
from typing import Any, Literal

from zerocode.errors import StorageUnavailable

Kind = Literal["disk_full", "quota", "read_only", "io_error", "throttled", "unavailable"]

_ERRNO: dict[int, Kind] = {
    errno.ENOSPC: "disk_full",
    errno.EDQUOT: "quota",
    errno.EROFS: "read_only",
    errno.EIO: "io_error",
}
# SQLite's primary result codes (the low byte of an extended code: SQLITE_IOERR_WRITE...).
_SQLITE: dict[int, Kind] = {13: "disk_full", 10: "io_error", 8: "read_only"}
_THROTTLED = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "Throttling",
        "RequestLimitExceeded",
        "SlowDown",
        "TooManyRequestsException",
    }
)
# Seconds a client should wait before trying again, for the kinds that pass by themselves.
_RETRY_AFTER: dict[Kind, int] = {"throttled": 5, "unavailable": 10}

_MESSAGES: dict[Kind, str] = {
    "disk_full": "the platform's storage is full",
    "quota": "the platform's storage quota is used up",
    "read_only": "the platform's storage is read-only",
    "io_error": "the platform's storage failed to write",
    "throttled": "the platform's storage is busy",
    "unavailable": "the platform's storage is not answering",
}


@dataclass(frozen=True)
class Refusal:
    """Why storage refused a write."""

    kind: Kind

    @property
    def retry_after(self) -> int | None:
        """Seconds after which trying again may work; None when it needs someone to act
        (space freed, the file system repaired)."""
        return _RETRY_AFTER.get(self.kind)

    @property
    def passes(self) -> bool:
        return self.retry_after is not None

    def message(self, doing: str | None = None) -> str:
        """What a user reads: what happened, that earlier work is safe, what to do."""
        what = _MESSAGES[self.kind]
        if doing:
            what += f" (while {doing})"
        advice = (
            "try again in a few seconds"
            if self.passes
            else "try again once an administrator has freed space or repaired it"
        )
        return f"{what}: nothing more could be saved, what was saved before is kept; {advice}"

    def error(self, doing: str | None = None) -> StorageUnavailable:
        return StorageUnavailable(self.message(doing), retry_after=self.retry_after, kind=self.kind)


def refusal(exc: BaseException) -> Refusal | None:
    """The storage refusal behind ``exc`` (itself, its causes or contexts), or None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found = _one(current)
        if found is not None:
            return found
        current = current.__cause__ or current.__context__
    return None


def _one(exc: BaseException) -> Refusal | None:
    if isinstance(exc, StorageUnavailable):
        return Refusal(exc.kind) if exc.kind in _MESSAGES else Refusal("io_error")
    if isinstance(exc, OSError) and exc.errno in _ERRNO:
        return Refusal(_ERRNO[exc.errno])
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        if isinstance(code, int) and (code & 0xFF) in _SQLITE:
            return Refusal(_SQLITE[code & 0xFF])
        return None
    response: Any = getattr(exc, "response", None)  # botocore's ClientError
    if isinstance(response, dict):
        error = response.get("Error") or {}
        status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
        if error.get("Code") in _THROTTLED or status == 429:
            return Refusal("throttled")
        if isinstance(status, int) and status >= 500:
            return Refusal("unavailable")
        return None
    if type(exc).__name__ == "OutOfMemoryError" or str(exc).startswith("OOM command not allowed"):
        return Refusal("disk_full")  # redis: maxmemory reached and nothing to evict
    return None
