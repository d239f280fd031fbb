"""/api/users and /api/health in process: register, log in and out, who am I."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from tests.integration.http.conftest import PASSWORD, Api, error_code
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.http.app import create_app
from zerocode.http.deps import CSRF_HEADER, SESSION_COOKIE


def test_register_login_me_and_logout(api: Api) -> None:
    c = api.client
    made = c.post(
        "/api/users/register", json={"account": "ada-1", "password": PASSWORD, "name": "Ada"}
    )
    assert made.status_code == 201
    assert made.json()["account"] == "ada-1" and made.json()["role"] == "user"
    login = c.post("/api/users/login", json={"account": "ada-1", "password": PASSWORD})
    assert login.status_code == 200 and login.json()["user"]["name"] == "Ada"
    assert SESSION_COOKIE in login.cookies
    c.cookies.clear()
    bearer = {"Authorization": f"Bearer {login.json()['token']}"}
    assert c.get("/api/users/me", headers=bearer).json()["id"] == made.json()["id"]
    assert c.post("/api/users/logout", headers=bearer).status_code == 204
    assert c.get("/api/users/me", headers=bearer).status_code == 401


def test_refusals(api: Api) -> None:
    c = api.client
    assert (
        c.post("/api/users/register", json={"account": "bob-1", "password": PASSWORD}).status_code
        == 201
    )
    again = c.post("/api/users/register", json={"account": "bob-1", "password": PASSWORD})
    assert again.status_code == 409
    short = c.post("/api/users/register", json={"account": "bob-2", "password": "x"})
    assert short.status_code == 400
    extra = c.post(
        "/api/users/register", json={"account": "bob-3", "password": PASSWORD, "role": "admin"}
    )
    assert extra.status_code == 422 and error_code(extra) == "validation_error"
    wrong = c.post("/api/users/login", json={"account": "bob-1", "password": "wrong horse"})
    assert wrong.status_code == 401
    assert c.get("/api/users/me").status_code == 401
    assert c.post("/api/users/logout").status_code == 401
    assert c.get("/api/users/me", headers={"Authorization": "Bearer nonsense"}).status_code == 401


def test_the_session_cookie_needs_the_csrf_header_to_change_anything(api: Api) -> None:
    c = api.client
    c.post("/api/users/register", json={"account": "cat-1", "password": PASSWORD})
    c.post("/api/users/login", json={"account": "cat-1", "password": PASSWORD})
    assert c.get("/api/users/me").status_code == 200  # the cookie signs GETs in
    assert c.post("/api/users/logout").status_code == 403
    assert c.post("/api/users/logout", headers={CSRF_HEADER: "1"}).status_code == 204
    assert c.get("/api/users/me").status_code == 401
    cross = {"Sec-Fetch-Site": "cross-site"}
    c.post("/api/users/login", json={"account": "cat-1", "password": PASSWORD})
    assert c.get("/api/users/me", headers=cross).status_code == 401


def test_health_tells_anyone_the_status_and_admins_the_details(api: Api) -> None:
    anonymous = api.client.get("/api/health").json()
    assert anonymous == {
        "status": "ok",
        "version": anonymous["version"],
        "mode": "local",
        "offlineModel": True,  # the console says so before sign-in
    }
    assert api.client.get("/api/health", headers=api.user()).json() == anonymous
    full = api.client.get("/api/health", headers=api.admin()).json()
    assert full["builds"] == api.platform.build_isolation
    assert full["browser"] == api.platform.browser
    assert full["model"] == api.platform.model.description
    assert {k: full[k] for k in anonymous} == anonymous


def test_health_is_degraded_below_the_free_space_minimum_and_only_admins_learn_why(
    tmp_path: Path,
) -> None:
    """No disk has a petabyte free: the data directory is below the minimum."""
    platform = wiring.platform(Settings(data_dir=tmp_path, covers=False, min_free_mb=1 << 30))
    with TestClient(create_app(platform)) as client:
        api = Api(platform, client)
        anonymous = client.get("/api/health").json()
        assert anonymous["status"] == "degraded" and "reason" not in anonymous
        assert client.get("/api/health", headers=api.user()).json() == anonymous
        reason = client.get("/api/health", headers=api.admin()).json()["reason"]
    assert reason.startswith(f"the data directory {tmp_path.resolve()} has ")
    assert reason.endswith(f"MB free, below the minimum of {1 << 30} MB (ZEROCODE_MIN_FREE_MB)")
