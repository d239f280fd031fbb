"""A published site's visits through the sites server and the API, in process (issue 44,
point 4): a failing store never fails a page (the batch is logged and dropped); previews are
never counted; deleting an app deletes its visits; a platform that counts none says 404."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.integration.http.conftest import Api, error_code
from zerocode.http.sites import create_sites_app
from zerocode.publishing.visits import DayVisits, Tally

BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


def deployed(api: Api, me: dict[str, str]) -> dict[str, Any]:
    app = api.app(me)
    assert "event: done" in api.chat(me, app["id"], "Make the page")
    build = api.client.post(f"/api/apps/{app['id']}/deploy", headers=me).json()["buildId"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = api.client.get(f"/api/apps/{app['id']}/builds/{build}", headers=me).json()
        if found["state"] == "succeeded" and found["published"]:
            return dict(api.client.get(f"/api/apps/{app['id']}", headers=me).json())
        assert found["state"] != "failed", found
        time.sleep(0.05)
    raise AssertionError("the deploy did not finish")


def host(url: str) -> str:
    parts = httpx.URL(url)
    return f"{parts.host}:{parts.port}"


def visit(api: Api, *urls: str) -> None:
    """Each URL's page, asked for by a browser through the sites server, and counted."""
    visits = api.platform.visits
    assert visits is not None
    with TestClient(create_sites_app(api.platform)) as sites:
        for url in urls:
            headers = {"Host": host(url), "User-Agent": BROWSER}
            assert sites.get(httpx.URL(url).path, headers=headers).status_code == 200, url
        assert sites.portal is not None
        sites.portal.call(visits.settled)


def totals(api: Api, me: dict[str, str], app_id: str) -> dict[str, int]:
    answer = api.client.get(f"/api/apps/{app_id}/analytics?days=2", headers=me)
    assert answer.status_code == 200, answer.text
    return dict(answer.json()["total"])


class FailingStore:
    def __init__(self) -> None:
        self.calls = 0

    def salt(self, day: str, now: float) -> bytes | None:
        self.calls += 1
        raise OSError("disk I/O error")

    def add(self, tallies: Sequence[Tally], now: float) -> None:
        raise OSError("disk I/O error")

    def days(self, app_id: str, first: str, last: str) -> list[DayVisits]:
        return []

    def delete_app(self, app_id: str) -> None:
        return None


def test_a_failing_store_never_fails_a_page(
    api: Api, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    me = api.user()
    app = deployed(api, me)
    visits = api.platform.visits
    assert visits is not None and visits.counter is not None
    broken = FailingStore()
    monkeypatch.setattr(visits.counter, "store", broken)
    with caplog.at_level(logging.WARNING, logger="zerocode.publishing.site_visits"):
        visit(api, app["deployUrl"], app["deployUrl"])
    assert broken.calls >= 1  # it was asked, and failed
    assert "page views not counted" in caplog.text
    assert visits.dropped >= 2
    monkeypatch.undo()
    assert totals(api, me, app["id"]) == {"views": 0, "visitors": 0, "botViews": 0}
    visit(api, app["deployUrl"])  # the store is back: counting goes on
    assert totals(api, me, app["id"]) == {"views": 1, "visitors": 1, "botViews": 0}


def test_previews_are_never_counted_and_deleting_the_app_deletes_its_visits(api: Api) -> None:
    me = api.user()
    app = deployed(api, me)
    visit(api, app["previewUrl"], app["previewUrl"] + "about")
    assert totals(api, me, app["id"]) == {"views": 0, "visitors": 0, "botViews": 0}
    visit(api, app["deployUrl"], app["deployUrl"] + "about")
    assert totals(api, me, app["id"]) == {"views": 2, "visitors": 1, "botViews": 0}
    visits = api.platform.visits
    assert visits is not None
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert visits.store.days(app["id"], today, today) != []
    assert api.client.delete(f"/api/apps/{app['id']}", headers=me).status_code == 204
    assert visits.store.days(app["id"], today, today) == []


def test_a_platform_that_counts_no_visits_says_so(api: Api) -> None:
    me = api.user()
    app = api.app(me)
    api.platform.visits = None
    answer = api.client.get(f"/api/apps/{app['id']}/analytics", headers=me)
    assert answer.status_code == 404 and error_code(answer) == "not_found"
    assert "not counted" in answer.json()["error"]["message"]
