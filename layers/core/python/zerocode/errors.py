"""Domain errors. Each carries the HTTP status and code the API will answer with."""

from __future__ import annotations


class ZerocodeError(Exception):
    status = 500
    code = "internal"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidInput(ZerocodeError):
    status = 400
    code = "invalid_input"


class NotFound(ZerocodeError):
    status = 404
    code = "not_found"


class Conflict(ZerocodeError):
    """Another writer got there first (e.g. two turns appending to one transcript)."""

    status = 409
    code = "conflict"


class AccountTaken(Conflict):
    """An account name someone already has (not a busy resource: the console says so)."""

    code = "account_taken"


class PreviewOutOfDate(Conflict):
    """An element was picked in a preview older than the files."""

    code = "preview_out_of_date"


class PayloadTooLarge(ZerocodeError):
    status = 413
    code = "payload_too_large"


class Unavailable(ZerocodeError):
    """A service the platform depends on failed; nothing was lost, and trying again is safe."""

    status = 503
    code = "unavailable"


class StorageUnavailable(Unavailable):
    """Storage refused a write (full, read-only, failing or throttled: storage_refusal.py).
    Nothing of the request was saved; ``retry_after`` when it passes by itself."""

    code = "storage_unavailable"

    def __init__(self, message: str, *, retry_after: int | None = None, kind: str = "") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.kind = kind
