"""AWS WAF (issue 27, point 5): a regional web ACL on the API stage, a CloudFront one on both
distributions, managed rule groups and per-address rate limits sized from the application's
own limits; off in the cheap profile; a stack outside us-east-1 is told why it cannot have
the distributions' ACL."""

from __future__ import annotations

import json
from dataclasses import dataclass
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
    acl_parameter,
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


@dataclass
class Deployment:
    """Every stack of one synthesized app: templates by stack name, with their regions, and
    cdk-nag's unsuppressed errors anywhere."""

    templates: dict[str, dict[str, Any]]
    regions: dict[str, str]
    depends: dict[str, set[str]]  # the stacks each stack is deployed after
    errors: list[str]

    def of_type(self, stack: str, kind: str) -> dict[str, dict[str, Any]]:
        resources = self.templates[stack]["Resources"]
        return {k: v for k, v in resources.items() if v["Type"] == kind}


def deployment(tmp_path: Any, **context: Any) -> Deployment:
    from aws_cdk import cx_api

    app, _ = build_app({**DEFAULTS, "aws:cdk:bundling-stacks": [], **context}, outdir=str(tmp_path))
    assembly = app.synth()
    stacks = assembly.stacks_recursively
    return Deployment(
        templates={a.stack_name: a.template for a in stacks},
        regions={a.stack_name: a.environment.region for a in stacks},
        depends={
            a.stack_name: {
                d.id for d in a.dependencies if isinstance(d, cx_api.CloudFormationStackArtifact)
            }
            for a in stacks
        },
        errors=[
            f"{a.stack_name}: {m.id} {m.entry.data}"
            for a in stacks
            for m in a.messages
            if m.level == cx_api.SynthesisMessageLevel.ERROR
        ],
    )


@pytest.mark.parametrize("region", ["us-east-1", "eu-west-1", "ap-southeast-2"])
def test_the_platform_deploys_in_any_region_with_waf_on_and_off(tmp_path: Any, region: str) -> None:
    """Issue 42, point 4: with WAF on, the API's REGIONAL ACL is always in the platform's
    stack; the distributions' CLOUDFRONT ACL is there in us-east-1, else in a us-east-1
    stack of its own whose ARN the platform reads from SSM there. cdk-nag finds nothing in
    any stack (checkov: tests/infra/test_checkov.py)."""
    on = deployment(tmp_path / "on", region=region, waf="true")
    assert on.errors == []
    main = "ZerocodeStack"
    assert on.regions[main] == region
    scopes = {p["Properties"]["Scope"] for p in on.of_type(main, "AWS::WAFv2::WebACL").values()}
    (association,) = on.of_type(main, "AWS::WAFv2::WebACLAssociation").values()
    assert "Stage" in json.dumps(association["Properties"]["ResourceArn"])
    distributions = on.of_type(main, "AWS::CloudFront::Distribution").values()
    web_acls = [d["Properties"]["DistributionConfig"]["WebACLId"] for d in distributions]
    assert len(web_acls) == 2 and web_acls[0] == web_acls[1]
    if region == "us-east-1":
        assert scopes == {"REGIONAL", "CLOUDFRONT"} and set(on.templates) == {main}
        assert "Fn::GetAtt" in web_acls[0]
    else:
        assert scopes == {"REGIONAL"}
        waf_stack = f"{main}-SitesWaf"
        assert on.regions[waf_stack] == "us-east-1"
        (acl,) = on.of_type(waf_stack, "AWS::WAFv2::WebACL").values()
        assert acl["Properties"]["Scope"] == "CLOUDFRONT"
        (parameter,) = on.of_type(waf_stack, "AWS::SSM::Parameter").values()
        assert parameter["Properties"]["Name"] == acl_parameter(main)
        # The stack's custom resources: this reader, and the build image's digest reader.
        ((reader_id, reader),) = [
            (k, v)
            for k, v in on.of_type(main, "Custom::AWS").items()
            if "getParameter" in json.dumps(v["Properties"]["Create"])
        ]
        call = json.dumps(reader["Properties"]["Create"])
        assert acl_parameter(main) in call and "us-east-1" in call
        assert web_acls[0] == {"Fn::GetAtt": [reader_id, "Parameter.Value"]}
        depends = on.templates[main].get("Metadata", {})
        assert depends is not None  # the dependency is the assembly's (cdk deploy --all)
    off = deployment(tmp_path / "off", region=region, waf="false")
    assert off.errors == []
    assert (
        all(not off.of_type(stack, "AWS::WAFv2::WebACL") for stack in off.templates)
        and f"{main}-SitesWaf" not in off.templates
    )
