"""PreviewCoverStore contract, on every adapter: local files and S3 (moto). Plus where each
keeps them: out of what the sites server or CloudFront serve (issue 26, point 7)."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zerocode.errors import InvalidInput
from zerocode.publishing.builds import new_build_id
from zerocode.publishing.preview_covers import PNG_MAGIC, PreviewCovers

BUCKET = "zc-builds"
APP, OTHER = "a" * 20, "b" * 20


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "local":
        from zerocode.adapters.local.preview_covers import LocalPreviewCovers

        yield LocalPreviewCovers(tmp_path / "preview-covers")
        return
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.aws.s3_preview_covers import S3PreviewCovers

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    yield S3PreviewCovers(s3, BUCKET)


def png(n: int) -> bytes:
    return PNG_MAGIC + bytes([n]) * 100


def test_a_cover_round_trips_and_a_missing_one_is_none(store: Any) -> None:
    b1, b2 = new_build_id(), new_build_id()
    assert store.get(APP, b1) is None and not store.exists(APP, b1)
    store.put(APP, b1, png(1))
    assert store.get(APP, b1) == png(1) and store.exists(APP, b1)
    assert store.get(APP, b2) is None and store.get(OTHER, b1) is None
    store.put(APP, b1, png(9))  # replaced whole
    assert store.get(APP, b1) == png(9)


def test_prune_keeps_only_what_it_is_told_and_only_of_that_app(store: Any) -> None:
    builds = [new_build_id() for _ in range(4)]
    for n, b in enumerate(builds):
        store.put(APP, b, png(n))
    store.put(OTHER, builds[0], png(7))
    assert store.prune(APP, [builds[3], builds[1]]) == 2
    assert [store.exists(APP, b) for b in builds] == [False, True, False, True]
    assert store.get(OTHER, builds[0]) == png(7)
    assert store.prune(APP, []) == 2 and store.prune(APP, []) == 0
    assert store.prune("c" * 20, []) == 0  # an app with none


def test_delete_app_removes_that_apps_covers_only(store: Any) -> None:
    b = new_build_id()
    store.put(APP, b, png(1))
    store.put(OTHER, b, png(2))
    assert store.delete_app(APP) >= 1
    assert store.get(APP, b) is None and store.get(OTHER, b) == png(2)
    assert store.delete_app(APP) == 0  # idempotent


@pytest.mark.parametrize("bad", ["..", "../x", "a/b", "", "x" * 65, "a\x00"])
def test_ids_that_could_name_another_place_are_refused(store: Any, bad: str) -> None:
    with pytest.raises(InvalidInput):
        store.put(APP, bad, png(1))
    with pytest.raises(InvalidInput):
        store.get(bad, new_build_id())


def test_local_covers_are_private_files_out_of_the_served_covers(tmp_path: Path) -> None:
    """The deploy covers' root (``{data}/covers``, served by the sites server) is not where
    preview covers go; files are 0600 in 0700 directories."""
    from zerocode.bootstrap import wiring
    from zerocode.bootstrap.settings import Settings

    p = wiring.platform(Settings(data_dir=tmp_path, covers=False, runtime_check=False))
    covers = p.publishing.preview_covers
    assert isinstance(covers, PreviewCovers)
    b = new_build_id()
    covers.store.put(APP, b, png(1))
    file = tmp_path / "preview-covers" / APP / f"{b}.png"
    assert file.read_bytes() == png(1)
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    assert not (tmp_path / "covers").exists()


def test_s3_covers_are_kept_out_of_what_cloudfront_reads(aws: None) -> None:
    import boto3

    from zerocode.adapters.aws.s3_preview_covers import S3PreviewCovers

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    b = new_build_id()
    S3PreviewCovers(s3, BUCKET).put(APP, b, png(1))
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert keys == [f"preview-covers/{APP}/{b}.png"]  # not builds/ (CloudFront's only grant)
    head = s3.head_object(Bucket=BUCKET, Key=keys[0])
    assert head["ContentType"] == "image/png"
