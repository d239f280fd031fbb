"""The ImageStore contract (memory/images.py) on local files and on S3 (moto): images kept by
digest, read back whole, refused by a digest that is not one, gone with their app (M8) and
on S3 inside the app's versions folder, so the version store's deletion and grants cover
them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pictures import png
from zerocode.memory.images import ImageMissing, ImageStore

A, B = png((10, 10), (1, 2, 3)), png((20, 10), (4, 5, 6))
SHA_A, SHA_B = hashlib.sha256(A).hexdigest(), hashlib.sha256(B).hexdigest()


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ImageStore]:
    if request.param == "local":
        from zerocode.adapters.local.message_images import LocalMessageImages

        yield LocalMessageImages(tmp_path / "images")
        return
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.aws.s3_message_images import S3MessageImages

    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket="zc-workspaces")
    yield S3MessageImages(client, "zc-workspaces")


def test_images_are_kept_by_digest_and_apart_per_app(store: ImageStore) -> None:
    store.put("app1", SHA_A, A)
    store.put("app1", SHA_A, A)  # the same image again: nothing new
    store.put("app2", SHA_B, B)
    assert store.get("app1", SHA_A) == A and store.get("app2", SHA_B) == B
    with pytest.raises(ImageMissing):
        store.get("app2", SHA_A)  # another app's image is not this app's
    for bad in ("../etc/passwd", "A" * 64, SHA_A[:63], ""):
        with pytest.raises(ImageMissing):
            store.get("app1", bad)
    assert store.delete_app("app1") == 1
    with pytest.raises(ImageMissing):
        store.get("app1", SHA_A)
    assert store.get("app2", SHA_B) == B
    assert store.delete_app("never") == 0


@pytest.mark.usefixtures("aws")
def test_on_s3_they_live_in_the_apps_versions_folder() -> None:
    import boto3

    from zerocode.adapters.aws.s3_message_images import S3MessageImages
    from zerocode.adapters.aws.s3_versions import S3VersionStore

    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket="zc-workspaces")
    images, versions = (
        S3MessageImages(client, "zc-workspaces"),
        S3VersionStore(client, "zc-workspaces"),
    )
    images.put("app1", SHA_A, A)
    keys = [o["Key"] for o in client.list_objects_v2(Bucket="zc-workspaces")["Contents"]]
    assert keys == [f"versions/app1/images/{SHA_A}"]
    assert versions.prefix == images.prefix  # one prefix: the grants that cover one cover both
    versions.delete_app("app1")  # an app's versions deleted: its images with them
    assert "Contents" not in client.list_objects_v2(Bucket="zc-workspaces")
