"""Context values and the core layer's local (Docker-free) bundling, without a synth."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import DockerImage, RemovalPolicy
from zerocode_infra import packaging
from zerocode_infra.config import DEFAULTS, read_config
from zerocode_infra.packaging import PipLocalBundling, pip_arguments, runtime_dependencies

ROOT = Path(__file__).resolve().parents[2]


class Context:
    def __init__(self, **values: Any) -> None:
        self.values = values

    def try_get_context(self, key: str) -> Any:
        return self.values.get(key)


def test_cdk_json_documents_the_same_defaults_as_the_code() -> None:
    assert json.loads((ROOT / "cdk.json").read_text())["context"] == DEFAULTS


def test_defaults() -> None:
    config = read_config(Context(), "eu-west-1")
    assert config.removal_policy == RemovalPolicy.RETAIN and config.retain
    assert config.nat_gateways == 1 and config.architecture == "arm64"
    assert (
        config.lwa_layer_arn
        == "arn:aws:lambda:eu-west-1:753240598075:layer:LambdaAdapterLayerArm64:30"
    )
    assert config.console_origin == ""


def test_a_region_without_an_adapter_layer_stops_the_synth_with_a_clear_message() -> None:
    with pytest.raises(
        ValueError,
        match=r"no Lambda Web Adapter layer ARN for region "
        r"af-south-1 \(arm64\).*-c lwaLayerArn=",
    ):
        read_config(Context(), "af-south-1")


def test_context_values_from_the_command_line_are_parsed() -> None:
    arn = "arn:aws:lambda:af-south-1:753240598075:layer:LambdaAdapterLayerArm64:30"
    config = read_config(
        Context(
            lwaLayerArn=arn,
            natGateways="2",
            removalPolicy="DESTROY",
            consoleOrigin="https://console.example.com/",
        ),
        "af-south-1",
    )
    assert config.lwa_layer_arn == arn and config.nat_gateways == 2
    assert config.removal_policy == RemovalPolicy.DESTROY and not config.retain
    assert config.console_origin == "https://console.example.com"
    assert (config.profile, config.api_concurrency, config.in_vpc) == ("default", 50, True)
    cheap = read_config(Context(profile="CHEAP", apiConcurrency="7"), "us-east-1")
    assert (cheap.profile, cheap.api_concurrency, cheap.in_vpc) == ("cheap", 7, False)
    table = json.dumps({"arm64": {"af-south-1": arn}})
    assert read_config(Context(lwaLayerArns=table), "af-south-1").lwa_layer_arn == arn


def test_x86_functions_get_the_x86_adapter_layer() -> None:
    config = read_config(Context(architecture="x86_64"), "us-east-1")
    assert config.lwa_layer_arn.endswith(":layer:LambdaAdapterLayerX86:30")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("removalPolicy", "snapshot", "removalPolicy must be"),
        ("natGateways", "many", "natGateways must be an integer"),
        ("natGateways", -1, "natGateways must be at least 0"),
        ("architecture", "riscv", "architecture must be"),
        ("profile", "free", "profile must be 'default' or 'cheap'"),
        ("apiConcurrency", -1, "apiConcurrency must be at least 0"),
        ("apiConcurrency", "lots", "apiConcurrency must be an integer"),
        # An output must outlive every pointer to it: idle 30 days + the restore margin.
        ("previewOutputDays", 37, "previewOutputDays must be at least 38"),
        ("previewOutputDays", "soon", "previewOutputDays must be an integer"),
    ],
)
def test_bad_context_values_are_refused(key: str, value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_config(Context(**{key: value}), "us-east-1")


def test_region_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    from aws_cdk import App
    from zerocode_infra.stack import target_region

    for name in ("CDK_DEFAULT_REGION", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
    assert target_region(App()) == "us-east-1"
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    assert target_region(App()) == "eu-west-1"
    monkeypatch.setenv("CDK_DEFAULT_REGION", "eu-central-1")
    assert target_region(App()) == "eu-central-1"
    assert target_region(App(context={"region": "ap-southeast-2"})) == "ap-southeast-2"


def test_layer_dependencies_are_the_packages_runtime_dependencies() -> None:
    with (ROOT / "pyproject.toml").open("rb") as f:
        assert runtime_dependencies() == tomllib.load(f)["project"]["dependencies"]


def test_pip_installs_binary_wheels_for_the_lambda_platform() -> None:
    args = pip_arguments("/out/python", "arm64", ["redis>=5"])
    assert args[0] == "install" and args[-1] == "redis>=5"
    for flag, value in (
        ("--platform", "manylinux2014_aarch64"),
        ("--implementation", "cp"),
        ("--python-version", "3.13"),
        ("--target", "/out/python"),
    ):
        assert args[args.index(flag) + 1] == value
    assert "--only-binary=:all:" in args and "--no-compile" in args


def test_local_bundling_runs_pip_and_copies_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[list[str]] = []

    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(subprocess, "run", run)
    bundling = PipLocalBundling("arm64", ["redis>=5"])
    assert bundling.try_bundle(str(tmp_path), image=DockerImage.from_registry("unused"))
    assert calls == [
        [sys.executable, "-m", "pip", *pip_arguments(tmp_path / "python", "arm64", ["redis>=5"])]
    ]
    copied = tmp_path / "python" / "zerocode"
    assert (copied / "__init__.py").is_file()
    assert (copied / "entrypoints" / "lambda_api.py").is_file()
    assert (copied / "py.typed").is_file() and any((copied / "engine" / "prompts").iterdir())
    assert not list(copied.rglob("__pycache__"))


def test_a_failed_pip_stops_the_synth(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(command, 1, "", "No matching distribution")

    monkeypatch.setattr(subprocess, "run", run)
    with pytest.raises(RuntimeError, match="No matching distribution"):
        PipLocalBundling("arm64", ["nope"]).try_bundle(
            str(tmp_path), image=DockerImage.from_registry("unused")
        )


def test_layer_hash_follows_package_dependencies_and_platform() -> None:
    deps = runtime_dependencies()
    base = packaging.source_hash("arm64", deps)
    assert packaging.source_hash("arm64", list(deps)) == base
    assert packaging.source_hash("arm64", [*deps, "extra"]) != base
    assert packaging.source_hash("x86_64", deps) != base
