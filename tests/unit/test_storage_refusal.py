"""Storage refusals told apart from bugs (issue 29): each store's way of saying "no room",
"read-only", "failing" or "busy" is one kind, found through wrapping, and anything else is
not a refusal (it stays a 500)."""

from __future__ import annotations

import errno
import sqlite3
from typing import Any

import pytest

from zerocode.errors import StorageUnavailable
from zerocode.storage_refusal import Refusal, refusal


class ClientError(Exception):
    """botocore's ClientError, by its shape (the domain imports no SDK)."""

    def __init__(self, code: str, status: int) -> None:
        super().__init__(code)
        self.response: dict[str, Any] = {
            "Error": {"Code": code, "Message": "..."},
            "ResponseMetadata": {"HTTPStatusCode": status},
        }


def sqlite_error(code: int) -> sqlite3.Error:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = code
    return exc


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), "disk_full"),
        (OSError(errno.EDQUOT, "Disk quota exceeded"), "quota"),
        (OSError(errno.EROFS, "Read-only file system"), "read_only"),
        (OSError(errno.EIO, "Input/output error"), "io_error"),
        (sqlite_error(13), "disk_full"),  # SQLITE_FULL
        (sqlite_error(10 | (4 << 8)), "io_error"),  # SQLITE_IOERR_WRITE
        (sqlite_error(8), "read_only"),  # SQLITE_READONLY
        (ClientError("ProvisionedThroughputExceededException", 400), "throttled"),
        (ClientError("ThrottlingException", 400), "throttled"),
        (ClientError("SlowDown", 503), "throttled"),
        (ClientError("InternalError", 500), "unavailable"),
        (ClientError("ServiceUnavailable", 503), "unavailable"),
        (StorageUnavailable("full", kind="quota"), "quota"),
    ],
)
def test_each_stores_refusal_is_one_kind(exc: BaseException, kind: str) -> None:
    found = refusal(exc)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize(
    "exc",
    [
        OSError("no errno"),
        OSError(errno.ENOENT, "No such file"),
        sqlite3.IntegrityError("UNIQUE constraint failed"),
        sqlite_error(19),  # SQLITE_CONSTRAINT
        ClientError("ConditionalCheckFailedException", 400),
        ClientError("AccessDenied", 403),
        ValueError("a bug"),
    ],
)
def test_other_errors_are_not_refusals(exc: BaseException) -> None:
    assert refusal(exc) is None


def test_a_wrapped_refusal_is_found_through_its_causes() -> None:
    try:
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as inner:
            raise RuntimeError("saving failed") from inner
    except RuntimeError as outer:
        assert refusal(outer) == Refusal("disk_full")
    loop = RuntimeError("a cycle")
    loop.__context__ = RuntimeError("back")
    loop.__context__.__context__ = loop
    assert refusal(loop) is None  # a cycle ends the walk


def test_what_a_user_reads_and_when_to_try_again() -> None:
    full = Refusal("disk_full").error("saving the step")
    assert full.status == 503 and full.code == "storage_unavailable"
    assert full.retry_after is None  # a full disk needs someone to act
    assert "storage is full (while saving the step)" in full.message
    assert "what was saved before is kept" in full.message
    busy = Refusal("throttled").error()
    assert busy.retry_after == 5 and "try again in a few seconds" in busy.message
    assert Refusal("unavailable").retry_after == 10
