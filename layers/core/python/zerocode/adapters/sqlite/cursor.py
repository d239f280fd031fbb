"""Paging cursors of the SQLite stores: the sort values and id, as URL-safe base64 JSON."""

from __future__ import annotations

import base64
import json
from typing import Any

from zerocode.errors import InvalidInput


def encode_cursor(values: list[Any]) -> str:
    raw = json.dumps(values).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str | None, sort_keys: int) -> list[Any] | None:
    """The sort values and id a cursor carries; InvalidInput for anything else."""
    if cursor is None:
        return None
    try:
        values = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        if (
            not isinstance(values, list)
            or len(values) != sort_keys + 1
            or not isinstance(values[-1], str)
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in values[:-1])
        ):
            raise ValueError("wrong shape")
        return values
    except (ValueError, TypeError) as exc:
        raise InvalidInput("cursor is not one returned by this API") from exc
