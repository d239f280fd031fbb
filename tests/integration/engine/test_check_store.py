"""The CheckStore contract (issue 25: an app's suite of acceptance checks), on SQLite (a real
file) and DynamoDB (moto), two instances as two processes would have: numbered per app, kept
in order, retired with a reason and never lost, bounded, and gone with its app."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.unit.engine.test_acceptance import TODO
from zerocode.adapters.sqlite.checks import SqliteCheckStore
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.engine.acceptance import CheckInvalid, parse_check
from zerocode.engine.check_suite import (
    MAX_CHECKS,
    MAX_RUNS,
    MAX_SCREENSHOT,
    CheckResult,
    CheckStore,
    Evidence,
    SuiteRun,
    Tally,
)
from zerocode.errors import Conflict, NotFound

Stores = Callable[[], CheckStore]
CHECK = parse_check(TODO)
OTHER = parse_check({**TODO, "description": "The list starts empty", "steps": []})


@pytest.fixture(params=["sqlite", "dynamodb"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stores]:
    if request.param == "dynamodb":
        request.getfixturevalue("aws")
        import boto3

        from zerocode.adapters.dynamodb.checks import DynamoCheckStore, create_checks_table

        create_checks_table(boto3.client("dynamodb", region_name="us-east-1"), "zc-checks")

        def dynamodb() -> CheckStore:  # a client of its own, as another process has
            return DynamoCheckStore(boto3.client("dynamodb", region_name="us-east-1"), "zc-checks")

        yield dynamodb
        return
    dbs: list[SqliteDatabase] = []

    def sqlite() -> CheckStore:
        dbs.append(SqliteDatabase(tmp_path / "zerocode.sqlite3"))
        return SqliteCheckStore(dbs[-1])

    yield sqlite
    for db in dbs:
        db.close()


def test_checks_are_numbered_per_app_and_listed_in_order(stores: Stores) -> None:
    one, two = stores(), stores()
    assert one.list("app1") == []
    first = one.add("app1", CHECK, turn=1)
    second = two.add("app1", OTHER, turn=3)
    assert (first.id, second.id) == ("c1", "c2")
    assert one.add("app2", OTHER, turn=1).id == "c1"
    listed = two.list("app1")
    assert [c.id for c in listed] == ["c1", "c2"] and listed == [first, second]
    assert listed[0].check == CHECK and listed[1].added_turn == 3


def test_a_retired_check_keeps_its_record_and_cannot_be_retired_again(stores: Stores) -> None:
    store = stores()
    store.add("app1", CHECK, turn=1)
    retired = store.retire("app1", "c1", "the user asked for a different list", turn=4)
    assert retired.retired == "the user asked for a different list" and retired.retired_turn == 4
    assert stores().list("app1") == [retired]
    with pytest.raises(Conflict, match="retired already"):
        store.retire("app1", "c1", "again", turn=5)
    for missing in ("c2", "x1", "c", "c1" + "0" * 20):
        with pytest.raises(NotFound):
            store.retire("app1", missing, "why", turn=5)
    store.add("app1", OTHER, turn=5)
    with pytest.raises(CheckInvalid, match="reason"):
        store.retire("app1", "c2", "  ", turn=6)
    assert store.add("app1", OTHER, turn=7).id == "c3"  # numbers are never reused


def test_live_checks_are_bounded_and_retiring_one_makes_room(stores: Stores) -> None:
    store = stores()
    for turn in range(MAX_CHECKS):
        store.add("app1", CHECK, turn=turn + 1)
    with pytest.raises(CheckInvalid, match="retire one"):
        store.add("app1", OTHER, turn=99)
    store.retire("app1", "c7", "no longer asked for", turn=99)
    assert store.add("app1", OTHER, turn=100).id == f"c{MAX_CHECKS + 1}"
    assert store.add("app2", OTHER, turn=1).id == "c1"  # another app's suite is its own


def test_a_deleted_app_leaves_no_check(stores: Stores) -> None:
    store = stores()
    store.add("app1", CHECK, turn=1)
    store.add("app2", CHECK, turn=1)
    store.delete_app("app1")
    assert store.list("app1") == [] and len(store.list("app2")) == 1
    assert store.add("app1", CHECK, turn=2).id == "c1"


def _run(turn: int, *results: CheckResult, round_: int = 0) -> SuiteRun:
    return SuiteRun(
        turn=turn, round=round_, build_id=f"b{turn}", digest=f"d{turn}", results=results
    )


PASSED = CheckResult(check_id="c1", status="passed")
FAILED = CheckResult(
    check_id="c2",
    status="failed",
    evidence=Evidence(where="expect[0]", expected="1 of css 'li'", actual="0 found", shot=True),
    screenshot=b"\x89PNG fake",
)


def test_runs_are_numbered_newest_first_with_their_evidence_and_screenshots(
    stores: Stores,
) -> None:
    one, two = stores(), stores()
    first = one.record_run("app1", _run(1, PASSED, FAILED))
    second = two.record_run("app1", _run(2, PASSED, round_=1))
    assert (first.number, second.number) == (1, 2)
    runs = one.runs("app1")
    assert [r.number for r in runs] == [2, 1]
    assert runs[1].turn == 1 and runs[1].build_id == "b1" and runs[1].digest == "d1"
    assert runs[0].round == 1
    failed = runs[1].results[1]
    assert failed.status == "failed" and failed.screenshot is None  # listed without the bytes
    assert failed.evidence == FAILED.evidence
    assert runs[1].tally.to_json() == {"passed": 1, "failed": 1, "notRun": 0}
    assert two.screenshot("app1", 1, "c2") == b"\x89PNG fake"
    assert two.screenshot("app1", 1, "c1") is None and two.screenshot("app2", 1, "c2") is None
    assert one.runs("app2") == []


def test_a_run_that_could_not_run_says_why_and_big_screenshots_are_not_kept(stores: Stores) -> None:
    store = stores()
    huge = CheckResult(
        check_id="c1",
        status="failed",
        evidence=Evidence(where="steps[0]", expected="x", actual="y", shot=False),
        screenshot=b"x" * (MAX_SCREENSHOT + 1),
    )
    store.record_run("app1", _run(1, huge))
    not_run = SuiteRun(
        turn=2,
        round=0,
        build_id=None,
        digest=None,
        results=(CheckResult(check_id="c1", status="not_run"),),
        why_not_run="no browser",
    )
    store.record_run("app1", not_run)
    latest, earlier = store.runs("app1")
    assert latest.why_not_run == "no browser" and latest.tally.not_run == 1
    assert latest.build_id is None
    assert store.screenshot("app1", earlier.number, "c1") is None


def test_old_runs_go_past_the_bound(stores: Stores) -> None:
    store = stores()
    for turn in range(MAX_RUNS + 3):
        store.record_run("app1", _run(turn + 1, FAILED))
    runs = store.runs("app1", limit=MAX_RUNS + 10)
    assert len(runs) == MAX_RUNS and runs[-1].number == 4
    assert store.screenshot("app1", 3, "c2") is None and store.screenshot("app1", 4, "c2")


def test_deploys_are_stamped_with_the_suite_state_and_everything_goes_with_the_app(
    stores: Stores,
) -> None:
    store = stores()
    store.stamp_deploy("app1", "b9", Tally(passed=2, failed=1))
    store.stamp_deploy("app2", "b1", Tally())
    assert stores().deploy_stamps("app1") == {"b9": Tally(passed=2, failed=1)}
    store.add("app1", CHECK, turn=1)
    store.record_run("app1", _run(1, FAILED))
    store.delete_app("app1")
    assert store.runs("app1") == [] and store.deploy_stamps("app1") == {}
    assert store.screenshot("app1", 1, "c2") is None
    assert store.deploy_stamps("app2") == {"b1": Tally()}
