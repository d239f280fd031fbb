"""checkov (issue 27, point 7): every check passes or is skipped in code with its reason.

``make synth`` runs the gate (infra/checkov_gate.py) over both profiles' templates with the
pinned checkov of ``.venv-checkov``; these tests hold the pieces to account: the skips in
the synthesized metadata, ``skip_checkov``'s refusals, the gate's verdicts, and (where
checkov is installed, always in CI: ``ZEROCODE_REQUIRE_CHECKOV``) a real run that passes on
both templates and fails on a template with an unexplained finding.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_sqs as sqs
from zerocode_infra.nag import CHECKOV_ID, MIN_REASON_WORDS, skip_checkov

from tests.infra.conftest import INFRA, Synth

sys.path.append(str(INFRA))
import checkov_gate
from app import overrides

CHECKOV = INFRA.parent / ".venv-checkov" / "bin" / "checkov"


def skips(synth: Synth) -> dict[str, list[dict[str, str]]]:
    return {
        logical_id: resource["Metadata"]["checkov"]["skip"]
        for logical_id, resource in synth.resources.items()
        if "checkov" in resource.get("Metadata", {})
    }


@pytest.mark.parametrize("profile", ["synth", "cheap"])
def test_every_skip_names_one_check_and_says_why(
    profile: str, request: pytest.FixtureRequest
) -> None:
    found = skips(request.getfixturevalue(profile))
    assert found, "no checkov skips at all: the metadata did not reach the template"
    for logical_id, entries in found.items():
        ids = [e["id"] for e in entries]
        assert len(ids) == len(set(ids)), logical_id
        for entry in entries:
            assert CHECKOV_ID.fullmatch(entry["id"]), (logical_id, entry)
            assert len(entry["comment"].split()) >= MIN_REASON_WORDS, (logical_id, entry)


def test_what_is_skipped_is_what_was_decided(synth: Synth, cheap: Synth) -> None:
    """The accepted findings by check and resource type; a new kind of skip is a decision
    to read here, not a line that slips in."""

    def kinds(s: Synth) -> set[tuple[str, str]]:
        return {(e["id"], s.resources[r]["Type"]) for r, es in skips(s).items() for e in es}

    common = {
        ("CKV_AWS_115", "AWS::Lambda::Function"),
        ("CKV_AWS_116", "AWS::Lambda::Function"),
        ("CKV_AWS_117", "AWS::Lambda::Function"),
        ("CKV_AWS_173", "AWS::Lambda::Function"),
        ("CKV_AWS_119", "AWS::DynamoDB::Table"),
        ("CKV_AWS_120", "AWS::ApiGateway::Stage"),
        ("CKV_AWS_59", "AWS::ApiGateway::Method"),
        ("CKV_AWS_18", "AWS::S3::Bucket"),
        ("CKV_AWS_21", "AWS::S3::Bucket"),
        ("CKV_AWS_27", "AWS::SQS::Queue"),
        ("CKV_AWS_174", "AWS::CloudFront::Distribution"),
        # The data API's function URL (CloudFront's origin, refusing all without its secret)
        # and that secret, under the AWS managed key (infra/zerocode_infra/data_api.py).
        ("CKV_AWS_258", "AWS::Lambda::Url"),
        ("CKV_AWS_149", "AWS::SecretsManager::Secret"),
    }
    assert kinds(synth) == common
    # Only the cheap profile has no WAF and the turn-events table (no point-in-time recovery).
    assert kinds(cheap) == common | {
        ("CKV_AWS_68", "AWS::CloudFront::Distribution"),
        ("CKV_AWS_28", "AWS::DynamoDB::Table"),
    }


def test_nothing_checkov_asked_for_that_was_fixed_is_skipped(synth: Synth) -> None:
    """Fixed, not skipped: log groups encrypted (CKV_AWS_158), the payloads bucket versioned
    (CKV_AWS_21 there), the workspaces bucket too."""
    skipped = {(r, e["id"]) for r, es in skips(synth).items() for e in es}
    for logical_id, group in synth.of_type("AWS::Logs::LogGroup").items():
        assert "KmsKeyId" in group["Properties"], logical_id
        assert (logical_id, "CKV_AWS_158") not in skipped
    versioned = {
        k
        for k, b in synth.of_type("AWS::S3::Bucket").items()
        if b["Properties"].get("VersioningConfiguration", {}).get("Status") == "Enabled"
    }
    assert {k for k in versioned if k.startswith(("StoragePayloads", "StorageWorkspaces"))}
    assert len({k[:15] for k in versioned}) == 2, versioned
    for bucket in versioned:
        assert (bucket, "CKV_AWS_21") not in skipped
        rules = synth.props(bucket)["LifecycleConfiguration"]["Rules"]
        assert any("NoncurrentVersionExpiration" in r for r in rules), bucket


def test_skip_checkov_refuses_a_short_reason_or_an_unknown_check() -> None:
    stack = Stack(App(), "S")
    queue = sqs.Queue(stack, "Q")
    reason = "A reason of enough words to say why this check does not apply here."
    with pytest.raises(ValueError, match="at least 10 words"):
        skip_checkov(queue, "CKV_AWS_27", "too short")
    with pytest.raises(ValueError, match="not a checkov check id"):
        skip_checkov(queue, "AwsSolutions-SQS3", reason)
    skip_checkov(queue, "CKV_AWS_27", reason)
    skip_checkov(queue, "CKV_AWS_27", reason + " Again.")  # replaces, never duplicates
    skip_checkov(queue, "CKV2_AWS_73", reason)
    cfn = queue.node.default_child
    assert cfn is not None
    assert cfn.get_metadata("checkov") == {  # type: ignore[attr-defined]
        "skip": [
            {"id": "CKV_AWS_27", "comment": reason + " Again."},
            {"id": "CKV2_AWS_73", "comment": reason},
        ]
    }


def report(failed: list[dict[str, Any]], skipped: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "summary": {"passed": 3, "failed": len(failed), "skipped": len(skipped)},
        "results": {"failed_checks": failed, "skipped_checks": skipped, "parsing_errors": []},
    }


def test_the_gate_names_each_failure_and_each_unexplained_skip() -> None:
    failed = {"check_id": "CKV_AWS_27", "check_name": "SQS encrypted", "resource": "Q"}
    skipped = {
        "check_id": "CKV_AWS_18",
        "resource": "B",
        "check_result": {"result": "SKIPPED", "suppress_comment": "because"},
    }
    explained = {
        **skipped,
        "check_result": {"suppress_comment": "A reason of ten words or more, said in full."},
    }
    assert checkov_gate.problems(report([], [explained])) == []
    assert checkov_gate.problems(report([failed], [skipped])) == [
        "failed CKV_AWS_27 (SQS encrypted) on Q",
        "skipped CKV_AWS_18 on B without a reason of 10 words or more: 'because'",
    ]
    parse = report([], [])
    parse["results"]["parsing_errors"] = ["t.json"]
    assert checkov_gate.problems(parse) == ["checkov could not parse t.json"]


def test_make_synth_passes_context_like_the_cdk_cli() -> None:
    assert overrides(["-c", "profile=cheap", "--context", "waf=false"]) == {
        "profile": "cheap",
        "waf": "false",
    }
    assert overrides([]) == {}
    for bad in (["profile=cheap"], ["-c"], ["-c", "profile"], ["-x", "a=b"]):
        with pytest.raises(SystemExit, match="usage"):
            overrides(bad)


def checkov_or_skip() -> Path:
    if CHECKOV.exists():
        return CHECKOV
    if os.environ.get("ZEROCODE_REQUIRE_CHECKOV"):
        raise RuntimeError(f"ZEROCODE_REQUIRE_CHECKOV is set but {CHECKOV} is missing")
    pytest.skip("checkov is not installed (make synth installs it in .venv-checkov)")


def test_checkov_passes_both_profiles_and_fails_an_unexplained_finding(
    synth: Synth, cheap: Synth, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkov = str(checkov_or_skip())
    templates = []
    for name, s in (("default", synth), ("cheap", cheap)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(s.raw))
        templates.append(str(path))
    assert checkov_gate.main([checkov, *templates]) == 0, capsys.readouterr().err
    # The same template with one skip taken away fails, naming the check and the resource.
    raw = json.loads(json.dumps(synth.raw))
    queue = next(k for k, r in raw["Resources"].items() if r["Type"] == "AWS::SQS::Queue")
    del raw["Resources"][queue]["Metadata"]["checkov"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(raw))
    capsys.readouterr()
    assert checkov_gate.main([checkov, str(broken)]) == 1
    assert "failed CKV_AWS_27 (Ensure all data stored in the SQS queue is encrypted) on " in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(("region", "waf"), [("eu-west-1", "true"), ("ap-southeast-2", "false")])
def test_checkov_passes_every_stack_of_a_deployment_outside_us_east_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], region: str, waf: str
) -> None:
    """Issue 42, point 4: the platform's stack elsewhere, its edge stack and (WAF on) the
    distributions' web ACL stack in us-east-1, CDK's cross-region readers included."""
    from tests.infra.test_waf import deployment

    checkov = str(checkov_or_skip())
    found = deployment(tmp_path / "cdk.out", region=region, waf=waf)
    assert len(found.templates) == (3 if waf == "true" else 2)
    templates = []
    for name, template in found.templates.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(template))
        templates.append(str(path))
    assert checkov_gate.main([checkov, *templates]) == 0, capsys.readouterr().err
