"""A site's paths are output paths, checked by the output rule on both modes (issue 37). A
Vue app's ``public/dist/a.txt`` is the site's ``dist/a.txt``: on AWS it once raised
PathRefused (the source rule) after the check was written, and left the staging archive
behind. On AWS the whole site is checked before anything is written and the staging archive
goes whatever the outcome. Real builds (local: the box and Vite; AWS: the in-box program,
Vite, Chromium, S3 on moto's server), and crafted archives for what no real build makes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.integration.adapters.test_buildbox import (  # noqa: F401 (fixtures)
    cloud,
    installed_toolchain,
    moto_url,
    run_build,
    vue_build,
)
from tests.integration.adapters.test_codebuild_builder import (
    BUCKET,
    PNG,
    SITE,
    archive,
    builder_for,
    codebuild_client,
    finished,
    hand_back,
    keys,
)
from tests.integration.publishing.test_vue_template_builds import created_files
from zerocode.adapters.local.builder import LocalBuilder
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.publishing.builds import BuildJob, new_build_id

NAME_255 = "n" * 251 + ".txt"
PUBLIC = {"public/dist/a.txt": b"copied to the site's root by Vite", f"public/{NAME_255}": b"y"}


def vue_app() -> dict[str, bytes]:
    return {**{p: c.encode() for p, c in created_files("A Vue todo list").items()}, **PUBLIC}


@pytest.fixture
def s3(aws: None) -> Any:
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    return client


def test_a_site_under_dist_publishes_and_the_staging_archive_goes(s3: Any) -> None:
    builder = builder_for(codebuild_client(), s3)
    bid = new_build_id()
    extra = {"dist/dist": None, "dist/dist/a.txt": b"from public/", f"dist/{NAME_255}": b"y"}
    hand_back(s3, bid, archive({**SITE, **extra, "check.json": b"{}"}))
    done = finished(builder, bid, "SUCCEEDED")
    prefix = f"builds/app1/{bid}/"
    assert done.ok, done
    assert f"{prefix}dist/a.txt" in keys(s3) and f"{prefix}{NAME_255}" in keys(s3)
    assert s3.get_object(Bucket=BUCKET, Key=f"{prefix}dist/a.txt")["Body"].read() == b"from public/"
    assert keys(s3, "staging/") == []


def test_a_site_path_s3_cannot_hold_writes_nothing_and_the_archive_goes(s3: Any) -> None:
    """A path within the output rule (the archive's name is 1,003 bytes) whose key under
    ``builds/app1/{buildId}/`` (33 bytes) would pass S3's 1,024: refused before the check,
    the cover or any file is written."""
    builder = builder_for(codebuild_client(), s3)
    bid = new_build_id()
    deep = "/".join(["d" * 200] * 4) + "/" + "f" * 190  # 994 bytes
    parts = deep.split("/")
    dirs = {"dist/" + "/".join(parts[: i + 1]): None for i in range(len(parts) - 1)}
    hand_back(
        s3,
        bid,
        archive({**SITE, **dirs, f"dist/{deep}": b"x", "check.json": b"{}", "cover.png": PNG}),
    )
    done = finished(builder, bid, "SUCCEEDED", preview=True)
    assert not done.ok
    assert "storage key would be 1027 bytes, longer than S3's 1024" in (done.error or "")
    assert keys(s3) == []  # no site, no check, no preview cover, no staging archive


@pytest.mark.parametrize(
    ("entries", "links", "status"),
    [
        ({"dist": None, "dist/index.html": b"x"}, {"dist/a": "/workspaces/appB/x"}, "SUCCEEDED"),
        ({"dist": None, "log.txt": b"vite build failed"}, None, "FAILED"),
        ({"dist": None, "dist/" + "a" * 256: b"x"}, None, "SUCCEEDED"),
    ],
)
def test_a_refused_or_failed_build_leaves_no_staging_archive(
    s3: Any, entries: dict[str, bytes | None], links: dict[str, str] | None, status: str
) -> None:
    builder = builder_for(codebuild_client(), s3)
    bid = new_build_id()
    hand_back(s3, bid, archive(entries, links))
    done = finished(builder, bid, status)
    assert not done.ok
    assert keys(s3) == []


def test_a_vue_apps_public_dist_file_is_published_by_a_real_aws_build(
    cloud: dict[str, Any],  # noqa: F811
    installed_toolchain: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    build = vue_build(vue_app())
    done, outcome, _ = run_build(cloud, build, installed_toolchain, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert outcome.ok, outcome
    s3, bucket = cloud["s3"], cloud["bucket"]
    for path in PUBLIC:
        key = f"builds/app1/{build.build_id}/{path.removeprefix('public/')}"
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == PUBLIC[path]
    assert s3.list_objects_v2(Bucket=bucket, Prefix="staging/app1/").get("KeyCount") == 0


def test_a_vue_apps_public_dist_file_is_published_by_a_real_local_build(
    local_builder: LocalBuilder,
) -> None:
    job = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(vue_app()),
    )
    outcome = asyncio.run(local_builder.build(job))
    assert outcome.ok and outcome.output, outcome
    for path in PUBLIC:
        assert (Path(outcome.output) / path.removeprefix("public/")).read_bytes() == PUBLIC[path]
