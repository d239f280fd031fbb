"""AWS WAF (issue 27, point 5): a regional web ACL on the API stage, a CloudFront one on both
distributions, managed rule groups and per-address rate limits sized from the application's
own limits; off in the cheap profile; a stack outside us-east-1 is told why it cannot have
the distributions' ACL."""

from __future__ import annotations

from typing import Any

import pytest
from zerocode_infra.config import DEFAULTS
from zerocode_infra.stack import build_app
from zerocode_infra.waf import (
    APP_CHAT,
    APP_LOGIN_ADDRESS,
    APP_LOGIN_WINDOW,
    BODY_RULES,
    WINDOW_SECONDS,
    limits,
)

from tests.infra.conftest import REGION, Synth
from zerocode.bootstrap.settings import Settings


def acls(synth: Synth) -> dict[str, dict[str, Any]]:
    return {
        p["Properties"]["Scope"]: p["Properties"]
        for p in synth.of_type("AWS::WAFv2::WebACL").values()
    }


def rules(acl: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["Name"]: r for r in acl["Rules"]}


def test_the_api_stage_has_a_regional_acl_with_managed_groups_and_rates(synth: Synth) -> None:
    api = acls(synth)["REGIONAL"]
    assert api["DefaultAction"] == {"Allow": {}}
    found = rules(api)
    for group in (
        "AWSManagedRulesAmazonIpReputationList",
        "AWSManagedRulesKnownBadInputsRuleSet",
        "AWSManagedRulesCommonRuleSet",
    ):
        statement = found[group]["Statement"]["ManagedRuleGroupStatement"]
        assert statement["VendorName"] == "AWS" and statement["Name"] == group
    # Bodies are code and prompts: the body rules count, they do not block.
    common = found["AWSManagedRulesCommonRuleSet"]["Statement"]["ManagedRuleGroupStatement"]
    counted = {
        o["Name"] for o in common["RuleActionOverrides"] if o["ActionToUse"] == {"Count": {}}
    }
    assert counted == set(BODY_RULES)
    want = limits(int(DEFAULTS["throttleRateLimit"]))
    rates = {
        name: r["Statement"]["RateBasedStatement"]
        for name, r in found.items()
        if name.startswith("Rate")
    }
    assert {n: r["Limit"] for n, r in rates.items()} == {
        "RateFrontDoor": want.front_door,
        "RateChat": want.chat,
        "RateApi": want.api,
    }
    assert all(r["AggregateKeyType"] == "IP" for r in rates.values())
    assert all(r["EvaluationWindowSec"] == WINDOW_SECONDS for r in rates.values())
    assert all(found[n]["Action"] == {"Block": {}} for n in rates)
    front = rates["RateFrontDoor"]["ScopeDownStatement"]["AndStatement"]["Statements"]
    paths = {s["ByteMatchStatement"]["SearchString"] for s in front[1]["OrStatement"]["Statements"]}
    assert paths == {"/api/users/register", "/api/users/login"}
    assert front[0]["ByteMatchStatement"]["SearchString"] == "POST"
    chat = rates["RateChat"]["ScopeDownStatement"]["AndStatement"]["Statements"]
    assert chat[1]["ByteMatchStatement"]["SearchString"] == "/chat"
    assert "ScopeDownStatement" not in rates["RateApi"]

    (association,) = synth.of_type("AWS::WAFv2::WebACLAssociation").values()
    arn = association["Properties"]["ResourceArn"]
    stages = synth.of_type("AWS::ApiGateway::Stage")
    (stage_id,) = stages
    assert stage_id in str(arn), arn  # the API's stage


def test_both_distributions_share_the_cloudfront_acl(synth: Synth) -> None:
    assert set(acls(synth)) == {"REGIONAL", "CLOUDFRONT"}
    (acl_id,) = [
        k
        for k, v in synth.of_type("AWS::WAFv2::WebACL").items()
        if v["Properties"]["Scope"] == "CLOUDFRONT"
    ]
    distributions = synth.of_type("AWS::CloudFront::Distribution")
    assert len(distributions) == 2
    for d in distributions.values():
        assert d["Properties"]["DistributionConfig"]["WebACLId"] == {"Fn::GetAtt": [acl_id, "Arn"]}
    sites = rules(acls(synth)["CLOUDFRONT"])
    assert sites["RateSites"]["Statement"]["RateBasedStatement"]["Limit"] == limits(50).sites
    assert (
        "RuleActionOverrides"
        not in sites["AWSManagedRulesCommonRuleSet"]["Statement"]["ManagedRuleGroupStatement"]
    )  # static GET requests: the whole set blocks


def test_the_limits_are_sized_from_the_applications_own() -> None:
    app = Settings()
    assert (app.rate_login_address, app.rate_login_window_seconds, app.rate_chat) == (
        APP_LOGIN_ADDRESS,
        APP_LOGIN_WINDOW,
        APP_CHAT,
    )
    n = limits(50)
    # Looser than the application (its 429 comes first), a per-address share of the stage.
    assert n.front_door > APP_LOGIN_ADDRESS * WINDOW_SECONDS / APP_LOGIN_WINDOW
    assert n.chat > APP_CHAT * WINDOW_SECONDS / 60
    assert n.api < 50 * WINDOW_SECONDS  # one address cannot take the whole stage
    assert limits(500).api > n.api


def _synth(tmp_path: Any, **context: Any) -> Synth:
    from aws_cdk.assertions import Template

    _, stack = build_app(
        {**DEFAULTS, "region": REGION, "aws:cdk:bundling-stacks": [], **context},
        outdir=str(tmp_path),
    )
    raw = dict(Template.from_stack(stack).to_json())
    return Synth(stack, Template.from_stack(stack), raw["Resources"], raw)


def test_the_cheap_profile_and_the_switch_turn_it_off(tmp_path: Any) -> None:
    cheap = _synth(tmp_path / "cheap", profile="cheap")
    assert cheap.of_type("AWS::WAFv2::WebACL") == {}
    assert cheap.of_type("AWS::WAFv2::WebACLAssociation") == {}
    forced = _synth(tmp_path / "forced", profile="cheap", waf="true")
    assert set(acls(forced)) == {"REGIONAL", "CLOUDFRONT"}
    off = _synth(tmp_path / "off", waf="false")
    assert off.of_type("AWS::WAFv2::WebACL") == {}
    with pytest.raises(ValueError, match="waf must be true, false or auto"):
        _synth(tmp_path / "bad", waf="maybe")


def test_outside_us_east_1_the_distributions_acl_is_refused_plainly(tmp_path: Any) -> None:
    with pytest.raises(ValueError, match="must be made in us-east-1"):
        _synth(tmp_path / "eu", region="eu-west-1")
    assert (
        _synth(tmp_path / "eu-off", region="eu-west-1", waf="false").of_type("AWS::WAFv2::WebACL")
        == {}
    )
