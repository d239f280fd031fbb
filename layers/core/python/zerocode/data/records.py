"""An app's records: the port the data API stores them through (issue 39, points 2 and 4).

Records live per app, per *space* (``preview``: what the preview reads and writes, seeded
from the data model; ``live``: the published site's) and per collection. A record is its
fields (checked against the data model before they reach a store) and what the platform
keeps for it: ``id``, ``createdAt``, ``updatedAt`` and ``owner`` (the end user who created
it, None for an anonymous create of a ``public`` collection). Lists go in creation order
(``createdAt``, then ``id``), either way, by pages of at most :data:`MAX_LIMIT` with an
opaque cursor; a filter is field equality. A store holds at most ``most`` records per
collection: the one past it is refused (:class:`CollectionFull`), never another dropped.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from zerocode.errors import Conflict, InvalidInput

# "preview", "live", or a check's scratch space ("check-…", data/check_spaces.py).
Space = str
SPACES: tuple[Space, ...] = ("preview", "live")
MAX_LIMIT = 100
DEFAULT_LIMIT = 20
MAX_FILTERS = 5
DEFAULT_MOST = 10_000  # records per collection (ZEROCODE_DATA_MAX_RECORDS)
_TIME = "%Y-%m-%dT%H:%M:%S.%fZ"  # ISO 8601, UTC, microseconds: sorts as it reads
_ID_CHARS = 16  # hex: 64 random bits, never guessed from another record's


class CollectionFull(Conflict):
    """The collection holds as many records as it may: 409, nothing written."""

    code = "collection_full"


@dataclass(frozen=True)
class Record:
    id: str
    owner: str | None
    created_at: str  # ISO 8601, UTC, microseconds: sorts as it reads
    updated_at: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def shown(self) -> dict[str, Any]:
        """The record as the data API answers it."""
        return {
            **self.fields,
            "id": self.id,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "owner": self.owner,
        }


@dataclass(frozen=True)
class Query:
    """What a list asks for: field equality (``equals``), only one owner's records
    (``owner``, the ``owner`` rule), newest first (``newest``), a page's size and where the
    last page ended."""

    equals: Mapping[str, Any] = field(default_factory=dict)
    owner: str | None = None
    newest: bool = False
    limit: int = DEFAULT_LIMIT
    after: tuple[str, str] | None = None  # (createdAt, id) of the last record shown
    search: str | None = None  # the builder's search: records whose fields hold this text


@dataclass(frozen=True)
class Page:
    records: tuple[Record, ...]
    cursor: str | None  # None: the last page


class RecordStore(Protocol):
    """Where records are kept (SQLite locally, DynamoDB on AWS)."""

    def create(self, app_id: str, space: Space, collection: str, record: Record, most: int) -> None:
        """Keep ``record`` (a new id); CollectionFull when the collection holds ``most``."""
        ...

    def get(self, app_id: str, space: Space, collection: str, record_id: str) -> Record | None: ...

    def replace(self, app_id: str, space: Space, collection: str, record: Record) -> bool:
        """Write ``record`` over the one with its id; False when there is none."""
        ...

    def delete(self, app_id: str, space: Space, collection: str, record_id: str) -> bool: ...

    def list(self, app_id: str, space: Space, collection: str, query: Query) -> Page: ...

    def count(self, app_id: str, space: Space, collection: str) -> int: ...

    def seed(self, app_id: str, space: Space, collection: str, records: Sequence[Record]) -> bool:
        """Add ``records`` to a collection once: only if it was not seeded since its space
        was last cleared (so a seed record a visitor deleted stays deleted); whether it
        added them. Past the collection's bounds nothing is checked: seeds are at most
        100, read from a data model already checked."""
        ...

    def clear(self, app_id: str, space: Space | None = None) -> int:
        """Delete every record of the app in ``space`` (None: both), and that its
        collections were seeded; how many records there were."""
        ...

    def delete_app(self, app_id: str) -> int:
        """Every record of a deleted app, both spaces (M8: a step of its deletion)."""
        ...


def new_record(owner: str | None, fields: Mapping[str, Any]) -> Record:
    now = timestamp()
    return Record(secrets.token_hex(_ID_CHARS // 2), owner, now, now, dict(fields))


def seed_records(seeds: Sequence[Mapping[str, Any]]) -> list[Record]:
    """New records of ``seeds``, one microsecond apart: they list in the file's order."""
    start = datetime.now(UTC)
    made = []
    for n, fields in enumerate(seeds):
        at = (start + timedelta(microseconds=n)).strftime(_TIME)
        made.append(Record(secrets.token_hex(_ID_CHARS // 2), None, at, at, dict(fields)))
    return made


def changed(record: Record, fields: Mapping[str, Any]) -> Record:
    """``record`` with ``fields`` set (a None value removes the field), updated now."""
    merged = {**record.fields, **fields}
    kept = {name: value for name, value in merged.items() if value is not None}
    return Record(record.id, record.owner, record.created_at, timestamp(), kept)


def timestamp() -> str:
    return datetime.now(UTC).strftime(_TIME)


def is_record_id(value: str) -> bool:
    return len(value) == _ID_CHARS and all(c in "0123456789abcdef" for c in value)


def cursor_of(record: Record) -> str:
    """An opaque cursor after ``record`` (its creation time and id)."""
    raw = json.dumps([record.created_at, record.id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def after_cursor(cursor: str) -> tuple[str, str]:
    """Where a cursor says the last page ended; InvalidInput for one this API never gave."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        created, record_id = json.loads(raw)
        if not (isinstance(created, str) and isinstance(record_id, str)):
            raise ValueError
        if len(created) > 40 or not is_record_id(record_id):
            raise ValueError
    except (ValueError, TypeError, binascii.Error):
        raise InvalidInput("cursor is not one this API returned") from None
    return created, record_id
