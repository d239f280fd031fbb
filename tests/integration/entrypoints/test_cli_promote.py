"""``zerocode promote``: a site into the KeyValueStore's hot set from the command line, with
the ledger in the pointer table on moto (the store's data plane is not in moto: a dict)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.integration.adapters.test_dynamodb_pointers import TABLE
from tests.integration.adapters.test_dynamodb_pointers import client as client  # the fixture
from tests.integration.adapters.test_hot_set_ledger import Hot
from zerocode.adapters.dynamodb.pointers import DynamoPointerStore
from zerocode.bootstrap import aws_parts
from zerocode.entrypoints import cli
from zerocode.publishing.pointers import SiteTarget

KVS_ARN = "arn:aws:cloudfront::123456789012:key-value-store/9a0c4f9e-3b5f-4c9e-9d7e-0a1b2c3d4e5f"


@pytest.fixture
def hot(client: Any, monkeypatch: pytest.MonkeyPatch) -> Hot:
    store = Hot()
    monkeypatch.setattr(aws_parts, "kvs_publisher", lambda settings: store)
    for name, value in {
        "MODE": "aws",
        "AWS_REGION": "us-east-1",
        "SITES_KVS_ARN": KVS_ARN,
        "POINTERS_TABLE": TABLE,
    }.items():
        monkeypatch.setenv(f"ZEROCODE_{name}", value)
    return store


def test_promote_copies_the_tables_pointer_into_the_hot_set(
    client: Any, hot: Hot, capsys: pytest.CaptureFixture[str]
) -> None:
    DynamoPointerStore(client, TABLE).point("site:deploykeya", SiteTarget("app1", "b1"))
    assert cli.main(["promote", "deploykeya"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "pointer": "site:deploykeya",
        "outcome": "promoted",
    }
    assert hot.items == {"site:deploykeya": SiteTarget("app1", "b1")}
    assert cli.main(["promote", "site:nosuchkey"]) == 1
    assert json.loads(capsys.readouterr().out)["outcome"] == "no pointer"


def test_promote_refuses_a_bad_key_and_local_mode(
    hot: Hot, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["promote", "no"]) == 2
    assert "a site key is 8 to 64" in capsys.readouterr().err
    monkeypatch.setenv("ZEROCODE_MODE", "local")
    assert cli.main(["promote", "deploykeya"]) == 2
    assert "AWS mode" in capsys.readouterr().err
    assert hot.items == {}
