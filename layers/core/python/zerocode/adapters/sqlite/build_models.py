"""The SQLite BuildModels (zerocode/data/in_force.py): each build's data model file, by
build id, as the platform read it from the build's source."""

from __future__ import annotations

from zerocode.adapters.sqlite.database import SqliteDatabase

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS build_models (app_id TEXT NOT NULL, build_id TEXT NOT NULL, "
    "data BLOB NOT NULL, PRIMARY KEY (app_id, build_id)) WITHOUT ROWID"
)


class SqliteBuildModels:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.transaction() as conn:
            conn.execute(_SCHEMA)

    def put(self, app_id: str, build_id: str, data: bytes) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO build_models (app_id, build_id, data) VALUES (?, ?, ?)",
                (app_id, build_id, data),
            )

    def get(self, app_id: str, build_id: str) -> bytes | None:
        rows = self.db.query(
            "SELECT data FROM build_models WHERE app_id = ? AND build_id = ?", (app_id, build_id)
        )
        return bytes(rows[0][0]) if rows else None

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return int(
                conn.execute("DELETE FROM build_models WHERE app_id = ?", (app_id,)).rowcount
            )
