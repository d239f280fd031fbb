"""The storage probes behind /api/health on real storage: SQLite on a tmpfs that fills up or
turns read-only, DynamoDB on moto."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import redis_client_or_skip
from tests.e2e.conftest import free_port
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


def test_s3_probe_puts_one_object_where_no_app_can_be_and_names_the_error(aws: None) -> None:
    """Issue 42: health probes every store the AWS mode writes, the workspaces bucket too."""
    import boto3

    from zerocode.adapters.aws.s3_health import KEY, S3StorageProbe
    from zerocode.apps.workspace import PathRefused, check_app_id

    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket="zc-workspaces")
    assert S3StorageProbe(client, "zc-workspaces").check().ok
    assert client.get_object(Bucket="zc-workspaces", Key=KEY)["Body"].read()
    with pytest.raises(PathRefused):
        check_app_id(KEY.split("/")[1])  # ".health" is no app's id
    [missing] = S3StorageProbe(client, "zc-gone").check().problems
    assert missing == "the S3 bucket zc-gone cannot take a write: NoSuchBucket"


def test_redis_probe_sets_one_key_and_says_when_it_cannot() -> None:
    from zerocode.adapters.redis.health import KEY, RedisStorageProbe

    client = redis_client_or_skip()
    assert RedisStorageProbe(client).check().ok
    assert client.ttl(KEY) > 0  # it expires by itself
    [down] = RedisStorageProbe.from_url(f"redis://127.0.0.1:{free_port()}/0").check().problems
    assert down == "the cache (Redis) cannot take a write: ConnectionError"


def test_the_aws_probe_asks_every_store_the_mode_writes(aws: None) -> None:
    import boto3

    from zerocode.bootstrap.aws_wiring import aws_storage_probe
    from zerocode.bootstrap.settings import Settings

    dynamo = boto3.client("dynamodb", region_name="us-east-1")
    dynamo.create_table(
        TableName="zc-leases",
        KeySchema=[{"AttributeName": "key", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "key", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    down = f"redis://127.0.0.1:{free_port()}/0"
    settings = Settings(
        mode="aws", leases_table="zc-leases", workspace_bucket="zc-none", redis_url=down
    )
    problems = aws_storage_probe(settings, dynamo).check().problems
    assert problems == (
        "the S3 bucket zc-none cannot take a write: NoSuchBucket",
        "the cache (Redis) cannot take a write: ConnectionError",
    )
