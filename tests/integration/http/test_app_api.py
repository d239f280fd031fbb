"""The data API's guards, in process (docs/data.md, "The data API"): ``/_api/`` is the
platform's on every app's origin however the path is spelled, hosts that name no app reach
no data, the rate limits answer 429 with Retry-After, and a failing store is a clear 503."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.integration.http.test_origins import get
from zerocode.apps.records import App, CodeGenType
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.data.check_spaces import HEADER as CHECK_HEADER
from zerocode.http.sites import create_sites_app

MODEL = {
    "collections": {
        "entries": {
            "fields": {"message": {"type": "text", "required": True}},
            "rules": {r: "public" for r in ("list", "read", "create", "update", "delete")},
        }
    }
}


def platform_with(tmp_path: Path, **settings: Any) -> Platform:
    return wiring.platform(
        Settings(data_dir=tmp_path, covers=False, port=8000, sites_port=8001, **settings)
    )


def previewed(p: Platform, files: dict[str, bytes]) -> App:
    app = asyncio.run(p.create_app("owner-1", "A guestbook about newts", CodeGenType.HTML))
    for path, data in files.items():
        p.workspace.write(app.id, path, data)
    asyncio.run(p.publishing.preview(app))
    return app


@pytest.fixture
def platform(tmp_path: Path) -> Platform:
    return platform_with(tmp_path)


def test_no_file_of_an_app_is_served_under_api_however_spelled(platform: Platform) -> None:
    files = {
        "index.html": b"<h1>Newts</h1>",
        "_api/data/entries": b"planted",
        "_api/index.html": b"planted",
    }
    app = previewed(platform, files)
    sites = TestClient(create_sites_app(platform))
    preview = platform.publishing.urls.preview(app.preview_key)
    for path in (
        "_api/data/entries",
        "./_api/data/entries",
        "x/../_api/data/entries",
        "%5Fapi/data/entries",
        "_api",
        "_api/",
        "_api/index.html",
    ):
        answer = get(sites, preview + path)
        assert b"planted" not in answer.content, path
        assert answer.status_code == 404, (path, answer.text)


def test_hosts_that_name_no_app_reach_no_data(platform: Platform) -> None:
    app = previewed(platform, {"index.html": b"<p>x</p>", "zerocode.data.json": _model()})
    sites = TestClient(create_sites_app(platform))
    key = app.preview_key
    for host in (
        "127.0.0.1:8001",
        f"p-{key}.localhost.evil.example:8001",
        f"x.p-{key}.localhost:8001",
        f"{key}.localhost:8001",  # a preview key is no site key
    ):
        answer = sites.get("/_api/data/entries", headers={"Host": host})
        assert answer.status_code == 404, host
        assert answer.json()["error"]["code"] == "no_backend"
    shared = sites.get(f"/preview/{key}/_api/data/entries", headers={"Host": "127.0.0.1:8001"})
    assert shared.status_code == 404 and "records" not in shared.text
    own = sites.get("/_api/data/entries", headers={"Host": f"p-{key}.localhost:8001"})
    assert own.status_code == 200 and own.json() == {"records": [], "cursor": None}


def test_past_the_visitor_limit_a_clear_429(tmp_path: Path) -> None:
    p = platform_with(tmp_path, data_rate_visitor=3)
    app = previewed(p, {"index.html": b"<p>x</p>", "zerocode.data.json": _model()})
    sites = TestClient(create_sites_app(p))
    host = {"Host": f"p-{app.preview_key}.localhost:8001"}
    answers = [sites.get("/_api/data/entries", headers=host) for _ in range(4)]
    assert [a.status_code for a in answers] == [200, 200, 200, 429]
    assert answers[-1].json()["error"]["code"] == "rate_limited"
    assert int(answers[-1].headers["retry-after"]) >= 1


def test_a_failing_store_is_a_clear_503_and_no_stack(platform: Platform) -> None:
    app = previewed(platform, {"index.html": b"<p>x</p>", "zerocode.data.json": _model()})
    sites = TestClient(create_sites_app(platform))
    assert platform.backend is not None
    origin = f"http://p-{app.preview_key}.localhost:8001"
    headers = {"Host": origin[7:], "Origin": origin}

    def full(*_: Any) -> None:
        exc = sqlite3.OperationalError("database or disk is full")
        exc.sqlite_errorcode = 13  # SQLITE_FULL, as SQLite raises it
        raise exc

    platform.backend.records.create = full  # type: ignore[method-assign,assignment]
    answer = sites.post("/_api/data/entries", json={"message": "hi"}, headers=headers)
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["code"] == "storage_unavailable"
    assert "Traceback" not in answer.text


def _model() -> bytes:
    return json.dumps(MODEL).encode()


def test_the_platforms_check_header_names_a_scratch_space_and_cannot_be_forged(
    platform: Platform,
) -> None:
    app = previewed(platform, {"index.html": b"<p>x</p>", "zerocode.data.json": _seeded()})
    other = previewed(platform, {"index.html": b"<p>y</p>", "zerocode.data.json": _seeded()})
    backend = platform.backend
    assert backend is not None
    sites = TestClient(create_sites_app(platform))
    origin = f"http://p-{app.preview_key}.localhost:8001"
    host = {"Host": origin[7:], "Origin": origin}
    space, header = backend.check_spaces.new(app.id)
    check = {**host, CHECK_HEADER: header}
    made = sites.post("/_api/data/entries", json={"message": "from a check"}, headers=check)
    assert made.status_code == 201, made.text
    listed = sites.get("/_api/data/entries", headers=check).json()["records"]
    assert [r["message"] for r in listed] == ["seeded", "from a check"]  # seeded like a preview
    preview = sites.get("/_api/data/entries", headers=host).json()["records"]
    assert [r["message"] for r in preview] == ["seeded"]  # the preview's data untouched
    forged = [
        header[:-1] + ("0" if header[-1] != "0" else "1"),
        backend.check_spaces.new(other.id)[1],  # another app's
        "x" * 49,
        "",
    ]
    for value in forged:
        answer = sites.get("/_api/data/entries", headers={**host, CHECK_HEADER: value})
        assert answer.status_code == 403, value
        assert answer.json()["error"]["code"] == "cross_site"
    backend.clear_space(app.id, space)
    assert backend.records.count(app.id, space, "entries") == 0
    relisted = sites.get("/_api/data/entries", headers=check).json()["records"]
    assert [r["message"] for r in relisted] == ["seeded"]  # seeded again once emptied


def _seeded() -> bytes:
    model = json.loads(json.dumps(MODEL))
    model["collections"]["entries"]["seed"] = [{"message": "seeded"}]
    return json.dumps(model).encode()


def test_one_record_past_the_bound_is_a_409_and_bad_bodies_are_400s(tmp_path: Path) -> None:
    p = platform_with(tmp_path, data_max_records=3)
    app = previewed(p, {"index.html": b"<p>x</p>", "zerocode.data.json": _model()})
    other = previewed(p, {"index.html": b"<p>y</p>", "zerocode.data.json": _model()})
    sites = TestClient(create_sites_app(p))

    def at(which: App) -> dict[str, str]:
        origin = f"http://p-{which.preview_key}.localhost:8001"
        return {"Host": origin[7:], "Origin": origin}

    ids = []
    for n in range(3):
        made = sites.post("/_api/data/entries", json={"message": f"m{n}"}, headers=at(app))
        assert made.status_code == 201, made.text
        ids.append(made.json()["id"])
    full = sites.post("/_api/data/entries", json={"message": "one more"}, headers=at(app))
    assert full.status_code == 409 and full.json()["error"]["code"] == "collection_full"
    listed = sites.get("/_api/data/entries", headers=at(app)).json()["records"]
    assert [r["message"] for r in listed] == ["m0", "m1", "m2"]  # nothing dropped
    # Another app's id is no record of this app, whatever its rules.
    assert sites.get(f"/_api/data/entries/{ids[0]}", headers=at(other)).status_code == 404
    gone = sites.delete(f"/_api/data/entries/{ids[0]}", headers=at(other))
    assert (
        gone.status_code == 404
        and len(sites.get("/_api/data/entries", headers=at(app)).json()["records"]) == 3
    )
    for body in (b"{not json", b"\xff\xfe", b"[1, 2]", b'"text"', b"null"):
        bad = sites.post(
            "/_api/data/entries",
            content=body,
            headers={**at(other), "Content-Type": "application/json"},
        )
        assert bad.status_code == 400, (body, bad.text)
        assert bad.json()["error"]["code"] == "invalid_input" and "Traceback" not in bad.text
    for path in ("/_api/data/entries/a/b", "/_api/nothing", "/_api/auth/nothing", "/_api/data/"):
        assert sites.get(path, headers=at(app)).status_code == 404, path
