"""The platform's totals (issue 43, an admin's view): each account's and each model's days
added up, most tokens first; the accounts add up to the total, and so do the models when
every request was kept under both."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from zerocode.accounts.usage import COUNTS, DayUsage, Tally, summed, totals


def day(on: str, tokens: int, **counts: int) -> DayUsage:
    values = {"requests": 1, "input_tokens": tokens, "output_tokens": 0, **counts}
    values.setdefault("cached_tokens", 0)
    values.setdefault("estimated", 0)
    return DayUsage(day=on, **values)


def test_days_of_each_account_and_model_add_up_most_tokens_first() -> None:
    found = totals(
        [
            Tally(group="account", key="ann", usage=day("2026-12-01", 100, cost_micros=5)),
            Tally(group="account", key="bob", usage=day("2026-12-01", 300, unpriced=1)),
            Tally(group="account", key="ann", usage=day("2026-12-02", 250, cost_micros=7)),
            Tally(group="model", key="small", usage=day("2026-12-01", 100, cost_micros=5)),
            Tally(group="model", key="big", usage=day("2026-12-01", 300, unpriced=1)),
            Tally(group="model", key="small", usage=day("2026-12-02", 250, cost_micros=7)),
        ]
    )
    assert [(k, u.input_tokens, u.requests) for k, u in found.accounts] == [
        ("ann", 350, 2),
        ("bob", 300, 1),
    ]
    assert [(k, u.input_tokens, u.cost_micros) for k, u in found.models] == [
        ("small", 350, 12),
        ("big", 300, 0),
    ]
    assert (found.total.requests, found.total.input_tokens) == (3, 650)
    assert (found.total.cost_micros, found.total.unpriced) == (12, 1)
    assert found.total.to_json()["costUsd"] == 0.000012  # some priced: their cost is said
    empty = totals([])
    assert empty.accounts == empty.models == [] and empty.total.requests == 0


def test_equal_tokens_rank_by_name_and_only_accounts_make_the_total() -> None:
    found = totals(
        [
            Tally(group="account", key="zed", usage=day("2026-12-01", 10)),
            Tally(group="account", key="amy", usage=day("2026-12-01", 10)),
            Tally(group="model", key="", usage=day("2026-12-01", 999)),  # model not known
        ]
    )
    assert [k for k, _ in found.accounts] == ["amy", "zed"]
    assert found.total.input_tokens == 20  # the accounts' sum, not the models'
    assert [(k, u.input_tokens) for k, u in found.models] == [("", 999)]


requests = st.lists(
    st.tuples(
        st.sampled_from(["ann", "bob", "cy"]),
        st.sampled_from(["m1", "m2", ""]),
        st.sampled_from(["2026-12-01", "2026-12-02"]),
        st.integers(0, 10_000),
        st.integers(0, 1000),
        st.one_of(st.none(), st.integers(0, 50_000)),
    ),
    max_size=40,
)


@given(requests)
def test_per_account_and_per_model_totals_both_sum_to_the_grand_total(
    kept: list[tuple[str, str, str, int, int, int | None]],
) -> None:
    """However requests fall on accounts, models and days, each account's and each model's
    sums are the sums of their own requests, and either side adds up to the total."""
    days: dict[tuple[str, str, str], list[DayUsage]] = {}
    for account, model, on, tokens_in, tokens_out, cost in kept:
        one = DayUsage(
            day=on,
            requests=1,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cached_tokens=0,
            estimated=0,
            cost_micros=cost or 0,
            unpriced=int(cost is None),
        )
        for key in (("account", account, on), ("model", model, on)):
            days.setdefault(key, []).append(one)
    tallies = [
        Tally(group="account" if g == "account" else "model", key=k, usage=summed(d, on))
        for (g, k, on), d in days.items()
    ]
    found = totals(tallies)
    for side in (found.accounts, found.models):
        assert summed(u for _, u in side) == found.total
    for account, usage in found.accounts:
        mine = [r for r in kept if r[0] == account]
        assert usage.requests == len(mine)
        assert usage.input_tokens == sum(r[3] for r in mine)
        assert usage.unpriced == sum(r[5] is None for r in mine)
    assert found.total.requests == len(kept)
    assert all(getattr(found.total, c) >= 0 for c in COUNTS)
