"""The storage probes behind /api/health on real storage: SQLite on a tmpfs that fills up or
turns read-only, DynamoDB on moto."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tmpfs import ballast, remount, tmpfs
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.health import SqliteStorageProbe


def test_sqlite_probe_writes_one_row_and_says_ok(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "zc.sqlite3")
    probe = SqliteStorageProbe(tmp_path / "zc.sqlite3", tmp_path, min_free_mb=1)
    assert probe.check().ok and probe.check().ok
    assert db.query("SELECT count(*) FROM health_probe", ())[0][0] == 1


def test_sqlite_probe_tells_low_space_and_a_read_only_store(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "data", "4m") as data:
        SqliteDatabase(data / "zc.sqlite3").close()
        probe = SqliteStorageProbe(data / "zc.sqlite3", data, min_free_mb=2)
        assert probe.check().ok
        weight = ballast(data, leave_mb=1)
        [low] = probe.check().problems
        assert low.startswith(f"the data directory {data} has 1.0 MB free")
        assert low.endswith("below the minimum of 2 MB (ZEROCODE_MIN_FREE_MB)")
        weight.unlink()
        assert probe.check().ok
        probe._close()  # nothing may hold a file open for writing to make it read-only
        remount(data, read_only=True)
        [refused] = probe.check().problems
        # WAL needs its -shm: a read-only file system is already refused at the open.
        where = f"the database {data / 'zc.sqlite3'} cannot take a write: "
        assert refused.startswith(where + "SQLITE_CANTOPEN") or refused.startswith(
            where + "SQLITE_READONLY"
        )
        remount(data, read_only=False)
        assert probe.check().ok  # the next probe connects again


def test_dynamodb_probe_puts_one_item_and_names_the_error_kind(aws: None) -> None:
    import boto3

    from zerocode.adapters.dynamodb.health import KEY, DynamoStorageProbe
    from zerocode.adapters.dynamodb.lease import create_leases_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_leases_table(client, "zc-leases")
    assert DynamoStorageProbe(client, "zc-leases").check().ok
    item = client.get_item(TableName="zc-leases", Key={"key": {"S": KEY}})["Item"]
    assert float(item["expires_at"]["N"]) > 0  # the table's TTL sweeps it
    [missing] = DynamoStorageProbe(client, "zc-gone").check().problems
    assert missing == "the DynamoDB table zc-gone cannot take a write: ResourceNotFoundException"


@pytest.mark.parametrize("code", ["ProvisionedThroughputExceededException", "ThrottlingException"])
def test_dynamodb_probe_tells_throttling(aws: None, code: str) -> None:
    """moto never throttles: the refusal is injected at botocore's parsed response, the
    place where DynamoDB's own answer would arrive, after botocore's retries."""
    import boto3
    from botocore.exceptions import ClientError

    from zerocode.adapters.dynamodb.health import DynamoStorageProbe
    from zerocode.adapters.dynamodb.lease import create_leases_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_leases_table(client, "zc-leases")

    def throttle(**_: object) -> None:
        raise ClientError({"Error": {"Code": code, "Message": "slow down"}}, "PutItem")

    client.meta.events.register("before-call.dynamodb.PutItem", throttle)
    [busy] = DynamoStorageProbe(client, "zc-leases").check().problems
    assert busy == f"the DynamoDB table zc-leases cannot take a write: {code}"


def test_the_start_up_check_makes_the_directory_and_leaves_nothing_behind(tmp_path: Path) -> None:
    from zerocode.adapters.local.free_space import data_dir_refusal

    data = tmp_path / "new" / "data"
    assert data_dir_refusal(data, min_free_mb=1) is None
    assert data.is_dir() and list(data.iterdir()) == []
    said = data_dir_refusal(data, min_free_mb=1 << 30)  # no disk has a petabyte free
    assert said is not None and said.startswith(f"the data directory {data} has ")
    (tmp_path / "file").write_text("")
    said = data_dir_refusal(tmp_path / "file" / "data", min_free_mb=1)
    assert (
        said
        == f"the data directory {tmp_path / 'file' / 'data'} cannot be created (Not a directory)"
    )
