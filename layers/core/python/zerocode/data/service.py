"""The data API's operations, whatever serves them (issue 39, point 2): a request is decided
by the rules (:mod:`.access`), its fields checked against the data model
(:mod:`.model`), then done in a :class:`~.records.RecordStore`. Nothing here knows HTTP;
each refusal is a domain error that carries its status (400 naming the field, 401, 403,
404, 409, 413).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from zerocode.data import access
from zerocode.data.model import (
    MAX_RECORD_BYTES,
    Collection,
    DataModel,
    Field,
    Operation,
    record_bytes,
    record_problems,
)
from zerocode.data.records import (
    DEFAULT_LIMIT,
    DEFAULT_MOST,
    MAX_FILTERS,
    MAX_LIMIT,
    Query,
    Record,
    RecordStore,
    Space,
    after_cursor,
    changed,
    is_record_id,
    new_record,
    seed_records,
)
from zerocode.errors import InvalidInput, NotFound, PayloadTooLarge

LIST_PARAMS = ("limit", "cursor", "sort")
OWN_KEYS = frozenset({"id", "createdAt", "updatedAt", "owner"})
SORTS = {"createdAt": False, "-createdAt": True}  # newest first?
MAX_SEARCH = 100


@dataclass(frozen=True)
class Asked:
    """Who asks what of which data: one app's collection in one space, under the data
    model in force there, by a visitor (an end user's id, or None: not signed in)."""

    app_id: str
    space: Space
    model: DataModel
    collection: str
    visitor: str | None
    # The app's builder (the console, /api/apps/{id}/data/...): no rule applies to them.
    builder: bool = False


class DataService:
    """One app's data in one space, as its model and rules allow a visitor."""

    def __init__(self, records: RecordStore, most: int = DEFAULT_MOST) -> None:
        self.records, self.most = records, most
        # Collections this process knows were seeded (a reset here forgets its app's; a
        # reset elsewhere seeds again itself, so a stale entry misses nothing).
        self._seeded: set[tuple[str, str, str]] = set()
        self._seeding = threading.Lock()

    def seed_preview(self, app_id: str, model: DataModel, space: Space = "preview") -> None:
        """Fill a preview space's collections (the preview's, or a check's scratch space)
        with their seed records, each once: when first used, and again only after a reset
        (a deleted seed record stays deleted)."""
        for collection in model.collections:
            key = (app_id, space, collection.name)
            if not collection.seed or key in self._seeded:
                continue
            seeds = seed_records(collection.seed)
            self.records.seed(app_id, space, collection.name, seeds)
            with self._seeding:
                self._seeded.add(key)

    def forget(self, app_id: str, space: Space) -> None:
        """The space was emptied: seed it again when next used."""
        with self._seeding:
            self._seeded = {k for k in self._seeded if k[:2] != (app_id, space)}

    def reset_preview(self, app_id: str, model: DataModel | None) -> int:
        """Empty the preview space and seed it again from ``model`` (the preview's);
        how many records were deleted."""
        self.forget(app_id, "preview")
        deleted = self.records.clear(app_id, "preview")
        if model is not None:
            self.seed_preview(app_id, model)
        return deleted

    def list(self, asked: Asked, params: Mapping[str, str]) -> dict[str, Any]:
        collection = _collection(asked)
        owner = None if asked.builder else access.decide(collection, "list", asked.visitor)
        query = _query(
            collection, params, owner.only_owner if owner else None, builder=asked.builder
        )
        page = self.records.list(asked.app_id, asked.space, collection.name, query)
        return {"records": [_shown(collection, r) for r in page.records], "cursor": page.cursor}

    def create(self, asked: Asked, body: Any) -> dict[str, Any]:
        collection = _collection(asked)
        _decide(collection, "create", asked)
        _checked(collection, body, partial=False)
        record = new_record(asked.visitor, body)
        self.records.create(asked.app_id, asked.space, collection.name, record, self.most)
        return record.shown()

    def get(self, asked: Asked, record_id: str) -> dict[str, Any]:
        return _shown(*self._touched(asked, "read", record_id))

    def update(self, asked: Asked, record_id: str, body: Any) -> dict[str, Any]:
        collection = _collection(asked)
        _decide(collection, "update", asked)
        _checked(collection, body, partial=True)  # before the record is looked for
        _, record = self._touched(asked, "update", record_id)
        new = changed(record, body)
        declared = {k: v for k, v in new.fields.items() if collection.field(k) is not None}
        _checked(collection, declared, partial=False)  # a required field kept (hidden: kept)
        if not self.records.replace(asked.app_id, asked.space, collection.name, new):
            raise NotFound(f"no such record in {collection.name}")  # deleted meanwhile
        return _shown(collection, new)

    def delete(self, asked: Asked, record_id: str) -> None:
        collection, _ = self._touched(asked, "delete", record_id)
        if not self.records.delete(asked.app_id, asked.space, collection.name, record_id):
            raise NotFound(f"no such record in {collection.name}")

    def _touched(
        self, asked: Asked, operation: Operation, record_id: str
    ) -> tuple[Collection, Record]:
        """The record ``operation`` is about, once the rules let the visitor touch it."""
        collection = _collection(asked)
        _decide(collection, operation, asked)
        found = None
        if is_record_id(record_id):
            found = self.records.get(asked.app_id, asked.space, collection.name, record_id)
        if found is None:
            raise NotFound(f"no such record in {collection.name}")
        if not asked.builder:
            access.may_touch(collection, operation, asked.visitor, found.owner)
        return collection, found


def _decide(collection: Collection, operation: Operation, asked: Asked) -> None:
    """The rules decide a visitor's request; the app's builder is held to none."""
    if not asked.builder:
        access.decide(collection, operation, asked.visitor)


def _shown(collection: Collection, record: Record) -> dict[str, Any]:
    """The record as the model in force shows it: a field the model no longer declares (a
    deploy that hid it, confirmed) is kept in the store and shown again by a model that
    declares it, never here."""
    shown = record.shown()
    return {k: v for k, v in shown.items() if k in OWN_KEYS or collection.field(k) is not None}


def _collection(asked: Asked) -> Collection:
    found = asked.model.collection(asked.collection)
    if found is None:
        raise NotFound(f"the app's data model has no collection {asked.collection[:40]!r}")
    return found


def _checked(collection: Collection, body: Any, *, partial: bool) -> None:
    """InvalidInput naming every bad field (413 for a record past its bytes)."""
    if isinstance(body, dict) and record_bytes(body) > MAX_RECORD_BYTES:
        raise PayloadTooLarge(f"the record is too large: at most {MAX_RECORD_BYTES} bytes")
    problems = record_problems(collection, body, partial=partial)
    if not problems:
        return
    said = "; ".join(p[1:] if p.startswith(".") else p[2:] for p in problems)
    raise InvalidInput(f"{collection.name}: {said}")


def _query(
    collection: Collection, params: Mapping[str, str], owner: str | None, *, builder: bool = False
) -> Query:
    """A list's query string: ``limit``, ``cursor``, ``sort`` and field equality (and, for
    the builder, ``q``: any field's text)."""
    limit = _limit(params.get("limit"))
    sort = params.get("sort", "createdAt")
    if sort not in SORTS:
        raise InvalidInput("sort: createdAt (oldest first) or -createdAt (newest first)")
    cursor = params.get("cursor")
    after = after_cursor(cursor) if cursor else None
    equals: dict[str, Any] = {}
    search = params.get("q") if builder else None
    if search is not None and len(search) > MAX_SEARCH:
        raise InvalidInput(f"q: at most {MAX_SEARCH} characters")
    for name, raw in params.items():
        if name in LIST_PARAMS or (builder and name == "q"):
            continue
        field = collection.field(name)
        if field is None:
            raise InvalidInput(f"{name[:40]}: {collection.name} has no such field to filter by")
        equals[name] = _filter_value(field, raw)
    if len(equals) > MAX_FILTERS:
        raise InvalidInput(f"at most {MAX_FILTERS} filters at once")
    return Query(
        equals=equals,
        owner=owner,
        newest=SORTS[sort],
        limit=limit,
        after=after,
        search=search or None,
    )


def _limit(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_LIMIT
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LIMIT:
        raise InvalidInput(f"limit: a whole number from 1 to {MAX_LIMIT}")
    return int(raw)


def _filter_value(field: Field, raw: str) -> Any:
    """A query string's value as the field's type (a number, true/false, else the text)."""
    if field.type == "bool":
        if raw not in ("true", "false"):
            raise InvalidInput(f"{field.name}: true or false")
        return raw == "true"
    if field.type == "number":
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise InvalidInput(f"{field.name}: a number")
        return value
    return raw
