"""The data API's operations, whatever serves them (issue 39, point 2): a request is decided
by the rules (:mod:`.access`), its fields checked against the data model
(:mod:`.model`), then done in a :class:`~.records.RecordStore`. Nothing here knows HTTP;
each refusal is a domain error that carries its status (400 naming the field, 401, 403,
404, 409, 413).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from zerocode.data import access
from zerocode.data.model import MAX_RECORD_BYTES, Collection, DataModel, Field, record_problems
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
)
from zerocode.errors import InvalidInput, NotFound, PayloadTooLarge

LIST_PARAMS = ("limit", "cursor", "sort")
SORTS = {"createdAt": False, "-createdAt": True}  # newest first?


class DataService:
    """One app's data in one space, as its model and rules allow a visitor."""

    def __init__(self, records: RecordStore, most: int = DEFAULT_MOST) -> None:
        self.records, self.most = records, most

    def list(
        self,
        app_id: str,
        space: Space,
        model: DataModel,
        name: str,
        visitor: str | None,
        params: Mapping[str, str],
    ) -> dict[str, Any]:
        collection = _collection(model, name)
        decision = access.decide(collection, "list", visitor)
        query = _query(collection, params, decision.only_owner)
        page = self.records.list(app_id, space, name, query)
        return {"records": [r.shown() for r in page.records], "cursor": page.cursor}

    def create(
        self,
        app_id: str,
        space: Space,
        model: DataModel,
        name: str,
        visitor: str | None,
        body: Any,
    ) -> dict[str, Any]:
        collection = _collection(model, name)
        access.decide(collection, "create", visitor)
        _checked(collection, body, partial=False)
        record = new_record(visitor, body)
        self.records.create(app_id, space, name, record, self.most)
        return record.shown()

    def get(
        self,
        app_id: str,
        space: Space,
        model: DataModel,
        name: str,
        visitor: str | None,
        record_id: str,
    ) -> dict[str, Any]:
        collection = _collection(model, name)
        access.decide(collection, "read", visitor)
        record = self._found(app_id, space, collection, record_id)
        access.may_touch(collection, "read", visitor, record.owner)
        return record.shown()

    def update(
        self,
        app_id: str,
        space: Space,
        model: DataModel,
        name: str,
        visitor: str | None,
        record_id: str,
        body: Any,
    ) -> dict[str, Any]:
        collection = _collection(model, name)
        access.decide(collection, "update", visitor)
        _checked(collection, body, partial=True)
        record = self._found(app_id, space, collection, record_id)
        access.may_touch(collection, "update", visitor, record.owner)
        new = changed(record, body)
        _checked(collection, dict(new.fields), partial=False)  # a required field kept
        if not self.records.replace(app_id, space, name, new):
            raise NotFound(f"no such record in {name}")  # deleted meanwhile
        return new.shown()

    def delete(
        self,
        app_id: str,
        space: Space,
        model: DataModel,
        name: str,
        visitor: str | None,
        record_id: str,
    ) -> None:
        collection = _collection(model, name)
        access.decide(collection, "delete", visitor)
        record = self._found(app_id, space, collection, record_id)
        access.may_touch(collection, "delete", visitor, record.owner)
        if not self.records.delete(app_id, space, name, record_id):
            raise NotFound(f"no such record in {name}")

    def _found(self, app_id: str, space: Space, collection: Collection, record_id: str) -> Record:
        found = None
        if is_record_id(record_id):
            found = self.records.get(app_id, space, collection.name, record_id)
        if found is None:
            raise NotFound(f"no such record in {collection.name}")
        return found


def _collection(model: DataModel, name: str) -> Collection:
    found = model.collection(name)
    if found is None:
        raise NotFound(f"the app's data model has no collection {name[:40]!r}")
    return found


def _checked(collection: Collection, body: Any, *, partial: bool) -> None:
    """InvalidInput naming every bad field (413 for a record past its bytes)."""
    problems = record_problems(collection, body, partial=partial)
    if not problems:
        return
    too_big = [p for p in problems if "bytes; at most" in p]
    if too_big:
        raise PayloadTooLarge(f"the record is too large: at most {MAX_RECORD_BYTES} bytes")
    said = "; ".join(p[1:] if p.startswith(".") else p[2:] for p in problems)
    raise InvalidInput(f"{collection.name}: {said}")


def _query(collection: Collection, params: Mapping[str, str], owner: str | None) -> Query:
    """A list's query string: ``limit``, ``cursor``, ``sort`` and field equality."""
    limit = _limit(params.get("limit"))
    sort = params.get("sort", "createdAt")
    if sort not in SORTS:
        raise InvalidInput("sort: createdAt (oldest first) or -createdAt (newest first)")
    cursor = params.get("cursor")
    after = after_cursor(cursor) if cursor else None
    equals: dict[str, Any] = {}
    for name, raw in params.items():
        if name in LIST_PARAMS:
            continue
        field = collection.field(name)
        if field is None:
            raise InvalidInput(f"{name[:40]}: {collection.name} has no such field to filter by")
        equals[name] = _filter_value(field, raw)
    if len(equals) > MAX_FILTERS:
        raise InvalidInput(f"at most {MAX_FILTERS} filters at once")
    return Query(equals=equals, owner=owner, newest=SORTS[sort], limit=limit, after=after)


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
