"""A rollback puts the site into the hot set (issue 27: instant rollback for every site), and a
hot set that fails leaves the rollback done, logged, and served from the truth."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.integration.http.conftest import Api
from tests.integration.http.test_deploy import published
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.http.app import create_app
from zerocode.publishing.hot_set import HotSetPublisher
from zerocode.publishing.pointers import SiteTarget


class Store:
    def __init__(self, *, fail: bool = False) -> None:
        self.items: dict[str, SiteTarget] = {}
        self.fail = fail

    def point(self, pointer: str, target: SiteTarget) -> None:
        if self.fail:
            raise RuntimeError("the KeyValueStore is down")
        self.items[pointer] = target

    def target(self, pointer: str) -> SiteTarget | None:
        return self.items.get(pointer)

    def remove(self, pointer: str) -> None:
        self.items.pop(pointer, None)


@pytest.fixture(params=[False, True], ids=["hot set up", "hot set down"])
def hot(request: pytest.FixtureRequest) -> Store:
    return Store(fail=request.param)


@pytest.fixture
def api(tmp_path: Path, hot: Store) -> Iterator[Api]:
    publisher = HotSetPublisher(Store(), hot)
    platform = wiring.platform(Settings(data_dir=tmp_path, covers=False), publisher=publisher)
    with TestClient(create_app(platform)) as client:
        yield Api(platform, client)


def test_a_rollback_is_promoted_and_a_failing_hot_set_does_not_fail_it(
    api: Api, hot: Store, caplog: pytest.LogCaptureFixture
) -> None:
    c, owner = api.client, api.user()
    app = api.app(owner)
    builds = []
    for page in (b"<h1>One</h1>", b"<h1>Two</h1>"):
        api.platform.workspace.write(app["id"], "index.html", page)
        asked = c.post(f"/api/apps/{app['id']}/deploy", headers=owner).json()["buildId"]
        assert published(c, owner, app["id"], asked)["published"]
        builds.append(asked)
    pointer = "site:" + c.get(f"/api/apps/{app['id']}", headers=owner).json()["deployKey"]
    assert hot.items == {}  # a deploy does not promote: seen within the routing's 90 s
    with caplog.at_level(logging.WARNING, logger="zerocode.publishing.service"):
        back = c.post(f"/api/apps/{app['id']}/rollback", headers=owner, json={"buildId": builds[0]})
    assert back.status_code == 200 and back.json()["deployBuildId"] == builds[0], back.text
    truth = api.platform.publishing.publisher
    assert isinstance(truth, HotSetPublisher)
    assert truth.target(pointer) == SiteTarget(app["id"], builds[0])
    if hot.fail:
        assert hot.items == {}  # served from the truth, within the routing's TTL
        (warning,) = [r for r in caplog.records if "not in the hot set" in r.getMessage()]
        assert "(failed)" in warning.getMessage() and warning.exc_info is not None
    else:
        assert hot.items == {pointer: SiteTarget(app["id"], builds[0])}  # served at once
        assert not [r for r in caplog.records if "hot set" in r.getMessage()]
