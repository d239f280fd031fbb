"""AWS WAF in front of the API stage and the two distributions (issue 27, point 5).

Two web ACLs: a REGIONAL one on the API stage, a CLOUDFRONT one (which AWS keeps in
us-east-1) shared by the console and the sites distributions. Each blocks requests from
addresses on Amazon's reputation list and known bad inputs (AWS managed rule groups), and
limits each client address by a rate-based rule. The API's limits are sized from the
application's own (``zerocode.bootstrap.settings``) and the stage's throttle: WAF answers
floods the application would otherwise have to read, looser than the application, so an
ordinary user meets its clear 429 with Retry-After long before WAF's bare 403; and no one
address takes more than a fifth of the stage's throughput.

The API's bodies are code and prompts: a hand-edited page (up to 512 KB), a message that
quotes ``<script>`` or a URL. The common rule set's body rules (size, XSS, LFI/RFI, SSRF)
would block those, so on the API they only count (``COUNT``, visible in WAF's metrics);
the API's own limits bound bodies (1 MiB) and everything it stores is checked by the
domain. The distributions serve GET requests of static files and keep the whole set.

Cost (us-east-1, https://aws.amazon.com/waf/pricing/): 5 USD a month per web ACL, 1 USD a
month per rule or managed group, 0.60 USD per million requests inspected: here 2 ACLs and
10 rules, 20 USD a month idle. Off in the cheap profile (context ``waf``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aws_cdk import Stack, Token
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_ssm as ssm
from aws_cdk import aws_wafv2 as wafv2
from aws_cdk import custom_resources as cr
from constructs import Construct

from zerocode_infra.nag import (
    explain_custom_resource_function,
)

WINDOW_SECONDS = 300  # WAF counts each address's requests over this window
CLOUDFRONT_REGION = "us-east-1"  # where AWS keeps CloudFront's web ACLs

# The application's limits (zerocode.bootstrap.settings defaults) the API's rules are sized
# from; tests/infra/test_waf.py checks they still are its defaults.
APP_LOGIN_ADDRESS = 20  # login and registration attempts per address per 15 minutes
APP_LOGIN_WINDOW = 15 * 60
APP_CHAT = 5  # turns per user per minute
# How much looser than the application's login limit WAF is; how many users may share one
# address (an office behind one NAT) for chat; what share of the API stage's throughput one
# address may take.
HEADROOM = 5
USERS_PER_ADDRESS = 20
ADDRESS_SHARE = 5  # one address: at most a fifth of the stage's rate
SITE_FACTOR = 10  # static files (cache hits count too): ten times an address's API share


@dataclass(frozen=True)
class Limits:
    """Requests per address per ``WINDOW_SECONDS`` before WAF blocks."""

    front_door: int  # POST /api/users/register and /api/users/login
    chat: int  # POST /api/apps/{id}/chat
    api: int  # any API request
    sites: int  # any request to a distribution


def limits(stage_rate: int) -> Limits:
    """Sized from the application's limits and the stage's throttle (requests a second)."""
    front_door = max(10, round(APP_LOGIN_ADDRESS * WINDOW_SECONDS / APP_LOGIN_WINDOW * HEADROOM))
    chat = APP_CHAT * WINDOW_SECONDS // 60 * USERS_PER_ADDRESS
    api = max(chat, stage_rate * WINDOW_SECONDS // ADDRESS_SHARE)
    return Limits(front_door=front_door, chat=chat, api=api, sites=SITE_FACTOR * api)


# The common rule set's rules that read request bodies: counted, not blocking, on the API.
BODY_RULES = (
    "SizeRestrictions_BODY",
    "CrossSiteScripting_BODY",
    "GenericLFI_BODY",
    "GenericRFI_BODY",
    "EC2MetaDataSSRF_BODY",
)


class Waf(Construct):
    """The web ACLs; ``protect_stage`` and ``protect_distributions`` attach them. ``api``:
    the REGIONAL ACL of the API stage (in the stack's own region); ``distributions``: the
    CLOUDFRONT ACL, which AWS keeps in us-east-1 (:class:`SitesWafStack` outside it)."""

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        stage_rate: int,
        distributions: bool,
        api: bool = True,
    ) -> None:
        super().__init__(scope, id)
        self.limits = limits(stage_rate)
        self.api_acl = self._acl("Api", "REGIONAL", self._api_rules()) if api else None
        self.sites_acl: wafv2.CfnWebACL | None = None
        if distributions:
            region = Stack.of(self).region
            if not Token.is_unresolved(region) and region != CLOUDFRONT_REGION:
                raise ValueError(
                    "the distributions' web ACL must be made in us-east-1 (AWS keeps "
                    f"CloudFront's WAF there), not {region}: use SitesWafStack"
                )
            self.sites_acl = self._acl("Sites", "CLOUDFRONT", self._site_rules())

    def protect_stage(self, stage_arn: str) -> None:
        assert self.api_acl is not None
        wafv2.CfnWebACLAssociation(
            self, "ApiStage", resource_arn=stage_arn, web_acl_arn=self.api_acl.attr_arn
        )

    def protect_distributions(
        self, distributions: Sequence[cloudfront.Distribution], acl_arn: str | None = None
    ) -> None:
        """Attach the CLOUDFRONT ACL: this construct's, or ``acl_arn`` (SitesWafStack's)."""
        arn = acl_arn or (self.sites_acl.attr_arn if self.sites_acl is not None else None)
        assert arn is not None
        for distribution in distributions:
            child = distribution.node.default_child
            assert isinstance(child, cloudfront.CfnDistribution)
            child.add_property_override("DistributionConfig.WebACLId", arn)

    def _acl(
        self, name: str, scope: str, rules: list[wafv2.CfnWebACL.RuleProperty]
    ) -> wafv2.CfnWebACL:
        return wafv2.CfnWebACL(
            self,
            f"{name}Acl",
            scope=scope,
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=_visibility(f"zerocode-{name.lower()}"),
            rules=rules,
        )

    def _api_rules(self) -> list[wafv2.CfnWebACL.RuleProperty]:
        n = self.limits
        return [
            _managed(0, "AWSManagedRulesAmazonIpReputationList"),
            _managed(1, "AWSManagedRulesKnownBadInputsRuleSet"),
            _managed(2, "AWSManagedRulesCommonRuleSet", count=BODY_RULES),
            _rate(
                3,
                "FrontDoor",
                n.front_door,
                _post_path_in("/api/users/register", "/api/users/login"),
            ),
            _rate(4, "Chat", n.chat, _post_path_ends("/chat")),
            _rate(5, "Api", n.api, None),
        ]

    def _site_rules(self) -> list[wafv2.CfnWebACL.RuleProperty]:
        return [
            _managed(0, "AWSManagedRulesAmazonIpReputationList"),
            _managed(1, "AWSManagedRulesKnownBadInputsRuleSet"),
            _managed(2, "AWSManagedRulesCommonRuleSet"),
            _rate(3, "Sites", self.limits.sites, None),
        ]


def _visibility(metric: str) -> wafv2.CfnWebACL.VisibilityConfigProperty:
    return wafv2.CfnWebACL.VisibilityConfigProperty(
        cloud_watch_metrics_enabled=True, metric_name=metric, sampled_requests_enabled=True
    )


def _managed(
    priority: int, name: str, *, count: Sequence[str] = ()
) -> wafv2.CfnWebACL.RuleProperty:
    return wafv2.CfnWebACL.RuleProperty(
        name=name,
        priority=priority,
        override_action=wafv2.CfnWebACL.OverrideActionProperty(none={}),
        statement=wafv2.CfnWebACL.StatementProperty(
            managed_rule_group_statement=wafv2.CfnWebACL.ManagedRuleGroupStatementProperty(
                vendor_name="AWS",
                name=name,
                rule_action_overrides=[
                    wafv2.CfnWebACL.RuleActionOverrideProperty(
                        name=rule, action_to_use=wafv2.CfnWebACL.RuleActionProperty(count={})
                    )
                    for rule in count
                ]
                or None,
            )
        ),
        visibility_config=_visibility(name),
    )


def _rate(
    priority: int, name: str, limit: int, scope: wafv2.CfnWebACL.StatementProperty | None
) -> wafv2.CfnWebACL.RuleProperty:
    return wafv2.CfnWebACL.RuleProperty(
        name=f"Rate{name}",
        priority=priority,
        action=wafv2.CfnWebACL.RuleActionProperty(block={}),
        statement=wafv2.CfnWebACL.StatementProperty(
            rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                limit=limit,
                aggregate_key_type="IP",
                evaluation_window_sec=WINDOW_SECONDS,
                scope_down_statement=scope,
            )
        ),
        visibility_config=_visibility(f"Rate{name}"),
    )


def _post() -> wafv2.CfnWebACL.StatementProperty:
    return wafv2.CfnWebACL.StatementProperty(
        byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
            field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(method={}),
            positional_constraint="EXACTLY",
            search_string="POST",
            text_transformations=[_none()],
        )
    )


def _path(constraint: str, value: str) -> wafv2.CfnWebACL.StatementProperty:
    return wafv2.CfnWebACL.StatementProperty(
        byte_match_statement=wafv2.CfnWebACL.ByteMatchStatementProperty(
            field_to_match=wafv2.CfnWebACL.FieldToMatchProperty(uri_path={}),
            positional_constraint=constraint,
            search_string=value,
            text_transformations=[_none()],
        )
    )


def _none() -> wafv2.CfnWebACL.TextTransformationProperty:
    return wafv2.CfnWebACL.TextTransformationProperty(priority=0, type="NONE")


def _post_path_in(*paths: str) -> wafv2.CfnWebACL.StatementProperty:
    either = wafv2.CfnWebACL.StatementProperty(
        or_statement=wafv2.CfnWebACL.OrStatementProperty(
            statements=[_path("ENDS_WITH", p) for p in paths]
        )
    )
    return _and(_post(), either)


def _post_path_ends(suffix: str) -> wafv2.CfnWebACL.StatementProperty:
    return _and(_post(), _path("ENDS_WITH", suffix))


def _and(*statements: wafv2.CfnWebACL.StatementProperty) -> wafv2.CfnWebACL.StatementProperty:
    return wafv2.CfnWebACL.StatementProperty(
        and_statement=wafv2.CfnWebACL.AndStatementProperty(statements=list(statements))
    )


class SitesWafStack(Stack):
    """The distributions' web ACL in a us-east-1 stack of its own, for a platform deployed
    in another region (issue 42, point 4). Its ARN is kept in an SSM parameter of a fixed
    name (:func:`acl_parameter`), which the main stack reads across regions
    (:class:`SitesAclArn`); ``cdk deploy --all`` deploys this stack first."""

    def __init__(
        self, scope: Construct, id: str, *, stage_rate: int, platform: str, **kwargs: Any
    ) -> None:
        super().__init__(
            scope,
            id,
            description="zerocode: the web ACL of the console and sites distributions",
            **kwargs,
        )
        waf = Waf(self, "Waf", stage_rate=stage_rate, distributions=True, api=False)
        assert waf.sites_acl is not None
        ssm.StringParameter(
            self,
            "AclArn",
            parameter_name=acl_parameter(platform),
            string_value=waf.sites_acl.attr_arn,
            description="zerocode: the distributions' web ACL, read by the platform's stack",
        )


def acl_parameter(platform: str) -> str:
    """The SSM parameter (in us-east-1) that names the distributions' web ACL."""
    return f"/zerocode/{platform}/sites-web-acl-arn"


class SitesAclArn(Construct):
    """The distributions' web ACL ARN, read from SitesWafStack's parameter in us-east-1 at
    deploy time (one GetParameter by a custom resource, on create and on each update)."""

    def __init__(self, scope: Construct, id: str, *, platform: str) -> None:
        super().__init__(scope, id)
        stack = Stack.of(self)
        name = acl_parameter(platform)
        parameter = f"arn:{stack.partition}:ssm:{CLOUDFRONT_REGION}:{stack.account}:parameter{name}"
        call = cr.AwsSdkCall(
            service="SSM",
            action="getParameter",
            parameters={"Name": name},
            region=CLOUDFRONT_REGION,
            physical_resource_id=cr.PhysicalResourceId.of(name),
        )
        reader = cr.AwsCustomResource(
            self,
            "Read",
            on_create=call,
            on_update=call,
            policy=cr.AwsCustomResourcePolicy.from_sdk_calls(resources=[parameter]),
            install_latest_aws_sdk=False,
        )
        self.arn = reader.get_response_field("Parameter.Value")
        explain_custom_resource_function(self)
