"""What only the DynamoDB CheckStore has to get right (the contract is in
tests/integration/engine/test_check_store.py): numbering and the live bound under races,
the item limit, the sort-key order past c9, and pages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.unit.engine.test_acceptance import TODO
from zerocode.engine.acceptance import CheckInvalid, parse_check
from zerocode.engine.check_suite import (
    MAX_CHECKS,
    MAX_SCREENSHOT,
    CheckResult,
    Evidence,
    SuiteRun,
    Tally,
)
from zerocode.errors import Conflict

TABLE = "zc-checks"
CHECK = parse_check(TODO)


class Client:
    """A DynamoDB client that lets a rival in just before the first call of a kind (as a
    process writing at the same moment would), and may cut every Query page short."""

    def __init__(self, client: Any, page: int | None = None) -> None:
        self.client, self.page = client, page
        self.before: dict[str, Callable[[], object]] = {}
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)
        if not callable(method) or name == "meta":
            return method

        def call(**kw: Any) -> Any:
            self.calls.append(name)
            rival = self.before.pop(name, None)
            if rival is not None:
                rival()
            if name == "query" and self.page is not None:
                kw["Limit"] = min(kw.get("Limit", self.page), self.page)
            return method(**kw)

        return call


@dataclass
class Env:
    raw: Any  # the plain boto3 client

    def store(self, page: int | None = None) -> Any:
        from zerocode.adapters.dynamodb.checks import DynamoCheckStore

        return DynamoCheckStore(Client(self.raw, page), TABLE)

    def keys(self, app_id: str) -> list[str]:
        items = self.raw.query(
            TableName=TABLE,
            KeyConditionExpression="app_id = :a",
            ExpressionAttributeValues={":a": {"S": app_id}},
        )["Items"]
        return [i["sk"]["S"] for i in items]

    def counter(self, app_id: str) -> dict[str, int]:
        item = self.raw.get_item(
            TableName=TABLE, Key={"app_id": {"S": app_id}, "sk": {"S": "counter#check"}}
        )["Item"]
        return {k: int(item[k]["N"]) for k in ("last", "live")}


@pytest.fixture
def env(aws: None) -> Iterator[Env]:
    import boto3

    from zerocode.adapters.dynamodb.checks import create_checks_table

    raw = boto3.client("dynamodb", region_name="us-east-1")
    create_checks_table(raw, TABLE)
    yield Env(raw)


def _run(turn: int, *results: CheckResult) -> SuiteRun:
    return SuiteRun(turn=turn, round=0, build_id=f"b{turn}", digest="d", results=results)


def _failed(check_id: str, shot: bytes | None) -> CheckResult:
    return CheckResult(
        check_id=check_id,
        status="failed",
        evidence=Evidence(where="expect[0]", expected="x", actual="y", shot=shot is not None),
        screenshot=shot,
    )


def test_a_writer_that_loses_the_race_for_a_check_number_takes_the_next(env: Env) -> None:
    ours, rival = env.store(), env.store()
    ours.add("app1", CHECK, turn=1)
    ours.client.calls.clear()
    ours.client.before["transact_write_items"] = lambda: rival.add("app1", CHECK, turn=2)
    assert ours.add("app1", CHECK, turn=3).id == "c3"  # c2 went to the rival meanwhile
    assert [(c.id, c.added_turn) for c in ours.list("app1")] == [("c1", 1), ("c2", 2), ("c3", 3)]
    assert env.counter("app1") == {"last": 3, "live": 3}
    assert ours.client.calls.count("transact_write_items") == 2  # lost once, then written


def test_two_writers_cannot_both_take_the_last_live_place(env: Env) -> None:
    ours, rival = env.store(), env.store()
    for turn in range(MAX_CHECKS - 1):
        ours.add("app1", CHECK, turn=turn + 1)
    ours.client.before["transact_write_items"] = lambda: rival.add("app1", CHECK, turn=98)
    with pytest.raises(CheckInvalid, match="retire one"):
        ours.add("app1", CHECK, turn=99)
    assert len(ours.list("app1")) == MAX_CHECKS
    assert env.counter("app1") == {"last": MAX_CHECKS, "live": MAX_CHECKS}


def test_a_check_retired_meanwhile_is_a_conflict_and_counted_down_once(env: Env) -> None:
    ours, rival = env.store(), env.store()
    ours.add("app1", CHECK, turn=1)
    ours.add("app1", CHECK, turn=1)
    ours.client.before["transact_write_items"] = lambda: rival.retire(
        "app1", "c2", "the rival's reason", turn=2
    )
    with pytest.raises(Conflict, match="retired already"):
        ours.retire("app1", "c2", "ours", turn=3)
    assert ours.list("app1")[1].retired == "the rival's reason"
    assert env.counter("app1") == {"last": 2, "live": 1}


def test_a_writer_that_loses_the_race_for_a_run_number_takes_the_next(env: Env) -> None:
    ours, rival = env.store(), env.store()
    rival.record_run("app1", _run(1))
    ours.client.before["put_item"] = lambda: rival.record_run("app1", _run(2, _failed("c1", b"2")))
    mine = ours.record_run("app1", _run(3, _failed("c1", b"3")))
    assert mine.number == 3 and mine.turn == 3 and mine.results[0].screenshot is None
    assert [(r.number, r.turn) for r in ours.runs("app1")] == [(3, 3), (2, 2), (1, 1)]
    assert ours.screenshot("app1", 2, "c1") == b"2" and ours.screenshot("app1", 3, "c1") == b"3"


def test_a_screenshot_at_the_limit_is_kept_and_one_past_it_is_not(env: Env) -> None:
    store = env.store()
    at_limit, past = b"\x89" * MAX_SCREENSHOT, b"\x89" * (MAX_SCREENSHOT + 1)
    store.record_run("app1", _run(1, _failed("c1", at_limit), _failed("c2", past)))
    assert store.screenshot("app1", 1, "c1") == at_limit
    assert store.screenshot("app1", 1, "c2") is None
    assert env.keys("app1") == ["run#0000000001", "shot#0000000001#c1"]
    assert store.screenshot("app1", 1, "c" + "9" * 2000) is None  # past DynamoDB's key size


def test_numbers_sort_as_numbers_past_c9_and_run_9(env: Env) -> None:
    store = env.store()
    for turn in range(12):
        store.add("app1", CHECK, turn=turn)
        store.record_run("app1", _run(turn))
    assert [c.id for c in store.list("app1")] == [f"c{n}" for n in range(1, 13)]
    assert [r.number for r in store.runs("app1", limit=3)] == [12, 11, 10]


def test_every_read_and_delete_app_follow_pages(env: Env) -> None:
    store, other = env.store(page=2), env.store()
    for turn in range(5):
        store.add("app1", CHECK, turn=turn)
        store.record_run("app1", _run(turn, _failed("c1", b"png")))
        store.stamp_deploy("app1", f"b{turn}", Tally(passed=turn))
    other.add("app2", CHECK, turn=1)
    assert len(store.list("app1")) == 5 and len(store.runs("app1", limit=4)) == 4
    assert len(store.deploy_stamps("app1")) == 5
    store.client.calls.clear()
    store.delete_app("app1")
    assert store.client.calls.count("query") > 5  # 21 items, 2 a page
    assert env.keys("app1") == [] and len(other.list("app2")) == 1
    assert store.add("app1", CHECK, turn=9).id == "c1"


def test_delete_app_follows_pages_cut_by_the_1mb_response_limit(env: Env) -> None:
    store = env.store()
    for turn in range(5):  # about three screenshots of 300 KB a page
        store.record_run("app1", _run(turn, _failed("c1", bytes(MAX_SCREENSHOT))))
    store.client.calls.clear()
    store.delete_app("app1")
    assert store.client.calls.count("query") > 1
    assert env.keys("app1") == []
