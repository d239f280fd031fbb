"""The CDK app lives in infra/ (not an installed package): make it importable here."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from aws_cdk import Stack
    from aws_cdk.assertions import Template

INFRA = Path(__file__).resolve().parents[2] / "infra"
if str(INFRA) not in sys.path:
    sys.path.append(str(INFRA))
# jsii prints a banner for Node releases it no longer supports; the tests do not need it.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")

REGION = "us-east-1"


@dataclass
class Synth:
    """A synthesized stack, and ways to look into its template."""

    stack: Stack
    template: Template
    resources: dict[str, dict[str, Any]]
    raw: dict[str, Any]

    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        return {k: v for k, v in self.resources.items() if v["Type"] == kind}

    def role_policies(self) -> dict[str, dict[str, Any]]:
        """Every policy attached to roles: inline ``AWS::IAM::Policy`` resources and the
        ``AWS::IAM::ManagedPolicy`` CDK adds when a role's statements outgrow one policy."""
        return {
            **self.of_type("AWS::IAM::Policy"),
            **{
                k: v
                for k, v in self.of_type("AWS::IAM::ManagedPolicy").items()
                if v["Properties"].get("Roles")
            },
        }

    def props(self, logical_id: str) -> dict[str, Any]:
        return dict(self.resources[logical_id].get("Properties", {}))

    def one(self, kind: str, **match: Any) -> tuple[str, dict[str, Any]]:
        found = [
            (k, v.get("Properties", {}))
            for k, v in self.of_type(kind).items()
            if all(v.get("Properties", {}).get(p) == want for p, want in match.items())
        ]
        assert len(found) == 1, f"{kind} {match}: {len(found)} found"
        return found[0]


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    """The stack as `make synth` makes it, without bundling (no Docker, no pip), cdk-nag on."""
    from aws_cdk.assertions import Template
    from zerocode_infra.config import DEFAULTS
    from zerocode_infra.stack import build_app

    context = {**DEFAULTS, "region": REGION, "aws:cdk:bundling-stacks": []}
    _, stack = build_app(context, outdir=str(tmp_path_factory.mktemp("cdk.out")))
    template = Template.from_stack(stack)
    raw = dict(template.to_json())
    yield Synth(stack, template, raw["Resources"], raw)


@pytest.fixture(scope="session")
def cheap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    """The cheap profile (tests/infra/test_profiles.py), apiConcurrency=0, a short idle, a
    build ahead and models without vision (context switches of their own)."""
    from aws_cdk.assertions import Template
    from zerocode_infra.config import DEFAULTS
    from zerocode_infra.stack import build_app

    context = {
        **DEFAULTS,
        "region": REGION,
        "aws:cdk:bundling-stacks": [],
        "profile": "cheap",
        "apiConcurrency": 0,
        "previewIdleDays": "7",
        "buildAhead": "true",
        "modelVision": False,
    }
    _, stack = build_app(context, outdir=str(tmp_path_factory.mktemp("cdk.out")))
    template = Template.from_stack(stack)
    raw = dict(template.to_json())
    yield Synth(stack, template, raw["Resources"], raw)


def site_router(synth: Synth) -> tuple[str, dict[str, Any]]:
    """The sites' viewer-request router: the CloudFront Function with the KeyValueStore
    (the /_api/* behavior has a function of its own, data_api_viewer.js)."""
    (found,) = [
        (k, v["Properties"])
        for k, v in synth.of_type("AWS::CloudFront::Function").items()
        if "KeyValueStoreAssociations" in v["Properties"]["FunctionConfig"]
    ]
    return found
