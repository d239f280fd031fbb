"""The preview sweep (zerocode.publishing.eviction): stale preview pointers leave the site
pointer store, sites never do, and opening an app brings its preview back.

The KeyValueStore data plane is botocore's Stubber (moto has none); the apps and builds are
the SQLite stores of a local platform, whose pointers (SQLite) the sweep walks the same way.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore import UNSIGNED
from botocore.config import Config
from botocore.stub import Stubber
from fastapi.testclient import TestClient

from zerocode.adapters.aws.cloudfront_publisher import KvsPublisher
from zerocode.apps.records import App, CodeGenType, new_app_id, new_deploy_key, new_preview_key
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints import preview_sweep
from zerocode.http.app import create_app
from zerocode.publishing.builds import BuildState, built_at, new_build_id
from zerocode.publishing.eviction import DAY, RESTORE_MARGIN_DAYS, PreviewSweep
from zerocode.publishing.pointers import SiteTarget, preview_pointer, site_pointer

ARN = "arn:aws:cloudfront::123456789012:key-value-store/327284aa-bcd5-499f-a3ff-26b9a9d31b58"
ROOT = Path(__file__).resolve().parents[3]


def test_bytes_per_pointer_as_the_code_makes_them() -> None:
    """The figures docs/operations.md gives for the KeyValueStore's ceiling, from keys and
    values the platform makes (a key and its value, UTF-8, are what a store holds)."""
    target = SiteTarget(new_app_id(), new_build_id()).encode()
    site = site_pointer(new_deploy_key())
    preview = preview_pointer(new_preview_key())
    assert (len(site.encode()), len(preview.encode()), len(target.encode())) == (17, 34, 41)
    per_app = len(site) + len(preview) + 2 * len(target)
    assert (len(site) + len(target), len(preview) + len(target), per_app) == (58, 75, 133)
    ceiling = 5_000_000
    doc = (ROOT / "docs" / "operations.md").read_text()
    for figure in ("58 bytes", "75 bytes", "133 bytes", f"{ceiling // per_app:,}"):
        assert figure in doc, figure


def test_a_build_id_says_when_it_was_made() -> None:
    assert built_at(new_build_id(now=1_700_000_000.5)) == 1_700_000_000.5
    assert built_at("not-a-build") is None


# -- the sweep over the KeyValueStore (Stubber) --------------------------------------------


@pytest.fixture
def stub() -> Iterator[Stubber]:
    client = boto3.client(
        "cloudfront-keyvaluestore",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
        config=Config(signature_version=UNSIGNED),
    )
    with Stubber(client) as stubber:
        yield stubber


@pytest.fixture
def local(tmp_path: Path) -> Platform:
    return wiring.platform(Settings(data_dir=tmp_path, covers=False, runtime_check=False))


def expect_removal(stub: Stubber, key: str, value: str, etag: str) -> None:
    stub.add_response(
        "describe_key_value_store",
        {
            "KvsARN": ARN,
            "ETag": etag,
            "Created": datetime(2024, 1, 1, tzinfo=UTC),
            "ItemCount": 5,
            "TotalSizeInBytes": 500,
        },
        {"KvsARN": ARN},
    )
    stub.add_response(
        "get_key",
        {"Key": key, "Value": value, "ItemCount": 5, "TotalSizeInBytes": 500},
        {"KvsARN": ARN, "Key": key},
    )
    stub.add_response(
        "delete_key",
        {"ETag": etag + "'", "ItemCount": 4, "TotalSizeInBytes": 425},
        {"KvsARN": ARN, "Key": key, "IfMatch": etag},
    )


def test_the_sweep_removes_idle_and_orphaned_previews_and_never_a_site(
    stub: Stubber, local: Platform
) -> None:
    now = time.time()
    old, fresh = now - 31 * DAY, now - 29 * DAY
    live, renamed = (
        App(
            id=new_app_id(),
            owner="owner",
            name=name,
            code_gen_type=CodeGenType.HTML,
            init_prompt="a page",
        )
        for name in ("Live", "Rekeyed")
    )
    for app in (live, renamed):
        local.apps.put(app)
    items = {
        # a site whose build is a year old: sites are never swept
        site_pointer(new_deploy_key()): SiteTarget(live.id, new_build_id(now - 365 * DAY)),
        # the live app's preview, changed 29 days ago: kept
        preview_pointer(live.preview_key): SiteTarget(live.id, new_build_id(fresh)),
        # an app nobody changed for 31 days: its preview goes
        preview_pointer(new_preview_key()): SiteTarget(new_app_id(), new_build_id(old)),
        # a recent preview of an app that no longer exists: goes
        preview_pointer(new_preview_key()): SiteTarget(new_app_id(), new_build_id(fresh)),
        # a recent preview under a key its app no longer has: goes
        preview_pointer(new_preview_key()): SiteTarget(renamed.id, new_build_id(fresh)),
    }
    listing = [{"Key": k, "Value": v.encode()} for k, v in items.items()]
    listing.append({"Key": preview_pointer(new_preview_key()), "Value": "garbage"})
    stub.add_response("list_keys", {"Items": listing}, {"KvsARN": ARN, "MaxResults": 50})
    for n, item in enumerate(listing[2:]):
        expect_removal(stub, item["Key"], item["Value"], f"e{n}")
    stub.add_response(
        "describe_key_value_store",
        {
            "KvsARN": ARN,
            "ETag": "e9",
            "Created": datetime(2024, 1, 1, tzinfo=UTC),
            "ItemCount": 2,
            "TotalSizeInBytes": 133,
        },
        {"KvsARN": ARN},
    )
    sweep = PreviewSweep(KvsPublisher(stub.client, ARN), local.apps, 30 * DAY)
    report = preview_sweep.handle(sweep, now=now)
    assert report == {
        "previews": 5,
        "idle": 1,
        "orphaned": 3,
        "kept": 1,
        "pointers": 2,
        "bytes": 133,
    }
    stub.assert_no_pending_responses()


def test_the_functions_sweep_is_built_from_its_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "MODE": "aws",
        "APPS_TABLE": "t-apps",
        "SITES_KVS_ARN": ARN,
        "PREVIEW_IDLE_DAYS": "7",
    }.items():
        monkeypatch.setenv(f"ZEROCODE_{name}", value)
    sweep = wiring.preview_sweep(Settings())
    assert type(sweep.store).__name__ == "KvsPublisher"
    assert sweep.idle_seconds == 7 * DAY
    with pytest.raises(RuntimeError, match="AWS"):
        wiring.preview_sweep(Settings(mode="local"))


# -- evicted, then back: the local stores, the same code ----------------------------------


def previewed_app(p: Platform, owner: str = "owner-1") -> tuple[App, str]:
    """An html app with a successful preview build and its pointer; the build's id."""

    async def make() -> tuple[App, str]:
        app = await p.create_app(owner, "A page about newts", CodeGenType.HTML)
        p.workspace.write(app.id, "index.html", b"<h1>Newts</h1>")
        build = await p.publishing.preview(app)
        assert build.state is BuildState.SUCCEEDED
        return app, build.id

    return asyncio.run(make())


def test_an_idle_preview_goes_and_comes_back_when_its_app_is_opened(local: Platform) -> None:
    app, build_id = previewed_app(local)
    pointer = preview_pointer(app.preview_key)
    store = local.publishing.publisher
    sweep = PreviewSweep(store, local.apps, 30 * DAY)  # type: ignore[arg-type]
    made = built_at(build_id)
    assert made is not None
    assert sweep.run(made + 29 * DAY).kept == 1 and store.target(pointer) is not None
    assert sweep.run(made + 31 * DAY).idle == 1 and store.target(pointer) is None
    local.publishing.preview_idle_seconds = 30 * DAY
    assert local.publishing.restore_preview(app, now=made + 29 * DAY) is False  # not swept yet
    assert local.publishing.restore_preview(app, now=made + 31 * DAY) is True
    assert store.target(pointer) == SiteTarget(app.id, build_id)
    assert local.publishing.restore_preview(app, now=made + 31 * DAY) is False  # already there


def test_a_preview_whose_output_expires_is_never_named_again(local: Platform) -> None:
    """Issue 27, point 4: on AWS a preview build's output expires previewOutputDays after it
    was written (its tag, a lifecycle rule). Opening the app puts the pointer back only while
    the build is RESTORE_MARGIN_DAYS short of that; later the pointer stays away until the
    next turn's build, so no pointer names a build that is gone."""
    app, build_id = previewed_app(local)
    pointer = preview_pointer(app.preview_key)
    store = local.publishing.publisher
    made = built_at(build_id)
    assert made is not None
    local.publishing.preview_idle_seconds = 30 * DAY
    local.publishing.preview_output_seconds = 60 * DAY
    last = made + (60 - RESTORE_MARGIN_DAYS) * DAY  # the last moment it may be named
    for now, restored in ((last + 1, False), (made + 60 * DAY, False), (last, True)):
        store.remove(pointer)
        assert local.publishing.restore_preview(app, now=now) is restored, now - made
        assert store.target(pointer) == (SiteTarget(app.id, build_id) if restored else None)
    # Swept within a day, the restored pointer is gone again long before the output.
    sweep = PreviewSweep(store, local.apps, 30 * DAY)  # type: ignore[arg-type]
    assert sweep.run(last + DAY).idle == 1 and store.target(pointer) is None


class Retaining:
    """The platform's builder, with the AWS builder's preview retention recorded (or
    failing)."""

    def __init__(self, inner: Any, *, fail: bool = False) -> None:
        self.inner, self.fail = inner, fail
        self.calls: list[tuple[str, str, str | None]] = []

    async def build(self, job: Any) -> Any:
        return await self.inner.build(job)

    def delete_app(self, app_id: str) -> int:
        return int(self.inner.delete_app(app_id))

    def retain_preview(self, app_id: str, shown: str, replaced: str | None) -> None:
        self.calls.append((app_id, shown, replaced))
        if self.fail:
            raise RuntimeError("S3 said no")


def test_each_preview_keeps_its_output_and_lets_the_one_it_replaced_expire(
    local: Platform,
) -> None:
    """Issue 27, point 4: where outputs expire unless shown (AWS), every preview flip keeps
    the build it now shows and lets the one it replaced expire; a failure there is logged,
    never the turn's."""
    retaining = Retaining(local.publishing.builder)
    local.publishing.builder = retaining
    app, first = previewed_app(local)
    local.workspace.write(app.id, "index.html", b"<h1>Newts, again</h1>")
    second = asyncio.run(local.publishing.preview(app))
    assert second.state is BuildState.SUCCEEDED
    assert retaining.calls == [(app.id, first, None), (app.id, second.id, first)]
    local.publishing.builder = Retaining(retaining.inner, fail=True)
    local.workspace.write(app.id, "index.html", b"<h1>Newts, once more</h1>")
    third = asyncio.run(local.publishing.preview(app))
    assert third.state is BuildState.SUCCEEDED
    pointer = preview_pointer(app.preview_key)
    assert local.publishing.publisher.target(pointer) == SiteTarget(app.id, third.id)


def test_a_preview_flipped_after_the_listing_stays(local: Platform) -> None:
    """The sweep listed an old build; a turn then flipped the pointer to a new one: the
    conditional removal leaves the new preview alone."""
    app, build_id = previewed_app(local)
    store = local.publishing.publisher
    pointer, listed = preview_pointer(app.preview_key), SiteTarget(app.id, build_id)
    store.point(pointer, SiteTarget(app.id, new_build_id()))
    assert store.remove_if(pointer, listed) is False  # type: ignore[attr-defined]
    assert store.target(pointer) != listed and store.target(pointer) is not None


def test_opening_the_app_over_http_restores_its_preview(local: Platform) -> None:
    local.publishing.preview_idle_seconds = 0  # every preview is "idle" at once
    with TestClient(create_app(local), base_url="http://127.0.0.1:8000") as client:
        client.post("/api/users/register", json={"account": "newt", "password": "password1"})
        token = client.post(
            "/api/users/login", json={"account": "newt", "password": "password1"}
        ).json()["token"]
        client.cookies.clear()
        me = client.get("/api/users/me", headers={"Authorization": f"Bearer {token}"}).json()
        app, build_id = previewed_app(local, owner=me["id"])
        pointer = preview_pointer(app.preview_key)
        store: Any = local.publishing.publisher
        PreviewSweep(store, local.apps, 0).run(time.time() + 1)
        assert store.target(pointer) is None
        opened = client.get(f"/api/apps/{app.id}", headers={"Authorization": f"Bearer {token}"})
        assert opened.status_code == 200
        assert store.target(pointer) == SiteTarget(app.id, build_id)
