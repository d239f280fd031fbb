"""Accounts over HTTP: register, login, tokens, cookies with CSRF, logout, admins."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, create, signed_in


def register(server: Server, account: str, password: str = "correct horse") -> httpx.Response:
    return httpx.post(
        f"{server.api}/api/users/register", json={"account": account, "password": password}
    )


@pytest.mark.parametrize(
    ("account", "password", "status"),
    [
        ("abc", "long enough", 400),
        ("good-name", "short", 400),
        ("bad name!", "long enough", 400),
        ("x" * 65, "long enough", 400),
        ("good-name", "y" * 129, 400),
    ],
)
def test_register_validates(server: Server, account: str, password: str, status: int) -> None:
    response = register(server, account, password)
    assert response.status_code == status and response.json()["error"]["message"]


def test_register_login_me_logout(server: Server) -> None:
    assert register(server, "Alice-1").json()["account"] == "alice-1"
    taken = register(server, "alice-1")
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "account_taken"
    login = httpx.post(
        f"{server.api}/api/users/login", json={"account": "ALICE-1", "password": "correct horse"}
    )
    assert login.status_code == 200
    token = login.json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    me = httpx.get(f"{server.api}/api/users/me", headers=auth).json()
    assert me["account"] == "alice-1" and me["role"] == "user" and "password" not in str(me)
    assert httpx.post(f"{server.api}/api/users/logout", headers=auth).status_code == 204
    after = httpx.get(f"{server.api}/api/users/me", headers=auth)
    assert after.status_code == 401 and after.json()["error"]["code"] == "unauthenticated"


def failed_logins(server: Server, account: str) -> int:
    with sqlite3.connect(server.data_dir / "zerocode.sqlite3") as db:
        return int(
            db.execute("SELECT failed_logins FROM users WHERE account = ?", (account,)).fetchone()[
                0
            ]
        )


def test_wrong_password_and_unknown_account_look_the_same_and_are_counted(server: Server) -> None:
    register(server, "bob-1")
    wrong = httpx.post(
        f"{server.api}/api/users/login", json={"account": "bob-1", "password": "not the password"}
    )
    nobody = httpx.post(
        f"{server.api}/api/users/login",
        json={"account": "nobody-here", "password": "not the password"},
    )
    assert wrong.status_code == nobody.status_code == 401
    assert wrong.json() == nobody.json()
    # its own code, so a client tells a failed login from an expired session
    assert wrong.json()["error"]["code"] == "invalid_credentials"
    assert failed_logins(server, "bob-1") == 1


def test_a_locked_account_is_told_what_happened_and_when_it_ends(server: Server) -> None:
    """Issue 38: after 5 wrong passwords the 429 names the account's state and the time it
    ends, in words and as the optional lockout field."""
    register(server, "locked-1")
    login = {"account": "locked-1", "password": "not the password"}
    for _ in range(5):
        assert httpx.post(f"{server.api}/api/users/login", json=login).status_code == 401
    login["password"] = "correct horse"
    locked = httpx.post(f"{server.api}/api/users/login", json=login)
    assert locked.status_code == 429 and int(locked.headers["Retry-After"]) > 800
    error = locked.json()["error"]
    assert error["code"] == "rate_limited"
    until = error["lockout"].pop("until")
    assert error["lockout"] == {"reason": "wrong_passwords", "after": 5}
    assert error["message"] == (
        f"this account is locked after 5 wrong passwords; try again at {until[11:16]} UTC "
        "(in 15 minutes)"
    )


@pytest.mark.parametrize("header", ["", "Bearer", "Bearer not-a-token", "Basic abc"])
def test_bad_credentials_are_401(server: Server, header: str) -> None:
    response = httpx.get(f"{server.api}/api/apps", headers={"Authorization": header})
    assert response.status_code == 401 and response.json()["error"]["code"]


def test_session_cookie_works_and_changes_need_the_csrf_header(server: Server) -> None:
    register(server, "carol-1")
    with httpx.Client(base_url=server.api) as browser:
        assert (
            browser.post(
                "/api/users/login", json={"account": "carol-1", "password": "correct horse"}
            ).status_code
            == 200
        )
        cookie = browser.cookies.get("zc_session")
        assert cookie
        assert browser.get("/api/users/me").json()["account"] == "carol-1"
        blocked = browser.post("/api/apps", json={"initPrompt": "A page", "codeGenType": "html"})
        assert blocked.status_code == 403 and "X-Zerocode-Request" in blocked.text
        allowed = browser.post(
            "/api/apps",
            json={"initPrompt": "A page", "codeGenType": "html"},
            headers={"X-Zerocode-Request": "1"},
        )
        assert allowed.status_code == 201


def make_admin(server: Server, account: str) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "zerocode.entrypoints.cli",
            "admin",
            "create",
            account,
            "--password-stdin",
            "--data-dir",
            str(server.data_dir),
        ],
        input="correct horse\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr


def test_admin_sees_other_peoples_apps_users_do_not(server: Server) -> None:
    owner, other = signed_in(server), signed_in(server)
    if True:  # both close with the process; they are short-lived test clients
        app: dict[str, Any] = create(owner, "A page about moss", "html")
        assert other.get(f"/api/apps/{app['id']}").status_code == 404
        assert app["id"] not in str(other.get("/api/apps").json())
        make_admin(server, "admin-e2e")
        login = httpx.post(
            f"{server.api}/api/users/login",
            json={"account": "admin-e2e", "password": "correct horse"},
        ).json()
        assert login["user"]["role"] == "admin"
        admin = {"Authorization": f"Bearer {login['token']}"}
        seen = httpx.get(f"{server.api}/api/apps/{app['id']}", headers=admin)
        assert seen.status_code == 200 and seen.json()["id"] == app["id"]


def test_a_forged_gateway_context_is_ignored_by_the_local_server(server: Server) -> None:
    """Locally no API Gateway vouches for claims, so a client cannot name itself by sending
    the header Lambda Web Adapter uses behind one."""
    victim = signed_in(server)
    me = victim.get("/api/users/me").json()
    forged = json.dumps(
        {
            "authorizer": {
                "claims": {
                    "sub": me["id"],
                    "cognito:username": me["account"],
                    "cognito:groups": "admin",
                }
            }
        }
    )
    headers = {"x-amzn-request-context": forged}
    assert httpx.get(f"{server.api}/api/users/me", headers=headers).status_code == 401
    assert httpx.get(f"{server.api}/api/admin/users", headers=headers).status_code == 401
