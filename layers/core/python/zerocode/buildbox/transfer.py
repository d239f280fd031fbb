"""Presigned requests, and nothing of the link in any message.

A presigned URL is a capability over one object, so no error message, log line or
exception text here contains one: only what was being done and S3's status.
"""

from __future__ import annotations

import contextlib
import urllib.error
import urllib.request
from collections.abc import Iterator

from zerocode.adapters.aws.build_handoff import ARCHIVE_TYPE

TIMEOUT_SECONDS = 60
_CHUNK = 1 << 16


class TransferFailed(Exception):
    """A presigned request did not succeed; the message names no URL."""


@contextlib.contextmanager
def _told(what: str) -> Iterator[None]:
    """urllib's errors as TransferFailed, their URL left out."""
    try:
        yield
    except urllib.error.HTTPError as exc:
        raise TransferFailed(f"{what}: S3 answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TransferFailed(f"{what}: {type(reason).__name__}") from None


def get(url: str, limit: int, what: str = "downloading the source") -> bytes:
    """The object's bytes, at most ``limit`` of them."""
    with _told(what), urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as answer:
        data = bytearray()
        while chunk := answer.read(_CHUNK):
            data += chunk
            if len(data) > limit:
                raise TransferFailed(f"{what}: larger than {limit >> 20} MiB")
        return bytes(data)


def _send(request: urllib.request.Request, what: str) -> None:
    with _told(what), urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
        answer.read(_CHUNK)


def delete(url: str, what: str = "deleting the source") -> None:
    _send(urllib.request.Request(url, method="DELETE"), what)


def put(url: str, data: bytes, what: str = "uploading the output") -> None:
    headers = {"Content-Type": ARCHIVE_TYPE, "Content-Length": str(len(data))}
    _send(urllib.request.Request(url, data=data, method="PUT", headers=headers), what)
