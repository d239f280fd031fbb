"""The SQLite UsageLedger: each model request, and per-day sums per app, per account and
per model, written in one transaction (so the sums always agree with the requests); and
the budgets an admin set for one account (``usage_budgets``)."""

from __future__ import annotations

from typing import Any

from zerocode.accounts.usage import AccountBudget, DayUsage, Scope, Spent, Tally
from zerocode.adapters.sqlite.database import SqliteDatabase

_REQUEST = (
    "account",
    "app_id",
    "turn",
    "round",
    "model",
    "at",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "estimated",
    "cost_micros",
)


class SqliteUsageLedger:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.lock:
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS usage_requests (app_id TEXT NOT NULL, "
                "turn INTEGER NOT NULL, seq INTEGER NOT NULL, account TEXT NOT NULL, "
                "round INTEGER NOT NULL, model TEXT NOT NULL, at REAL NOT NULL, "
                "input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, "
                "cached_tokens INTEGER NOT NULL, estimated INTEGER NOT NULL, "
                "cost_micros INTEGER, PRIMARY KEY (app_id, turn, seq)) WITHOUT ROWID"
            )
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS usage_days (scope TEXT NOT NULL, "
                "key TEXT NOT NULL, day TEXT NOT NULL, requests INTEGER NOT NULL, "
                "input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, "
                "cached_tokens INTEGER NOT NULL, estimated INTEGER NOT NULL, "
                "cost_micros INTEGER NOT NULL, unpriced INTEGER NOT NULL, "
                "PRIMARY KEY (scope, key, day)) WITHOUT ROWID"
            )
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS usage_budgets (account TEXT PRIMARY KEY, "
                "per_day INTEGER, per_month INTEGER) WITHOUT ROWID"
            )

    def record(self, spent: Spent) -> None:
        values = [getattr(spent, c) for c in _REQUEST]
        counts = (
            spent.input_tokens,
            spent.output_tokens,
            spent.cached_tokens,
            int(spent.estimated),
            spent.cost_micros or 0,
            int(spent.cost_micros is None),
        )
        with self.db.transaction() as conn:
            (seq,) = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM usage_requests "
                "WHERE app_id = ? AND turn = ?",
                (spent.app_id, spent.turn),
            ).fetchone()
            conn.execute(
                f"INSERT INTO usage_requests (seq, {', '.join(_REQUEST)}) "
                f"VALUES (?, {', '.join('?' * len(_REQUEST))})",
                [seq, *(int(v) if isinstance(v, bool) else v for v in values)],
            )
            # The model's day too (scope 'model'): the platform's totals per model, which
            # deleting an app leaves as they are, like its owner's.
            days = (("app", spent.app_id), ("account", spent.account), ("model", spent.model))
            for scope, key in days:
                conn.execute(
                    "INSERT INTO usage_days (scope, key, day, requests, input_tokens, "
                    "output_tokens, cached_tokens, estimated, cost_micros, unpriced) "
                    "VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (scope, key, day) DO UPDATE SET requests = requests + 1, "
                    "input_tokens = input_tokens + excluded.input_tokens, "
                    "output_tokens = output_tokens + excluded.output_tokens, "
                    "cached_tokens = cached_tokens + excluded.cached_tokens, "
                    "estimated = estimated + excluded.estimated, "
                    "cost_micros = cost_micros + excluded.cost_micros, "
                    "unpriced = unpriced + excluded.unpriced",
                    (scope, key, spent.day, *counts),
                )

    def of_turn(self, app_id: str, turn: int) -> list[Spent]:
        rows = self.db.query(
            f"SELECT {', '.join(_REQUEST)} FROM usage_requests WHERE app_id = ? AND turn = ? "
            "ORDER BY seq",
            (app_id, turn),
        )
        return [
            Spent(**{**dict(zip(_REQUEST, row, strict=True)), "estimated": bool(row[-2])})
            for row in rows
        ]

    def days(self, scope: Scope, key: str, first: str, last: str) -> list[DayUsage]:
        rows = self.db.query(
            "SELECT day, requests, input_tokens, output_tokens, cached_tokens, estimated, "
            "cost_micros, unpriced FROM usage_days "
            "WHERE scope = ? AND key = ? AND day >= ? AND day <= ? ORDER BY day",
            (scope, key, first, last),
        )
        return [_day(r) for r in rows]

    def tallies(self, first: str, last: str) -> list[Tally]:
        rows = self.db.query(
            "SELECT day, requests, input_tokens, output_tokens, cached_tokens, estimated, "
            "cost_micros, unpriced, scope, key FROM usage_days "
            "WHERE scope IN ('account', 'model') AND day >= ? AND day <= ?",
            (first, last),
        )
        return [Tally(group=r[8], key=r[9], usage=_day(r)) for r in rows]

    def budget_of(self, account: str) -> AccountBudget | None:
        rows = self.db.query(
            "SELECT per_day, per_month FROM usage_budgets WHERE account = ?", (account,)
        )
        return AccountBudget(*rows[0]) if rows else None

    def set_budget(self, account: str, budget: AccountBudget) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO usage_budgets (account, per_day, per_month) VALUES (?, ?, ?) "
                "ON CONFLICT (account) DO UPDATE SET per_day = excluded.per_day, "
                "per_month = excluded.per_month",
                (account, budget.per_day, budget.per_month),
            )

    def clear_budget(self, account: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM usage_budgets WHERE account = ?", (account,))

    def delete_app(self, app_id: str) -> None:
        """An app's requests and its days (M8: its data goes with it); the account's days
        keep what was spent."""
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM usage_requests WHERE app_id = ?", (app_id,))
            conn.execute("DELETE FROM usage_days WHERE scope = 'app' AND key = ?", (app_id,))


def _day(r: Any) -> DayUsage:
    return DayUsage(
        day=r[0],
        requests=r[1],
        input_tokens=r[2],
        output_tokens=r[3],
        cached_tokens=r[4],
        estimated=r[5],
        cost_micros=r[6],
        unpriced=r[7],
    )
