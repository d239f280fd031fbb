"""The output's presigned POST, and nothing of the link in any message.

A presigned POST is a capability over one object, so no error message, log line or
exception text here contains one: only what was being done and S3's status.
"""

from __future__ import annotations

import contextlib
import secrets
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


def _send(request: urllib.request.Request, what: str) -> None:
    with _told(what), urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as answer:
        answer.read(_CHUNK)


def post(form: dict[str, object], data: bytes, what: str = "uploading the output") -> None:
    """An upload by a presigned POST (``{"url", "fields"}``): its fields, then the file,
    as multipart/form-data; S3 holds it to the POST's policy (its size bound included)."""
    url, fields = str(form["url"]), form.get("fields")
    if not isinstance(fields, dict):
        raise TransferFailed(f"{what}: the hand-off has no POST fields")
    boundary = f"zerocode-{secrets.token_hex(16)}"
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'
        for name, value in fields.items()
    ]
    head = "".join(parts) + (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="out.tar"\r\n'
        f"Content-Type: {ARCHIVE_TYPE}\r\n\r\n"
    )
    body = head.encode() + data + f"\r\n--{boundary}--\r\n".encode()
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    _send(urllib.request.Request(url, data=body, method="POST", headers=headers), what)
