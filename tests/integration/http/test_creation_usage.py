"""Routing and naming a new app are model requests (issue 43): over HTTP with the offline
model, an app created without a mode has both in its usage and its owner's, kept under turn 0
(its creation); one created with a mode has its naming only; a provider that reports no
usage is counted by the platform, marked estimated, and says the same tokens."""

from __future__ import annotations

from typing import Any

from tests.integration.http.conftest import Api

FIELDS = ("requests", "inputTokens", "outputTokens", "cachedTokens")


def create(api: Api, headers: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    made = api.client.post("/api/apps", headers=headers, json=body)
    assert made.status_code == 201, made.text
    return dict(made.json())


def usage(api: Api, headers: dict[str, str], path: str) -> dict[str, Any]:
    got = api.client.get(path, headers=headers)
    assert got.status_code == 200, got.text
    return dict(got.json()["total"])


def test_an_apps_routing_and_naming_are_in_its_usage_and_its_owners(api: Api) -> None:
    me = api.user()
    routed = create(api, me, {"initPrompt": "A Vue todo app with an about page"})
    assert routed["codeGenType"] == "vue_project"  # the model chose it
    ledger = api.platform.engine.usage
    assert ledger is not None
    routing, naming = ledger.of_turn(routed["id"], 0)
    owner = api.platform.apps.get(routed["id"])
    assert owner is not None
    for kept in (routing, naming):
        assert (kept.account, kept.turn, kept.round) == (owner.owner, 0, 0)
        assert kept.model == api.platform.settings.model_routing and not kept.estimated
        assert kept.input_tokens > 0 and kept.output_tokens > 0
    spent = usage(api, me, f"/api/apps/{routed['id']}/usage")
    assert spent["requests"] == 2 and spent["estimatedRequests"] == 0
    assert spent["inputTokens"] == routing.input_tokens + naming.input_tokens
    assert spent["outputTokens"] == routing.output_tokens + naming.output_tokens
    # Given a mode, the app is named only.
    named = create(api, me, {"initPrompt": "A page about newts", "codeGenType": "html"})
    (only,) = ledger.of_turn(named["id"], 0)
    assert usage(api, me, f"/api/apps/{named['id']}/usage")["requests"] == 1
    # The account's usage is both apps' creations, nothing else yet.
    mine = usage(api, me, "/api/users/me/usage")
    assert mine["requests"] == 3
    assert mine["inputTokens"] == spent["inputTokens"] + only.input_tokens
    # Another account spent nothing.
    assert usage(api, api.user(), "/api/users/me/usage")["requests"] == 0


def test_a_provider_that_reports_no_usage_is_counted_by_the_platform(api: Api) -> None:
    """The same creation twice, the second with the offline model leaving its usage out
    (``[[usage=none]]``; ``[[usage=some]]`` is as long and no directive): the platform's count
    of each request is exactly the provider's, marked estimated."""
    me = api.user()
    told = create(api, me, {"initPrompt": "A page about otters [[usage=some]]"})
    counted = create(api, me, {"initPrompt": "A page about otters [[usage=none]]"})
    said = usage(api, me, f"/api/apps/{told['id']}/usage")
    estimated = usage(api, me, f"/api/apps/{counted['id']}/usage")
    assert said["requests"] == 2 and said["estimatedRequests"] == 0
    assert estimated["estimatedRequests"] == 2
    for field in FIELDS:
        assert estimated[field] == said[field], field
    ledger = api.platform.engine.usage
    assert ledger is not None
    assert all(k.estimated for k in ledger.of_turn(counted["id"], 0))
