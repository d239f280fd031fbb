"""What a turn costs, seen (issue 43), against the local server over HTTP with the offline
model: ``done`` says each turn's requests and tokens; an app's days and the account's days
add up to the turns, across apps; a range is checked; nobody else sees an app's usage; a
deleted app's spending stays on its owner's account; an admin's budget for one account
refuses its next turn until cleared; the admin's totals add up to each account's own."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, signed_in
from tests.e2e.test_admin import admin_client

FIELDS = ("requests", "inputTokens", "outputTokens", "cachedTokens")
BUDGET = 1000  # tokens a day: naming an app costs about 110, a Vue turn's first request more


def total(turns: list[dict[str, Any]], field: str) -> int:
    return sum(int(t[field]) for t in turns)


def test_usage_adds_up_per_turn_app_and_account(server: Server) -> None:
    owner = signed_in(server)
    page = create(owner, "A page about otters", "html")
    vue = create(owner, "A Vue todo app with an about page", "vue_project")
    spent: dict[str, list[dict[str, Any]]] = {page["id"]: [], vue["id"]: []}
    # Each app's creation named it (one request of the routing model, turn 0): its usage
    # before any turn, counted with its turns'.
    for app in (page, vue):
        made = owner.get(f"/api/apps/{app['id']}/usage").json()["total"]
        assert made["requests"] == 1 and made["inputTokens"] > 0, made
        spent[app["id"]].append(made)
    for app, message in (
        (page, "A page about otters"),
        (page, "Make the heading green"),
        (vue, "A Vue todo app with an about page"),
    ):
        turn = chat(owner, app["id"], message)
        assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
        usage = turn.done["usage"]
        assert usage["requests"] >= 1 and usage["inputTokens"] > usage["outputTokens"] > 0
        assert usage["estimated"] is False  # the offline model reports its usage
        # No price is set for its model here: no cost is claimed.
        assert usage["costUsd"] is None and usage["unpricedRequests"] == usage["requests"]
        spent[app["id"]].append(usage)
    # Per app: its days add up to its creation and its turns.
    for app_id, turns in spent.items():
        body = owner.get(f"/api/apps/{app_id}/usage").json()
        assert [d["requests"] for d in body["days"]] == [total(turns, "requests")]  # one day
        for field in FIELDS:
            assert body["total"][field] == total(turns, field), field
        assert body["total"]["estimatedRequests"] == 0
    # Per account: both apps.
    mine = owner.get("/api/users/me/usage").json()
    every = [u for turns in spent.values() for u in turns]
    for field in FIELDS:
        assert mine["total"][field] == total(every, field), field
    (today,) = mine["days"]
    assert mine["to"] == today["day"] and mine["from"] < mine["to"]  # the last 30 days
    # Deleting an app forgets its usage, not what the account spent.
    assert owner.delete(f"/api/apps/{page['id']}").status_code == 204
    assert owner.get("/api/users/me/usage").json()["total"] == mine["total"]


def test_ranges_are_checked_and_an_apps_usage_is_its_owners(server: Server) -> None:
    owner = signed_in(server)
    app = create(owner, "A page about newts", "html")
    ok = owner.get(
        f"/api/apps/{app['id']}/usage", params={"from": "2026-01-01", "to": "2026-01-31"}
    )
    assert ok.status_code == 200 and ok.json()["days"] == [] and ok.json()["total"]["requests"] == 0
    for params, says in (
        ({"from": "2026-02-01", "to": "2026-01-01"}, "is after"),
        ({"from": "2024-01-01", "to": "2026-01-01"}, "at most 366 days"),
        ({"from": "2026-02-30"}, "is not a day"),
    ):
        refused = owner.get(f"/api/apps/{app['id']}/usage", params=params)
        assert refused.status_code == 400, (params, refused.text)
        assert refused.json()["error"]["code"] == "invalid_input"
        assert says in refused.text, (params, refused.text)
        assert "Traceback" not in refused.text
    # Not the shape of a day at all: the request's own validation, as for every query.
    odd = owner.get(f"/api/apps/{app['id']}/usage", params={"to": "yesterday"})
    assert odd.status_code == 422 and odd.json()["error"]["code"] == "validation_error"
    stranger = signed_in(server)
    assert stranger.get(f"/api/apps/{app['id']}/usage").status_code == 404
    assert httpx.get(f"{server.api}/api/users/me/usage").status_code == 401


@pytest.fixture(scope="module")
def budgeted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose accounts may spend BUDGET tokens a day: an app's creation (its naming)
    stays under it, any Vue turn's first request crosses it."""
    srv = Server(tmp_path_factory.mktemp("zerocode-budget"))
    srv.env["ZEROCODE_TOKENS_PER_DAY"] = str(BUDGET)
    srv.start()
    yield srv
    srv.stop()


def test_a_budget_interrupts_a_turn_and_refuses_the_next_with_429(budgeted: Server) -> None:
    """Over HTTP: the turn that crossed the daily budget ends interrupted with
    quota_exceeded saying which budget and when it resets; the next chat is 429
    quota_exceeded with Retry-After and the reset time, and nothing starts."""
    owner = signed_in(budgeted)
    app = create(owner, "A Vue counter", "vue_project")
    turn = chat(owner, app["id"], "A Vue counter")
    assert turn.done is not None and turn.done["status"] == "interrupted", turn.done
    (error,) = turn.errors
    assert error["code"] == "quota_exceeded"
    assert f"token budget of {BUDGET:,} per day" in error["message"]
    assert turn.done["usage"]["requests"] == 1
    refused = owner.post(f"/api/apps/{app['id']}/chat", json={"message": "Add a footer"})
    assert refused.status_code == 429, refused.text
    body = refused.json()["error"]
    assert body["code"] == "quota_exceeded" and "resets at" in body["message"]
    assert body["lockout"]["reason"] == "tokens_per_day" and body["lockout"]["after"] == BUDGET
    assert 1 <= int(refused.headers["Retry-After"]) <= 86_400
    history = owner.get(f"/api/apps/{app['id']}/history").json()["entries"]
    assert max(e["turn"] for e in history) == turn.done["turn"]  # the refused one never began


def test_an_admins_budget_for_one_account_refuses_its_next_turn_until_cleared(
    server: Server,
) -> None:
    """The platform sets no budget here; an admin's for this account alone refuses its next
    turn (429 quota_exceeded, naming the budget and its reset) and no one else's; cleared,
    the platform's (none) holds again. The account itself can neither read nor change it."""
    owner, neighbour = signed_in(server), signed_in(server)
    admin = admin_client(server, f"budget-admin-{secrets.token_hex(3)}")
    me = owner.get("/api/users/me").json()["id"]
    url = f"/api/admin/users/{me}/budget"
    app = create(owner, "A page about otters", "html")
    first = chat(owner, app["id"], "A page about otters")
    assert first.done is not None and first.done["status"] == "succeeded", first.done
    for attempt in (owner.get(url), owner.delete(url), owner.put(url, json={})):
        assert attempt.status_code == 403 and attempt.json()["error"]["code"] == "forbidden"
    assert owner.get("/api/admin/usage").status_code == 403
    own = {"tokensPerDay": 1, "tokensPerMonth": None}
    set_ = admin.put(url, json=own)
    assert set_.status_code == 200, set_.text
    assert set_.json()["effective"] == own and set_.json()["spent"]["today"] > 1
    assert set_.json()["platform"] == {"tokensPerDay": None, "tokensPerMonth": None}
    refused = owner.post(f"/api/apps/{app['id']}/chat", json={"message": "Add a footer"})
    assert refused.status_code == 429, refused.text
    error = refused.json()["error"]
    assert error["code"] == "quota_exceeded" and "token budget of 1 per day" in error["message"]
    assert "resets at" in error["message"] and error["lockout"]["reason"] == "tokens_per_day"
    assert 1 <= int(refused.headers["Retry-After"]) <= 86_400
    # Another account is not touched.
    theirs = create(neighbour, "A page about newts", "html")
    other = chat(neighbour, theirs["id"], "A page about newts")
    assert other.done is not None and other.done["status"] == "succeeded"
    assert admin.delete(url).status_code == 204
    assert admin.get(url).json()["override"] is None
    again = chat(owner, app["id"], "Add a footer")
    assert again.done is not None and again.done["status"] == "succeeded", again.done


def test_the_admins_totals_add_up_per_account_and_per_model(own_server: Server) -> None:
    """On a server of its own: on the shared one, every other test's accounts spend too, and
    the totals list the 50 that spent most."""
    server = own_server
    ann, bob = signed_in(server), signed_in(server)
    admin = admin_client(server, f"totals-admin-{secrets.token_hex(3)}")
    for who, messages in ((ann, ["A page about owls"]), (bob, ["A page about bats", "Bigger"])):
        app = create(who, messages[0], "html")
        for message in messages:
            turn = chat(who, app["id"], message)
            assert turn.done is not None and turn.done["status"] == "succeeded", turn.done
    body = admin.get("/api/admin/usage").json()
    listed = {a["userId"]: a for a in body["accounts"]}
    for who in (ann, bob):
        me = who.get("/api/users/me").json()
        row = listed[me["id"]]
        assert row["account"] == me["account"]
        mine = who.get("/api/users/me/usage").json()["total"]
        assert {f: row[f] for f in FIELDS} == {f: mine[f] for f in FIELDS}
    for field in (*FIELDS, "unpricedRequests", "estimatedRequests"):
        assert sum(m[field] for m in body["models"]) == body["total"][field], field
        assert sum(a[field] for a in body["accounts"]) == body["total"][field], field
    assert body["accountCount"] == len(body["accounts"]) == 2  # the admin spent nothing
    bad = admin.get("/api/admin/usage", params={"from": "2026-02-01", "to": "2026-01-01"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"
