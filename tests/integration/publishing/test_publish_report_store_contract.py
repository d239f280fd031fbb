"""PublishReports contract (issue 44, point 5): SQLite locally and the checks table on
DynamoDB (moto) keep a deploy's report alike: pending, then done with its checks whole; the
builds list's summaries for a page of builds in one read; one app's reports apart from
another's and from the suite's items; deleting an app's reports."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zerocode.publishing.builds import new_build_id
from zerocode.publishing.publish_report import (
    CheckStatus,
    PublishReport,
    PublishReports,
    ReportState,
    Tally,
    failed,
    not_run,
    passed,
)


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PublishReports]:
    if request.param == "sqlite":
        from zerocode.adapters.sqlite.database import SqliteDatabase
        from zerocode.adapters.sqlite.publish_reports import SqlitePublishReports

        db = SqliteDatabase(tmp_path / "zc.sqlite3")
        yield SqlitePublishReports(db)
        db.close()
    else:
        request.getfixturevalue("aws")
        import boto3

        from zerocode.adapters.dynamodb.checks import DynamoCheckStore, create_checks_table
        from zerocode.adapters.dynamodb.publish_reports import DynamoPublishReports
        from zerocode.engine.check_suite import Tally as SuiteTally

        client = boto3.client("dynamodb", region_name="us-east-1")
        create_checks_table(client, "zc-checks")
        # The suite's own items share the partition: reports never read them, nor they these.
        DynamoCheckStore(client, "zc-checks").stamp_deploy("app-1", "b1", SuiteTally(passed=1))
        yield DynamoPublishReports(client, "zc-checks")


def done(app_id: str, build_id: str) -> PublishReport:
    return PublishReport(app_id=app_id, build_id=build_id, started_at=1_000.0).done(
        [
            not_run("a11y", "not run: the checking browser was busy"),
            passed("meta", "1 page(s) have a title"),
            failed("links", ["index.html → missing.html (not in the site)"], "Point it home"),
        ]
    )


def test_a_report_is_pending_then_done_with_its_checks_whole(store: PublishReports) -> None:
    build = new_build_id()
    pending = PublishReport(app_id="app-1", build_id=build, started_at=1_000.0)
    store.put(pending)
    assert store.get("app-1", build) == pending
    finished = done("app-1", build)
    store.put(finished)
    got = store.get("app-1", build)
    assert got == finished and got is not None
    assert got.state is ReportState.DONE and got.finished_at is not None
    assert [c.id for c in got.checks] == ["meta", "links", "a11y"]  # the report's own order
    assert [c.status for c in got.checks] == [
        CheckStatus.PASSED,
        CheckStatus.FAILED,
        CheckStatus.NOT_RUN,
    ]
    assert got.checks[1].details == ("index.html → missing.html (not in the site)",)
    assert got.checks[1].fix == "Point it home" and got.checks[2].passed is None
    assert got.checks[2].note == "not run: the checking browser was busy"
    gave_up = pending.gave_up("the report could not be made (OSError)")
    store.put(gave_up)
    assert store.get("app-1", build) == gave_up
    assert store.get("app-1", new_build_id()) is None
    assert store.get("app-2", build) is None


def test_summaries_answer_a_page_of_builds_in_one_read(store: PublishReports) -> None:
    builds = [new_build_id() for _ in range(105)]
    for n, build in enumerate(builds):
        if n % 3:
            store.put(done("app-1", build))
        else:
            store.put(PublishReport(app_id="app-1", build_id=build, started_at=2_000.0))
    store.put(done("app-2", builds[1]))
    asked = [*builds, "b0000000000000000000"]
    found = store.summaries("app-1", asked)
    assert set(found) == set(builds)
    assert found[builds[1]].state is ReportState.DONE
    assert found[builds[1]].tally == Tally(passed=1, failed=1, not_run=1)
    assert found[builds[0]].state is ReportState.PENDING
    assert found[builds[0]].started_at == 2_000.0 and found[builds[0]].tally == Tally()
    assert store.summaries("app-1", []) == {}
    assert store.summaries("app-3", builds[:2]) == {}


def test_deleting_an_apps_reports_leaves_the_others(store: PublishReports) -> None:
    mine, theirs = new_build_id(), new_build_id()
    store.put(done("app-1", mine))
    store.put(done("app-2", theirs))
    store.delete_app("app-1")
    assert store.get("app-1", mine) is None
    assert store.get("app-2", theirs) is not None
    store.delete_app("app-1")  # idempotent
