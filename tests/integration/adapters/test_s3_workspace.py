"""S3Workspace specifics under moto: conditional writes turn lost updates into Conflict.

A second writer is slipped in between the adapter's HeadObject and its
PutObject with a botocore ``after-call`` hook, so the real adapter code runs
against the real (moto) S3 protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from zerocode.apps.workspace import FileInfo, WorkspaceLimits
from zerocode.errors import Conflict

BUCKET = "zc-workspaces"


@pytest.fixture
def s3(aws: None) -> Iterator[Any]:
    import boto3

    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield client


def _workspace(client: Any, **kw: Any) -> Any:
    from zerocode.adapters.aws.s3_workspace import S3Workspace

    return S3Workspace(client, BUCKET, **kw)


def _after_head(client: Any, action: Callable[[], None]) -> None:
    """Run ``action`` once, right after the next HeadObject returns to the adapter."""
    fired: list[bool] = []

    def hook(**_: Any) -> None:
        if not fired:
            fired.append(True)
            action()

    client.meta.events.register("after-call.s3.HeadObject", hook)


def test_keys_live_under_prefix_and_app(s3: Any) -> None:
    ws = _workspace(s3, prefix="ws")
    ws.write("app1", "src/App.vue", b"x")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert keys == ["ws/app1/src/App.vue"]


def test_create_raced_by_another_creator_is_a_conflict(s3: Any) -> None:
    import boto3

    ws = _workspace(s3)
    other = boto3.client("s3", region_name="us-east-1")
    _after_head(
        s3, lambda: other.put_object(Bucket=BUCKET, Key="workspaces/app1/a.txt", Body=b"theirs")
    )
    with pytest.raises(Conflict, match="another writer"):
        ws.write("app1", "a.txt", b"mine")
    assert ws.read("app1", "a.txt") == b"theirs"


def test_replace_raced_by_another_writer_is_a_conflict(s3: Any) -> None:
    import boto3

    ws = _workspace(s3)
    ws.write("app1", "a.txt", b"v1")
    other = boto3.client("s3", region_name="us-east-1")
    _after_head(
        s3, lambda: other.put_object(Bucket=BUCKET, Key="workspaces/app1/a.txt", Body=b"theirs")
    )
    with pytest.raises(Conflict):
        ws.write("app1", "a.txt", b"mine")
    assert ws.read("app1", "a.txt") == b"theirs"
    ws.write("app1", "a.txt", b"mine")  # a retry after re-reading succeeds
    assert ws.read("app1", "a.txt") == b"mine"


def test_replace_raced_by_a_delete_is_a_conflict(s3: Any) -> None:
    import boto3

    ws = _workspace(s3)
    ws.write("app1", "a.txt", b"v1")
    other = boto3.client("s3", region_name="us-east-1")
    _after_head(s3, lambda: other.delete_object(Bucket=BUCKET, Key="workspaces/app1/a.txt"))
    with pytest.raises(Conflict):
        ws.write("app1", "a.txt", b"mine")
    assert ws.list("app1") == []


def test_moto_enforces_both_conditions(s3: Any) -> None:
    """Documents what the adapter relies on, independently of the adapter."""
    from botocore.exceptions import ClientError

    s3.put_object(Bucket=BUCKET, Key="k", Body=b"1", IfNoneMatch="*")
    with pytest.raises(ClientError) as created:
        s3.put_object(Bucket=BUCKET, Key="k", Body=b"2", IfNoneMatch="*")
    assert created.value.response["Error"]["Code"] == "PreconditionFailed"
    etag = s3.head_object(Bucket=BUCKET, Key="k")["ETag"]
    s3.put_object(Bucket=BUCKET, Key="k", Body=b"3", IfMatch=etag)
    with pytest.raises(ClientError) as replaced:
        s3.put_object(Bucket=BUCKET, Key="k", Body=b"4", IfMatch=etag)
    assert replaced.value.response["Error"]["Code"] == "PreconditionFailed"
    assert s3.get_object(Bucket=BUCKET, Key="k")["Body"].read() == b"3"


def test_list_paginates_and_ignores_foreign_keys(s3: Any) -> None:
    ws = _workspace(s3, limits=WorkspaceLimits(max_files=2000))
    for i in range(1005):
        s3.put_object(Bucket=BUCKET, Key=f"workspaces/app1/src/f{i:04}.js", Body=b"x")
    s3.put_object(Bucket=BUCKET, Key="workspaces/app1/node_modules/vue/index.js", Body=b"x")
    s3.put_object(Bucket=BUCKET, Key="workspaces/app1/a//b.js", Body=b"x")
    files = ws.list("app1")
    assert len(files) == 1005
    assert files[0] == FileInfo("src/f0000.js", 1) and files[-1].path == "src/f1004.js"


def test_delete_app_deletes_in_batches(s3: Any) -> None:
    ws = _workspace(s3)
    for i in range(1203):
        s3.put_object(Bucket=BUCKET, Key=f"workspaces/app1/f{i}", Body=b"x")
    s3.put_object(Bucket=BUCKET, Key="workspaces/app1/node_modules/x.js", Body=b"x")
    s3.put_object(Bucket=BUCKET, Key="workspaces/app12/keep.txt", Body=b"x")
    assert ws.delete_app("app1") == 1204
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    assert keys == ["workspaces/app12/keep.txt"]


def test_storage_errors_are_not_hidden(s3: Any) -> None:
    """A missing bucket is an outage, not a missing file."""
    from botocore.exceptions import ClientError

    from zerocode.apps.workspace import FileMissing

    ws = _workspace(s3)
    ws.bucket = "no-such-bucket"
    with pytest.raises(ClientError) as exc:
        ws.read("app1", "a.txt")
    assert not isinstance(exc.value, FileMissing)
    with pytest.raises(ClientError):
        ws.write("app1", "a.txt", b"x")
