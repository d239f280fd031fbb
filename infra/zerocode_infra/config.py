"""Deployment choices, read from CDK context (``cdk.json`` defaults, ``-c key=value`` overrides).

Every value has a default here and the same default in ``cdk.json`` (a test keeps them
equal), so the stack synthesizes without a ``cdk.json`` (tests) and operators see every
knob in one place. Values from ``-c`` arrive as strings; they are parsed here, and a bad
value stops the synth with a message that names the context key.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from aws_cdk import RemovalPolicy

LWA_ACCOUNT = "753240598075"  # publishes the Lambda Web Adapter layers in every region
LWA_VERSION = 30  # v1.1.0 (layer 29 was never published for it)
_LWA_REGIONS = (
    "us-east-1",
    "us-east-2",
    "us-west-2",
    "eu-west-1",
    "eu-central-1",
    "ap-northeast-1",
    "ap-southeast-1",
    "ap-southeast-2",
)
_LWA_LAYER = {"arm64": "LambdaAdapterLayerArm64", "x86_64": "LambdaAdapterLayerX86"}


def _lwa_table() -> dict[str, dict[str, str]]:
    return {
        arch: {
            region: f"arn:aws:lambda:{region}:{LWA_ACCOUNT}:layer:{name}:{LWA_VERSION}"
            for region in _LWA_REGIONS
        }
        for arch, name in _LWA_LAYER.items()
    }


DEFAULTS: dict[str, Any] = {
    "removalPolicy": "retain",
    "natGateways": 1,
    "architecture": "arm64",
    "lwaLayerArns": _lwa_table(),
    "lwaLayerArn": "",
    "modelBaseUrl": "https://api.openai.com/v1",
    "modelRouting": "gpt-4o-mini",
    "modelCode": "gpt-4o",
    "modelVue": "gpt-4o",
    "modelVision": True,  # the models above see images (issue 41); false for one that does not
    "buildAhead": False,  # a Vue turn's preview built beside the model's closing reply
    # The site-pointer table: "create" it, or "import" the one an earlier deploy of this
    # stack kept (removalPolicy=retain): its fixed name is known before deploy (the edge
    # router's config), so a redeploy after destroy adopts it, pointers and all.
    "pointerTable": "create",
    "consoleOrigin": "",
    "sitesDomain": "",
    "sitesCertificateArn": "",
    "throttleRateLimit": 50,
    "throttleBurstLimit": 100,
    "profile": "default",
    "waf": "auto",  # AWS WAF on the API and the distributions: on unless profile=cheap
    "apiConcurrency": 50,
    "previewIdleDays": 30,
    "previewOutputDays": 60,
}
# A preview build's output expires previewOutputDays after it was written. Opening an app
# puts its swept preview pointer back only while the build is this many days short of that
# (zerocode.publishing.eviction.RESTORE_MARGIN_DAYS, kept equal by a test), and the sweep
# removes the pointer again within a day: a week of failed sweeps and the pointer still
# names a build that is there.
RESTORE_MARGIN_DAYS = 7

Architecture = Literal["arm64", "x86_64"]
# "default": the functions in a VPC with ElastiCache (Valkey) for window tails and rate
# limits, behind a NAT gateway. "cheap": no VPC, no NAT, no ElastiCache; each container keeps
# window tails in its own memory and rate limits live in DynamoDB (docs/operations.md, "Idle
# cost: the two profiles").
Profile = Literal["default", "cheap"]
PROFILES: tuple[Profile, ...] = ("default", "cheap")


class ContextReader(Protocol):
    def try_get_context(self, key: str) -> Any: ...


@dataclass(frozen=True)
class Config:
    region: str
    removal_policy: RemovalPolicy
    nat_gateways: int
    architecture: Architecture
    lwa_layer_arn: str
    model_base_url: str
    model_routing: str
    model_code: str
    model_vue: str
    console_origin: str  # "" = the console distribution's own https:// domain
    # Each app on its own origin, {label}.{sites_domain} ("" = the shared-origin path scheme
    # on the distribution's own domain), with an ACM certificate for *.{sites_domain}.
    sites_domain: str
    sites_certificate_arn: str
    throttle_rate_limit: int
    throttle_burst_limit: int
    profile: Profile = "default"
    waf: bool = True  # web ACLs on the API stage and the distributions (zerocode_infra/waf.py)
    # The API function's reserved concurrency: at most this many containers (turns and
    # requests at once), and never fewer left to it by other functions. 0: no reservation.
    api_concurrency: int = 50
    # Preview pointers of builds older than this leave the KeyValueStore (the preview sweep).
    preview_idle_days: int = 30
    # Preview builds' outputs (tagged) expire this long after they were written.
    preview_output_days: int = 60
    # Whether the configured models take image parts (ZEROCODE_MODEL_VISION).
    model_vision: bool = True
    # A Vue turn's preview build started beside the model's closing reply: an extra
    # CodeBuild run whenever the model changes files again (ZEROCODE_BUILD_AHEAD).
    build_ahead: bool = False
    # Whether the site-pointer table is made here or an earlier deploy's kept one is used.
    import_pointer_table: bool = False

    @property
    def retain(self) -> bool:
        return self.removal_policy == RemovalPolicy.RETAIN

    @property
    def in_vpc(self) -> bool:
        """The default profile runs the API and the deletion sweep in a VPC, for the cache."""
        return self.profile == "default"


def read_config(node: ContextReader, region: str) -> Config:
    def get(key: str) -> Any:
        value = node.try_get_context(key)
        return DEFAULTS[key] if value is None else value

    policy = str(get("removalPolicy")).lower()
    if policy not in ("retain", "destroy"):
        raise ValueError(f"context removalPolicy must be 'retain' or 'destroy', not {policy!r}")
    arch = str(get("architecture"))
    if arch not in _LWA_LAYER:
        raise ValueError(f"context architecture must be 'arm64' or 'x86_64', not {arch!r}")
    profile = str(get("profile")).lower()
    if profile not in PROFILES:
        raise ValueError(f"context profile must be 'default' or 'cheap', not {profile!r}")
    idle, output = _preview_days(get)
    return Config(
        region=region,
        removal_policy=RemovalPolicy.RETAIN if policy == "retain" else RemovalPolicy.DESTROY,
        nat_gateways=_int(get, "natGateways", minimum=0),
        architecture="arm64" if arch == "arm64" else "x86_64",
        lwa_layer_arn=_lwa_arn(get, arch, region),
        model_base_url=str(get("modelBaseUrl")),
        model_routing=str(get("modelRouting")),
        model_code=str(get("modelCode")),
        model_vue=str(get("modelVue")),
        console_origin=str(get("consoleOrigin")).rstrip("/"),
        **_sites_domain(get),
        throttle_rate_limit=_int(get, "throttleRateLimit", minimum=1),
        throttle_burst_limit=_int(get, "throttleBurstLimit", minimum=1),
        profile="cheap" if profile == "cheap" else "default",
        waf=_switch(get("waf"), "waf", default=profile != "cheap"),
        api_concurrency=_int(get, "apiConcurrency", minimum=0),
        preview_idle_days=idle,
        preview_output_days=output,
        model_vision=_switch(get("modelVision"), "modelVision", default=True),
        build_ahead=_switch(get("buildAhead"), "buildAhead", default=False),
        import_pointer_table=_pointer_table(get("pointerTable")),
    )


def _pointer_table(value: Any) -> bool:
    text = str(value).lower()
    if text not in ("create", "import"):
        raise ValueError(f"context pointerTable must be create or import, not {value!r}")
    return text == "import"


def _preview_days(get: Any) -> tuple[int, int]:
    """``previewIdleDays`` and ``previewOutputDays``: an output outlives every pointer to it."""
    idle = _int(get, "previewIdleDays", minimum=1)
    output = _int(get, "previewOutputDays", minimum=idle + RESTORE_MARGIN_DAYS + 1)
    return idle, output


_DOMAIN = re.compile(r"^(?=.{4,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_CERTIFICATE = re.compile(r"^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate/[\w-]+$")


def _sites_domain(get: Any) -> dict[str, str]:
    """``sitesDomain`` and its certificate: both or neither (CloudFront takes certificates
    from ACM in us-east-1 only)."""
    domain = str(get("sitesDomain") or "").strip().strip(".").lower()
    arn = str(get("sitesCertificateArn") or "").strip()
    if domain and not _DOMAIN.match(domain):
        raise ValueError(
            f"context sitesDomain must be a domain name like apps.example.com, not {domain!r}"
        )
    if domain and not _CERTIFICATE.match(arn):
        raise ValueError(
            "context sitesDomain needs sitesCertificateArn: an ACM certificate "
            f"in us-east-1 for *.{domain} (docs/operations.md), not {arn!r}"
        )
    if arn and not domain:
        raise ValueError("context sitesCertificateArn is set but sitesDomain is not")
    return {"sites_domain": domain, "sites_certificate_arn": arn}


def _switch(value: Any, name: str, *, default: bool) -> bool:
    """A context switch: true/false (or "auto": ``default``)."""
    text = str(value).lower()
    if text == "auto":
        return default
    if text not in ("true", "false"):
        raise ValueError(f"context {name} must be true, false or auto, not {value!r}")
    return text == "true"


def _int(get: Any, key: str, *, minimum: int) -> int:
    try:
        value = int(get(key))
    except (TypeError, ValueError):
        raise ValueError(f"context {key} must be an integer, not {get(key)!r}") from None
    if value < minimum:
        raise ValueError(f"context {key} must be at least {minimum}, not {value}")
    return value


def _lwa_arn(get: Any, arch: str, region: str) -> str:
    """The Lambda Web Adapter layer for this region: ``lwaLayerArn`` if set, else the
    ``lwaLayerArns`` table (a dict, or its JSON when given with ``-c``)."""
    override = str(get("lwaLayerArn") or "")
    if override:
        return override
    table = get("lwaLayerArns")
    if isinstance(table, str):
        table = json.loads(table)
    arn = table.get(arch, {}).get(region) if isinstance(table, dict) else None
    if not arn:
        raise ValueError(
            f"no Lambda Web Adapter layer ARN for region {region} ({arch}): add it to the "
            f"context lwaLayerArns.{arch} in cdk.json, or pass -c lwaLayerArn=arn:aws:lambda:"
            f"{region}:{LWA_ACCOUNT}:layer:{_LWA_LAYER[arch]}:{LWA_VERSION} "
            f"(see https://github.com/awslabs/aws-lambda-web-adapter)"
        )
    return str(arn)
