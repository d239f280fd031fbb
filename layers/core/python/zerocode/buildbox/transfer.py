"""Presigned requests, and nothing of the link in any message.

A presigned URL is a capability over one object, so no error message, log line or
exception text here contains one: only the method, the object's kind and S3's status.
"""

from __future__ import annotations

import urllib.error
import urllib.request

TIMEOUT_SECONDS = 60
_CHUNK = 1 << 16


class TransferFailed(Exception):
    """A presigned request did not succeed; the message names no URL."""


def _open(request: urllib.request.Request, what: str) -> bytes:
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
            return bytes(answer.read(_CHUNK))
    except urllib.error.HTTPError as exc:
        raise TransferFailed(f"{what}: S3 answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TransferFailed(f"{what}: {type(reason).__name__}") from None


def get(url: str, limit: int, what: str = "downloading the source") -> bytes:
    """The object's bytes, at most ``limit`` of them."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as answer:
            data = bytearray()
            while chunk := answer.read(_CHUNK):
                data += chunk
                if len(data) > limit:
                    raise TransferFailed(f"{what}: larger than {limit >> 20} MiB")
            return bytes(data)
    except urllib.error.HTTPError as exc:
        raise TransferFailed(f"{what}: S3 answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TransferFailed(f"{what}: {type(reason).__name__}") from None


def delete(url: str, what: str = "deleting the source") -> None:
    _open(urllib.request.Request(url, method="DELETE"), what)


def put(url: str, data: bytes, what: str = "uploading the output") -> None:
    request = urllib.request.Request(
        url,
        data=data,
        method="PUT",
        headers={"Content-Type": "application/x-tar", "Content-Length": str(len(data))},
    )
    _open(request, what)
