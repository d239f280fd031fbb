"""An account's own token budget and the platform's totals (issue 43), in process: only an
admin sets, reads and clears a budget, of a user that exists, with values checked; the
budget holds in place of the platform's at the next turn; the totals add up to what each
account sees of its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.http.conftest import Api, error_code
from zerocode.bootstrap.settings import Settings

PLATFORM_MONTH = 10**9  # the platform's own monthly budget here (no daily one)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, covers=False, tokens_per_month=PLATFORM_MONTH)


def user_id(api: Api, headers: dict[str, str]) -> str:
    return str(api.client.get("/api/users/me", headers=headers).json()["id"])


def test_only_admins_touch_budgets_and_totals(api: Api) -> None:
    c, owner, other, admin = api.client, api.user(), api.user(), api.admin()
    url = f"/api/admin/users/{user_id(api, owner)}/budget"
    body = {"tokensPerDay": 1, "tokensPerMonth": None}
    for who, status in ((None, 401), (owner, 403), (other, 403)):
        kw: dict[str, Any] = {"headers": who} if who else {}
        assert c.get(url, **kw).status_code == status
        assert c.put(url, json=body, **kw).status_code == status
        assert c.delete(url, **kw).status_code == status
        assert c.get("/api/admin/usage", **kw).status_code == status
    assert c.get(url, headers=admin).json()["override"] is None  # nobody set one
    for missing in ("/api/admin/users/nobody/budget", f"/api/admin/users/{'x' * 300}/budget"):
        for method in ("GET", "DELETE"):
            gone = c.request(method, missing, headers=admin)
            assert gone.status_code == 404 and error_code(gone) == "not_found", gone.text
        put = c.put(missing, headers=admin, json=body)
        assert put.status_code == 404 and "no such user" in put.text


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"tokensPerDay": -1, "tokensPerMonth": None}, "tokensPerDay"),
        ({"tokensPerDay": "100", "tokensPerMonth": None}, "tokensPerDay"),
        ({"tokensPerDay": 1.5, "tokensPerMonth": None}, "tokensPerDay"),
        ({"tokensPerDay": True, "tokensPerMonth": None}, "tokensPerDay"),
        ({"tokensPerDay": None, "tokensPerMonth": 10**13}, "tokensPerMonth"),
        ({"tokensPerDay": 5}, "tokensPerMonth"),  # the override is whole: both said
        ({"tokensPerDay": 5, "tokensPerMonth": 5, "unlimited": True}, "unlimited"),
        ([5, 5], "body"),
    ],
)
def test_bad_budgets_are_refused_saying_which_field(api: Api, body: Any, says: str) -> None:
    owner, admin = api.user(), api.admin()
    url = f"/api/admin/users/{user_id(api, owner)}/budget"
    refused = api.client.put(url, headers=admin, json=body)
    assert refused.status_code == 422, refused.text
    assert error_code(refused) == "validation_error" and says in refused.json()["error"]["message"]
    assert "Traceback" not in refused.text
    assert api.client.get(url, headers=admin).json()["override"] is None  # nothing kept


def test_an_override_holds_at_the_next_turn_and_clearing_it_restores_the_platforms(
    api: Api,
) -> None:
    c, owner, admin = api.client, api.user(), api.admin()
    uid = user_id(api, owner)
    url = f"/api/admin/users/{uid}/budget"
    app = api.app(owner)
    assert "event: done" in api.chat(owner, app["id"], "A page about newts")
    spent = c.get("/api/users/me/usage", headers=owner).json()["total"]
    tokens = spent["inputTokens"] + spent["outputTokens"]
    seen = c.get(url, headers=admin).json()
    platform = {"tokensPerDay": None, "tokensPerMonth": PLATFORM_MONTH}
    assert seen == {
        "userId": uid,
        "account": seen["account"],
        "override": None,
        "platform": platform,
        "effective": platform,
        "spent": {"today": tokens, "thisMonth": tokens},
    }
    assert seen["account"].startswith("user-")
    # A daily budget the account has already spent: the next turn is refused, 429.
    own = {"tokensPerDay": tokens, "tokensPerMonth": None}
    put = c.put(url, headers=admin, json=own)
    assert put.status_code == 200 and put.json()["override"] == put.json()["effective"] == own
    refused = c.post(f"/api/apps/{app['id']}/chat", headers=owner, json={"message": "More"})
    assert refused.status_code == 429 and error_code(refused) == "quota_exceeded"
    lockout = refused.json()["error"]["lockout"]
    assert lockout["reason"] == "tokens_per_day" and lockout["after"] == tokens
    assert f"token budget of {tokens:,} per day is spent" in refused.text
    assert "resets at" in refused.text and int(refused.headers["Retry-After"]) >= 1
    # Unlimited for this account, explicitly: the platform's month would not matter either.
    free = {"tokensPerDay": None, "tokensPerMonth": None}
    assert c.put(url, headers=admin, json=free).json()["effective"] == free
    assert "event: done" in api.chat(owner, app["id"], "Make the heading green")
    # Nothing at all (0 a month): refused before anything runs, naming the month.
    c.put(url, headers=admin, json={"tokensPerDay": None, "tokensPerMonth": 0})
    paused = c.post(f"/api/apps/{app['id']}/chat", headers=owner, json={"message": "More"})
    assert paused.status_code == 429 and "per month" in paused.text
    # Cleared: the platform's budgets hold again, and they let the turn run.
    assert c.delete(url, headers=admin).status_code == 204
    assert c.get(url, headers=admin).json()["override"] is None
    assert "event: done" in api.chat(owner, app["id"], "Make the heading blue")


def test_the_platforms_totals_add_up_to_each_accounts_own(api: Api) -> None:
    c, admin = api.client, api.admin()
    people = [api.user("ann"), api.user("bob")]
    for n, who in enumerate(people):
        app = api.app(who)
        for message in ("A page about newts", "Make the heading green")[: n + 1]:
            assert "event: done" in api.chat(who, app["id"], message)
    body = c.get("/api/admin/usage", headers=admin).json()
    assert body["to"] > body["from"] and body["accountCount"] == len(body["accounts"]) == 2
    fields = ("requests", "inputTokens", "outputTokens", "cachedTokens", "unpricedRequests")
    for who in people:
        mine = c.get("/api/users/me/usage", headers=who).json()["total"]
        (row,) = [a for a in body["accounts"] if a["userId"] == user_id(api, who)]
        assert row["account"].split("-")[0] in ("ann", "bob")
        assert {f: row[f] for f in fields} == {f: mine[f] for f in fields}
    for f in fields:
        assert sum(a[f] for a in body["accounts"]) == body["total"][f], f
        assert sum(m[f] for m in body["models"]) == body["total"][f], f
    assert body["total"]["requests"] >= 3 and all(m["model"] for m in body["models"])
    tops = body["accounts"]  # most tokens first
    assert tops[0]["inputTokens"] + tops[0]["outputTokens"] >= (
        tops[1]["inputTokens"] + tops[1]["outputTokens"]
    )
    one = c.get("/api/admin/usage", headers=admin, params={"limit": 1}).json()
    assert one["accounts"] == tops[:1] and one["accountCount"] == 2
    assert one["total"] == body["total"]  # the total is everyone's, listed or not
    old = c.get(
        "/api/admin/usage", headers=admin, params={"from": "2020-01-01", "to": "2020-01-31"}
    )
    assert old.json()["accounts"] == old.json()["models"] == [] and old.json()["accountCount"] == 0
    for params, status in (
        ({"from": "2026-02-01", "to": "2026-01-01"}, 400),
        ({"from": "2024-01-01", "to": "2026-01-01"}, 400),
        ({"from": "2026-02-30"}, 400),
        ({"to": "yesterday"}, 422),
        ({"limit": 0}, 422),
        ({"limit": 201}, 422),
    ):
        refused = c.get("/api/admin/usage", headers=admin, params=params)
        assert refused.status_code == status, (params, refused.text)
        assert "Traceback" not in refused.text
