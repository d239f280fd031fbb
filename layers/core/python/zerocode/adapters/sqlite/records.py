"""The SQLite RecordStore (zerocode/data/records.py): one row per record, keyed by app,
space, collection and id; lists walk an index in creation order, never the table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.data.records import (
    CollectionFull,
    Page,
    Query,
    Record,
    Space,
    cursor_of,
)

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS records (app_id TEXT NOT NULL, space TEXT NOT NULL, "
    "collection TEXT NOT NULL, id TEXT NOT NULL, owner TEXT, created_at TEXT NOT NULL, "
    "updated_at TEXT NOT NULL, fields TEXT NOT NULL, "
    "PRIMARY KEY (app_id, space, collection, id)) WITHOUT ROWID",
    "CREATE INDEX IF NOT EXISTS records_by_time ON records "
    "(app_id, space, collection, created_at, id)",
    "CREATE INDEX IF NOT EXISTS records_by_owner ON records "
    "(app_id, space, collection, owner, created_at, id)",
    "CREATE TABLE IF NOT EXISTS record_seeds (app_id TEXT NOT NULL, space TEXT NOT NULL, "
    "collection TEXT NOT NULL, PRIMARY KEY (app_id, space, collection)) WITHOUT ROWID",
)
_COLUMNS = "id, owner, created_at, updated_at, fields"


class SqliteRecordStore:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.transaction() as conn:
            for statement in _SCHEMA:
                conn.execute(statement)

    def create(self, app_id: str, space: Space, collection: str, record: Record, most: int) -> None:
        with self.db.transaction() as conn:  # BEGIN IMMEDIATE: the count holds till the insert
            (held,) = conn.execute(
                "SELECT COUNT(*) FROM records WHERE app_id = ? AND space = ? AND collection = ?",
                (app_id, space, collection),
            ).fetchone()
            if held >= most:
                raise CollectionFull(
                    f"{collection} holds {held} records, as many as it may; delete some first"
                )
            conn.execute(
                f"INSERT INTO records (app_id, space, collection, {_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (app_id, space, collection, *_row(record)),
            )

    def get(self, app_id: str, space: Space, collection: str, record_id: str) -> Record | None:
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM records "
            "WHERE app_id = ? AND space = ? AND collection = ? AND id = ?",
            (app_id, space, collection, record_id),
        )
        return _record(rows[0]) if rows else None

    def replace(self, app_id: str, space: Space, collection: str, record: Record) -> bool:
        with self.db.transaction() as conn:
            done = conn.execute(
                "UPDATE records SET updated_at = ?, fields = ? "
                "WHERE app_id = ? AND space = ? AND collection = ? AND id = ?",
                (record.updated_at, _fields(record), app_id, space, collection, record.id),
            )
            return done.rowcount == 1

    def delete(self, app_id: str, space: Space, collection: str, record_id: str) -> bool:
        with self.db.transaction() as conn:
            done = conn.execute(
                "DELETE FROM records WHERE app_id = ? AND space = ? AND collection = ? AND id = ?",
                (app_id, space, collection, record_id),
            )
            return done.rowcount == 1

    def list(self, app_id: str, space: Space, collection: str, query: Query) -> Page:
        where = ["app_id = ?", "space = ?", "collection = ?"]
        params: list[Any] = [app_id, space, collection]
        if query.owner is not None:
            where.append("owner = ?")
            params.append(query.owner)
        for name, value in query.equals.items():
            where.append("json_extract(fields, ?) IS ?")  # names are the model's: checked
            params += [f"$.{name}", _sql_value(value)]
        if query.search:  # the builder's search (the console's Data tab): any field's text
            where.append("fields LIKE ? ESCAPE '\\'")
            escaped = query.search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            params.append(f"%{escaped}%")
        if query.after is not None:
            where.append(f"(created_at, id) {'<' if query.newest else '>'} (?, ?)")
            params += list(query.after)
        order = "DESC" if query.newest else "ASC"
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM records WHERE {' AND '.join(where)} "
            f"ORDER BY created_at {order}, id {order} LIMIT ?",
            (*params, query.limit + 1),
        )
        records = tuple(_record(row) for row in rows[: query.limit])
        more = len(rows) > query.limit
        return Page(records, cursor_of(records[-1]) if more and records else None)

    def count(self, app_id: str, space: Space, collection: str) -> int:
        (row,) = self.db.query(
            "SELECT COUNT(*) FROM records WHERE app_id = ? AND space = ? AND collection = ?",
            (app_id, space, collection),
        )
        return int(row[0])

    def seed(self, app_id: str, space: Space, collection: str, records: Sequence[Record]) -> bool:
        with self.db.transaction() as conn:
            marked = conn.execute(
                "INSERT OR IGNORE INTO record_seeds (app_id, space, collection) VALUES (?, ?, ?)",
                (app_id, space, collection),
            )
            if marked.rowcount != 1:
                return False
            conn.executemany(
                f"INSERT INTO records (app_id, space, collection, {_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(app_id, space, collection, *_row(r)) for r in records],
            )
            return True

    def clear(self, app_id: str, space: Space | None = None) -> int:
        where, params = (
            ("app_id = ?", (app_id,))
            if space is None
            else ("app_id = ? AND space = ?", (app_id, space))
        )
        with self.db.transaction() as conn:
            conn.execute(f"DELETE FROM record_seeds WHERE {where}", params)
            done = conn.execute(f"DELETE FROM records WHERE {where}", params)
            return int(done.rowcount)

    def delete_app(self, app_id: str) -> int:
        return self.clear(app_id)


def _fields(record: Record) -> str:
    return json.dumps(dict(record.fields), separators=(",", ":"), ensure_ascii=False)


def _row(record: Record) -> tuple[Any, ...]:
    return (record.id, record.owner, record.created_at, record.updated_at, _fields(record))


def _record(row: Any) -> Record:
    record_id, owner, created, updated, fields = row
    return Record(record_id, owner, created, updated, json.loads(fields))


def _sql_value(value: Any) -> Any:
    """A filter's value as json_extract gives it back: JSON true/false are 1/0 there."""
    if isinstance(value, bool):
        return int(value)
    return value
