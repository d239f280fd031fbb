"""The VisitStore (issue 44, point 4; publishing/visits.py), one contract for real SQLite and
for DynamoDB on moto: a day's salt made once and shared, forgotten past its time with the
visitors seen that day; each visitor counted once a day however many batches hold it; views
and bots' views added; nothing of an address or a User-Agent kept; an app's days deleted; and
(hypothesis) a report's totals always the sums of its days, whatever the batches."""

from __future__ import annotations

import calendar
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.visits import SqliteVisitStore
from zerocode.publishing.visits import (
    LATE_SECONDS,
    DayVisits,
    Seen,
    Tally,
    VisitCounter,
    VisitStore,
    day_of,
    report,
    salt_until,
)

NOON = float(calendar.timegm((2026, 3, 1, 12, 0, 0)))
DAY = 86400.0
CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


class Kept:
    """A store of one kind, and everything it holds, raw (to look for what must not be);
    ``expired``: whether all a day holds but its counters waits for the TTL, past it."""

    def __init__(
        self,
        store: VisitStore,
        dump: Callable[[], str],
        expired: Callable[[str, float], bool] = lambda day, now: False,
    ) -> None:
        self.store, self.dump, self.expired = store, dump, expired


Stores = Callable[[], Kept]


@pytest.fixture(params=["sqlite", "dynamodb"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    made = iter(range(1_000_000))
    if request.param == "sqlite":

        def fresh_sqlite() -> Kept:
            path = tmp_path / f"v{next(made)}.db"
            store = SqliteVisitStore(SqliteDatabase(path))

            def dump() -> str:
                with sqlite3.connect(path) as conn:
                    tables = ("visit_days", "visit_salts", "visit_seen")
                    return repr([conn.execute(f"SELECT * FROM {t}").fetchall() for t in tables])

            return Kept(store, dump)

        yield fresh_sqlite
        return
    import boto3
    from moto import mock_aws

    from zerocode.adapters.dynamodb.visits import DynamoVisitStore, create_visits_table

    with mock_aws():
        client = boto3.client(
            "dynamodb",
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

        def fresh_dynamodb() -> Kept:
            name = f"visits-{next(made)}"
            create_visits_table(client, name)

            def dump() -> str:
                return repr(client.scan(TableName=name)["Items"])

            def expired(day: str, now: float) -> bool:
                items = client.scan(TableName=name)["Items"]
                held = [i for i in items if day in repr(i) and not i["pk"]["S"].startswith("app#")]
                return all(
                    i["pk"]["S"].startswith("seen#") and float(i["expires_at"]["N"]) <= now
                    for i in held
                )

            return Kept(DynamoVisitStore(client, name), dump, expired)

        yield fresh_dynamodb


def test_a_days_salt_is_made_once_and_forgotten_after_its_time(stores: Stores) -> None:
    store = stores().store
    first = store.salt("2026-03-01", NOON)
    assert first is not None and len(first) == 32
    assert store.salt("2026-03-01", NOON + 3600) == first  # shared: made once
    late = salt_until("2026-03-01") - 1  # 02:59:59 the next day
    other = store.salt("2026-03-02", late)
    assert other is not None and other != first
    assert store.salt("2026-03-01", late) == first  # the late hours still count the day
    assert store.salt("2026-03-01", salt_until("2026-03-01")) is None  # then: never again
    assert store.salt("2026-03-02", NOON + DAY) == other
    assert store.salt("2026-02-01", NOON) is None  # a day long past gets none made


def test_each_visitor_is_counted_once_a_day_and_views_add_up(stores: Stores) -> None:
    kept = stores()
    store = kept.store
    store.add([Tally("app-1", "2026-03-01", 3, 1, frozenset({"v1", "v2"}))], NOON)
    store.add([Tally("app-1", "2026-03-01", 2, 0, frozenset({"v2", "v3"}))], NOON + 60)
    store.add(
        [
            Tally("app-1", "2026-03-02", 1, 0, frozenset({"v1"})),  # the next day: new
            Tally("app-2", "2026-03-01", 1, 4, frozenset({"v1"})),  # another app: its own
        ],
        NOON + 120,
    )
    assert store.days("app-1", "2026-02-01", "2026-03-31") == [
        DayVisits("2026-03-01", 5, 3, 1),
        DayVisits("2026-03-02", 1, 1, 0),
    ]
    assert store.days("app-1", "2026-03-02", "2026-03-02") == [DayVisits("2026-03-02", 1, 1, 0)]
    assert store.days("app-2", "2026-03-01", "2026-03-01") == [DayVisits("2026-03-01", 1, 1, 4)]
    assert store.days("app-3", "2026-03-01", "2026-03-01") == []
    store.delete_app("app-1")
    assert store.days("app-1", "2026-02-01", "2026-03-31") == []
    assert store.days("app-2", "2026-03-01", "2026-03-01") == [DayVisits("2026-03-01", 1, 1, 4)]


def test_past_its_salt_a_day_counts_what_it_is_given(stores: Stores) -> None:
    """A batch of a day whose salt is gone (a late log line) was hashed under a salt of its
    own: its visitors are new, and nothing is remembered of them."""
    store = stores().store
    after = salt_until("2026-03-01") + 1
    store.add([Tally("app-1", "2026-03-01", 2, 0, frozenset({"v1"}))], after)
    store.add([Tally("app-1", "2026-03-01", 2, 0, frozenset({"v1"}))], after)
    assert store.days("app-1", "2026-03-01", "2026-03-01") == [DayVisits("2026-03-01", 4, 2, 0)]


def test_no_address_or_agent_is_kept_and_a_past_days_visitors_go(stores: Stores) -> None:
    kept = stores()
    clock = [NOON]
    counter = VisitCounter(kept.store, {"sitekey01": "app-1"}.get, now=lambda: clock[0])
    counter.count(
        [
            Seen("sitekey01", "203.0.113.77", CHROME, NOON),
            Seen("sitekey01", "203.0.113.77", CHROME, NOON + 5),
            Seen("sitekey01", "2001:db8::77", CHROME, NOON + 9),
            Seen("sitekey01", "203.0.113.78", GOOGLEBOT, NOON + 9),
        ]
    )
    everything = kept.dump()
    for secret in ("203.0.113", "2001:db8", "Mozilla", "Chrome", "Googlebot", "sitekey01"):
        assert secret not in everything, secret
    seen_today = everything.count("2026-03-01")
    assert seen_today >= 3  # the day's counters, salt and two visitors' hashes
    # The next day, past the late hours: the first day's salt and visitors are gone.
    clock[0] = NOON + DAY
    counter.count([Seen("sitekey01", "203.0.113.77", CHROME, clock[0])])
    clock[0] = salt_until("2026-03-02") - LATE_SECONDS + 60
    counter.count([Seen("sitekey01", "203.0.113.77", CHROME, clock[0])])
    assert day_of(clock[0]) == "2026-03-03"
    left = kept.dump()
    # Its counters only: no salt; no visitor (DynamoDB's TTL deletes them, within a day or
    # two: each is past its expiry, and can be tried against no salt).
    assert left.count("2026-03-01") == 1 or kept.expired("2026-03-01", clock[0])
    assert kept.store.days("app-1", "2026-03-01", "2026-03-03") == [
        DayVisits("2026-03-01", 3, 2, 1),
        DayVisits("2026-03-02", 1, 1, 0),
        DayVisits("2026-03-03", 1, 1, 0),
    ]


views = st.lists(
    st.tuples(
        st.sampled_from(["sitekey01", "sitekey02", "nosuchkey"]),
        st.integers(min_value=1, max_value=4),  # the visitor's address
        st.sampled_from([CHROME, "Firefox/128.0", GOOGLEBOT, ""]),
    ),
    max_size=20,
)
batches = st.lists(st.tuples(st.integers(min_value=0, max_value=3), views), max_size=6)
APPS = {"sitekey01": "app-1", "sitekey02": "app-2"}
PEOPLE = (CHROME, "Firefox/128.0")


# ``stores`` makes a fresh store per example: the fixture itself holds nothing between them.
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batches)
def test_totals_are_the_sums_of_the_days_and_visitors_are_exact(
    stores: Stores, made: list[tuple[int, list[tuple[str, int, str]]]]
) -> None:
    """Batches of page views, each counted on its own day (as a server counts them): each
    day's views, bots' views and distinct visitors are exact, and the totals their sums."""
    store = stores().store
    clock = [NOON]
    counter = VisitCounter(store, APPS.get, now=lambda: clock[0])
    for day, batch in sorted(made, key=lambda b: b[0]):
        clock[0] = NOON + day * DAY
        counter.count([Seen(s, f"198.51.100.{a}", agent, clock[0]) for s, a, agent in batch])
    for site, app in APPS.items():
        found = report(store.days(app, "2026-02-27", "2026-03-04"), "2026-02-27", "2026-03-04")
        assert [d.day for d in found.days][2:] == [day_of(NOON + i * DAY) for i in range(4)]
        for i, shown in enumerate(found.days[2:]):
            mine = [v for day, batch in made if day == i for v in batch if v[0] == site]
            people = [v for v in mine if v[2] in PEOPLE]
            assert shown.views == len(people)
            assert shown.bot_views == len(mine) - len(people)
            assert shown.visitors == len({(a, agent) for _, a, agent in people})
        assert found.total.views == sum(d.views for d in found.days)
        assert found.total.visitors == sum(d.visitors for d in found.days)
        assert found.total.bot_views == sum(d.bot_views for d in found.days)


def test_a_report_of_nothing_is_zeros(stores: Stores) -> None:
    found = report(
        stores().store.days("app-1", "2026-02-01", "2026-02-28"), "2026-02-01", "2026-02-28"
    )
    assert len(found.days) == 28 and found.total == DayVisits("")
