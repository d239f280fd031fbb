"""The usage ledger (issue 43), one contract for real SQLite and for DynamoDB on moto: each
request kept in its turn's order, and the per-day sums of its app, its account and its
model always equal to the requests (one transaction); deleting an app forgets its requests
and days, not what its owner spent nor the models' totals; an account's own budget kept,
replaced and cleared."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zerocode.accounts.usage import AccountBudget, Spent, UsageLedger, day_of, summed, totals
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.usage import SqliteUsageLedger

Ledgers = Callable[[], UsageLedger]

DAY = 86_400.0
MONDAY = 1_796_601_600.0  # 2026-12-07 00:00 UTC


@pytest.fixture(params=["sqlite", "dynamodb"])
def ledgers(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledgers]:
    """A maker of fresh, empty ledgers of one kind."""
    made = iter(range(1_000_000))
    if request.param == "sqlite":
        yield lambda: SqliteUsageLedger(SqliteDatabase(tmp_path / f"z{next(made)}.db"))
        return
    import boto3
    from moto import mock_aws

    from zerocode.adapters.dynamodb.usage import DynamoUsageLedger, create_usage_table

    with mock_aws():
        client = boto3.client(
            "dynamodb",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

        def fresh() -> UsageLedger:
            name = f"usage-{next(made)}"
            create_usage_table(client, name)
            return DynamoUsageLedger(client, name)

        yield fresh


def spent(app: str = "a1", turn: int = 1, at: float = MONDAY, **counts: int | bool | None) -> Spent:
    values: dict[str, int | bool | None] = {"input_tokens": 100, "output_tokens": 10, **counts}
    return Spent(account="ann", app_id=app, turn=turn, round=0, model="m", at=at, **values)  # type: ignore[arg-type]


def test_a_turns_requests_come_back_in_order_and_days_sum_them(ledgers: Ledgers) -> None:
    ledger = ledgers()
    first = spent(input_tokens=1000, output_tokens=50, cached_tokens=600)
    second = spent(input_tokens=1200, output_tokens=70, estimated=True)
    other_app = spent(app="a2", at=MONDAY + DAY)
    for one in (first, second, other_app):
        ledger.record(one)
    assert ledger.of_turn("a1", 1) == [first, second]
    assert ledger.of_turn("a1", 2) == []
    (monday,) = ledger.days("app", "a1", "2026-12-01", "2026-12-31")
    assert monday.to_json() == {
        "day": "2026-12-07",
        "requests": 2,
        "inputTokens": 2200,
        "outputTokens": 120,
        "cachedTokens": 600,
        "estimatedRequests": 1,
        "costUsd": None,  # no price for its model: no cost claimed
        "unpricedRequests": 2,
    }
    account = ledger.days("account", "ann", "2026-12-07", "2026-12-08")
    assert [(d.day, d.requests) for d in account] == [("2026-12-07", 2), ("2026-12-08", 1)]
    assert ledger.days("account", "ann", "2026-12-08", "2026-12-08")[0].input_tokens == 100
    assert ledger.days("account", "bob", "2026-01-01", "2026-12-31") == []


def test_costs_add_up_where_a_price_is_known_and_are_never_invented(ledgers: Ledgers) -> None:
    ledger = ledgers()
    ledger.record(spent(cost_micros=12_500))  # $0.0125
    ledger.record(spent(cost_micros=0))  # a free model: priced, at nothing
    ledger.record(spent(app="a2"))  # no price for its model
    assert [s.cost_micros for s in ledger.of_turn("a1", 1)] == [12_500, 0]
    (day,) = ledger.days("app", "a1", "2026-12-07", "2026-12-07")
    assert (day.to_json()["costUsd"], day.to_json()["unpricedRequests"]) == (0.0125, 0)
    (other,) = ledger.days("app", "a2", "2026-12-07", "2026-12-07")
    assert (other.to_json()["costUsd"], other.to_json()["unpricedRequests"]) == (None, 1)
    (owner,) = ledger.days("account", "ann", "2026-12-07", "2026-12-07")
    assert (owner.cost_micros, owner.unpriced) == (12_500, 1)  # the priced part, and the rest


def test_deleting_an_app_forgets_its_requests_not_its_owners_spending(ledgers: Ledgers) -> None:
    ledger = ledgers()
    ledger.record(spent())
    ledger.record(spent(app="a2"))
    ledger.delete_app("a1")
    assert ledger.of_turn("a1", 1) == [] and ledger.days("app", "a1", "2026", "2027") == []
    assert ledger.of_turn("a2", 1) != []
    (day,) = ledger.days("account", "ann", "2026-12-07", "2026-12-07")
    assert day.requests == 2  # a budget still counts what was spent


def test_requests_recorded_at_once_are_all_kept(tmp_path: Path) -> None:
    """Two API threads recording for the same turn on SQLite: no request lost, none twice.
    (moto's DynamoDB is not thread-safe, so DynamoDB's side, a transaction cancelled for a
    conflict and sent again, is the next test's, with botocore's Stubber.)"""
    ledger = SqliteUsageLedger(SqliteDatabase(tmp_path / "z.db"))

    def record(n: int) -> None:
        for i in range(25):
            ledger.record(spent(input_tokens=n * 1000 + i))

    threads = [threading.Thread(target=record, args=(n,)) for n in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    kept = sorted(s.input_tokens for s in ledger.of_turn("a1", 1))
    assert kept == sorted([1000 + i for i in range(25)] + [2000 + i for i in range(25)])
    (day,) = ledger.days("app", "a1", "2026-12-07", "2026-12-07")
    assert day.requests == 50 and day.input_tokens == sum(kept)


def test_a_transaction_cancelled_for_a_conflict_is_sent_again_with_a_new_token() -> None:
    """Two requests of one account ending at once conflict on its day item: DynamoDB
    cancels one (nothing of it applied); it goes again, under a new token, and lands once.
    Any other refusal is raised."""
    import boto3
    from botocore.stub import ANY, Stubber

    from zerocode.adapters.dynamodb import usage as dynamo_usage

    client = boto3.client(
        "dynamodb", region_name="us-east-1", aws_access_key_id="t", aws_secret_access_key="t"
    )
    ledger = dynamo_usage.DynamoUsageLedger(client, "usage")
    sent: list[str] = []
    client.meta.events.register(
        "before-parameter-build.dynamodb.TransactWriteItems",
        lambda params, **kw: sent.append(params["ClientRequestToken"]),
    )
    conflict = {
        "service_error_code": "TransactionCanceledException",
        "service_message": "Transaction cancelled",
        "response_meta": {},
    }
    with Stubber(client) as stub:
        stub.add_client_error(
            "transact_write_items",
            **conflict,
            modeled_fields={
                "CancellationReasons": [{"Code": "None"}, {"Code": "TransactionConflict"}]
            },
        )
        stub.add_response(
            "transact_write_items", {}, {"TransactItems": ANY, "ClientRequestToken": ANY}
        )
        ledger.record(spent())
        stub.assert_no_pending_responses()
    assert len(sent) == 2 and len(set(sent)) == 2 and all(len(t) <= 36 for t in sent)
    with Stubber(client) as stub:
        stub.add_client_error("transact_write_items", "ValidationException", "bad")
        with pytest.raises(Exception, match="ValidationException"):
            ledger.record(spent())


requests = st.lists(
    st.tuples(
        st.sampled_from(["a1", "a2", "a3"]),
        st.integers(min_value=0, max_value=20),  # the day
        st.integers(min_value=0, max_value=10**7),
        st.integers(min_value=0, max_value=10**6),
        st.booleans(),
    ),
    max_size=40,
)


# ``ledgers`` makes a fresh ledger per example: the fixture itself holds nothing between them.
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(requests)
def test_the_days_always_add_up_to_the_requests(
    ledgers: Ledgers, made: list[tuple[str, int, int, int, bool]]
) -> None:
    ledger = ledgers()
    for app, day, prompt, completion, estimated in made:
        at = MONDAY + day * DAY + 3600
        ledger.record(
            spent(app, at=at, input_tokens=prompt, output_tokens=completion, estimated=estimated)
        )
    for app in ("a1", "a2", "a3"):
        mine = [m for m in made if m[0] == app]
        days = ledger.days("app", app, "2026-01-01", "2027-12-31")
        assert sum(d.requests for d in days) == len(mine)
        assert sum(d.input_tokens for d in days) == sum(m[2] for m in mine)
        assert sum(d.estimated for d in days) == sum(m[4] for m in mine)
        assert [d.day for d in days] == sorted({day_of(MONDAY + m[1] * DAY) for m in mine})
    everyone = ledger.days("account", "ann", "2026-01-01", "2027-12-31")
    assert sum(d.output_tokens for d in everyone) == sum(m[3] for m in made)


def test_an_accounts_own_budget_is_kept_replaced_and_cleared(ledgers: Ledgers) -> None:
    ledger = ledgers()
    ledger.record(spent())
    assert ledger.budget_of("ann") is None  # none set: the platform's applies
    ledger.set_budget("ann", AccountBudget(per_day=200_000, per_month=None))
    assert ledger.budget_of("ann") == AccountBudget(200_000, None)
    ledger.set_budget("ann", AccountBudget(per_day=None, per_month=0))  # whole, replaced
    assert ledger.budget_of("ann") == AccountBudget(None, 0)
    ledger.set_budget("ann", AccountBudget())  # unlimited: kept, not the same as none
    assert ledger.budget_of("ann") == AccountBudget(None, None)
    assert ledger.budget_of("bob") is None
    # The budget is no day: the account's days are what was spent, no more.
    (day,) = ledger.days("account", "ann", "2000-01-01", "2099-12-31")
    assert day.requests == 1
    ledger.clear_budget("ann")
    ledger.clear_budget("ann")  # nothing to clear: no error
    assert ledger.budget_of("ann") is None


def test_a_budget_outlives_the_process(tmp_path: Path) -> None:
    path = tmp_path / "z.db"
    SqliteUsageLedger(SqliteDatabase(path)).set_budget("ann", AccountBudget(5, 50))
    assert SqliteUsageLedger(SqliteDatabase(path)).budget_of("ann") == AccountBudget(5, 50)


def test_the_platforms_totals_per_account_and_per_model(ledgers: Ledgers) -> None:
    ledger = ledgers()
    made = [
        spent(input_tokens=1000, output_tokens=100, cost_micros=3_000),
        dataclasses.replace(spent(app="a2", input_tokens=500), model="big"),
        dataclasses.replace(spent(app="b1", input_tokens=70), account="bob", model="big"),
        dataclasses.replace(spent(app="b1", at=MONDAY + DAY), account="bob"),
        dataclasses.replace(spent(at=MONDAY + 40 * DAY), account="cy"),  # out of the range
    ]
    for one in made:
        ledger.record(one)
    ledger.delete_app("a2")  # its owner's spending and its model's stay in the totals
    found = totals(ledger.tallies("2026-12-01", "2026-12-31"))
    assert [(k, u.requests, u.input_tokens) for k, u in found.accounts] == [
        ("ann", 2, 1500),
        ("bob", 2, 170),
    ]
    assert [(k, u.requests, u.input_tokens) for k, u in found.models] == [
        ("m", 2, 1100),
        ("big", 2, 570),
    ]
    assert found.models[0][1].cost_micros == 3_000 and found.models[0][1].unpriced == 1
    assert summed(u for _, u in found.models) == found.total
    assert (found.total.requests, found.total.output_tokens) == (4, 130)
    for account, usage in found.accounts:  # each account's totals are its own days
        assert usage == summed(ledger.days("account", account, "2026-12-01", "2026-12-31"))
    one_day = totals(ledger.tallies("2026-12-08", "2026-12-08"))
    assert [(k, u.requests) for k, u in one_day.accounts] == [("bob", 1)]
    assert [(k, u.requests) for k, u in one_day.models] == [("m", 1)]
    assert ledger.tallies("2025-01-01", "2025-12-31") == []


accounts_models = st.lists(
    st.tuples(
        st.sampled_from(["ann", "bob"]),
        st.sampled_from(["m1", "m2", ""]),
        st.integers(min_value=0, max_value=3),  # the day
        st.integers(min_value=0, max_value=10**6),
        st.one_of(st.none(), st.integers(min_value=0, max_value=10**5)),
    ),
    max_size=30,
)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(accounts_models)
def test_the_platforms_totals_always_add_up(
    ledgers: Ledgers, made: list[tuple[str, str, int, int, int | None]]
) -> None:
    """Per account: that account's own days; per model: its requests; and both sides add up
    to the same total."""
    ledger = ledgers()
    for account, model, day, tokens, cost in made:
        one = spent(at=MONDAY + day * DAY, input_tokens=tokens, cost_micros=cost)
        ledger.record(dataclasses.replace(one, account=account, model=model))
    found = totals(ledger.tallies("2026-12-07", "2026-12-10"))
    assert summed(u for _, u in found.models) == found.total
    assert found.total.requests == len(made)
    for account, usage in found.accounts:
        assert usage == summed(ledger.days("account", account, "2026-12-07", "2026-12-10"))
    for model, usage in found.models:
        mine = [m for m in made if m[1] == model]
        assert (usage.requests, usage.input_tokens) == (len(mine), sum(m[3] for m in mine))
        assert usage.cost_micros == sum(m[4] or 0 for m in mine)
        assert usage.unpriced == sum(m[4] is None for m in mine)
