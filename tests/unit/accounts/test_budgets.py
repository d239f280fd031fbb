"""Token budgets decided (issue 43): per UTC day and month, input and output counted, the
reset named, a December's month ending at New Year; an account's own budget, set by an
admin, in place of the platform's."""

from __future__ import annotations

import calendar

from zerocode.accounts.usage import AccountBudget, Budgets, DayUsage, Scope, Spent, Tally


class Days:
    """A ledger of days only (what a budget reads)."""

    def __init__(self, days: dict[str, tuple[int, int]]) -> None:
        self.spent = days
        self.own: dict[str, AccountBudget] = {}

    def record(self, spent: Spent) -> None:
        raise AssertionError("a budget only reads")

    def of_turn(self, app_id: str, turn: int) -> list[Spent]:
        return []

    def days(self, scope: Scope, key: str, first: str, last: str) -> list[DayUsage]:
        assert scope == "account" and key == "ann"
        return [
            DayUsage(
                day=d, requests=1, input_tokens=i, output_tokens=o, cached_tokens=0, estimated=0
            )
            for d, (i, o) in sorted(self.spent.items())
            if first <= d <= last
        ]

    def tallies(self, first: str, last: str) -> list[Tally]:
        raise AssertionError("a budget reads one account")

    def delete_app(self, app_id: str) -> None:
        raise AssertionError("a budget only reads")

    def budget_of(self, account: str) -> AccountBudget | None:
        return self.own.get(account)

    def set_budget(self, account: str, budget: AccountBudget) -> None:
        self.own[account] = budget

    def clear_budget(self, account: str) -> None:
        self.own.pop(account, None)


NOON = calendar.timegm((2026, 12, 31, 12, 0, 0))


def test_a_day_budget_counts_input_and_output_of_today_only() -> None:
    ledger = Days({"2026-12-30": (900, 100), "2026-12-31": (600, 399)})
    assert Budgets(per_day=1000).over(ledger, "ann", NOON) is None  # 999 today
    ledger.spent["2026-12-31"] = (600, 400)
    spent = Budgets(per_day=1000).over(ledger, "ann", NOON)
    assert spent is not None and spent.status == 429 and spent.code == "quota_exceeded"
    assert spent.lockout == {
        "reason": "tokens_per_day",
        "after": 1000,
        "until": "2027-01-01T00:00:00Z",
    }
    assert spent.retry_after == 12 * 3600
    assert "1,000 per day is spent (1,000 used); it resets at 2027-01-01 00:00 UTC" in spent.message


def test_a_month_budget_sums_the_month_and_resets_on_the_first() -> None:
    ledger = Days({"2026-11-30": (10**6, 0), "2026-12-01": (4000, 0), "2026-12-31": (999, 0)})
    assert Budgets(per_month=5000).over(ledger, "ann", NOON) is None  # November not counted
    ledger.spent["2026-12-15"] = (1, 0)
    spent = Budgets(per_day=10**9, per_month=5000).over(ledger, "ann", NOON)
    assert spent is not None and spent.lockout is not None
    assert spent.lockout["reason"] == "tokens_per_month"
    assert spent.lockout["until"] == "2027-01-01T00:00:00Z"
    assert Budgets().over(ledger, "ann", NOON) is None  # none set: no limit


def test_an_accounts_own_budget_holds_in_place_of_the_platforms() -> None:
    ledger = Days({"2026-12-31": (600, 400)})  # 1,000 today, 1,000 this month
    platform = Budgets(per_day=10**6, per_month=10**6)
    assert platform.over(ledger, "ann", NOON) is None
    # Tighter than the platform's: refused, the message naming the account's own budget.
    ledger.set_budget("ann", AccountBudget(per_day=None, per_month=1000))
    spent = platform.over(ledger, "ann", NOON)
    assert spent is not None and spent.lockout is not None
    assert spent.lockout["reason"] == "tokens_per_month" and spent.lockout["after"] == 1000
    assert "1,000 per month is spent (1,000 used)" in spent.message
    # Looser than the platform's: the platform's does not hold for this account.
    tight = Budgets(per_day=10, per_month=10)
    assert tight.over(ledger, "ann", NOON) is not None  # still the override above: 1,000
    ledger.set_budget("ann", AccountBudget(per_day=1001, per_month=None))
    assert tight.over(ledger, "ann", NOON) is None
    # Unlimited, explicitly: no limit in either period, whatever the platform says.
    ledger.set_budget("ann", AccountBudget())
    assert tight.of(ledger, "ann") == AccountBudget(None, None)
    assert tight.over(ledger, "ann", NOON) is None
    # None at all: the next request is refused even with nothing spent.
    ledger.spent.clear()
    ledger.set_budget("ann", AccountBudget(per_day=0))
    zero = Budgets().over(ledger, "ann", NOON)
    assert zero is not None and zero.lockout is not None and zero.lockout["after"] == 0
    # Cleared: the platform's holds again.
    ledger.clear_budget("ann")
    assert tight.of(ledger, "ann") == tight.platform == AccountBudget(10, 10)
    assert Budgets().over(ledger, "ann", NOON) is None
