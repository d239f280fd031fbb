"""The core layer: ``layers/core/python/zerocode`` plus its third-party dependencies.

The dependencies are the runtime ones of ``pyproject.toml`` (read from it, so the layer and
the package never disagree), installed by pip as manylinux wheels for the Lambda platform
(architecture and Python version of the functions). That is CDK *local* bundling: it runs
on the machine doing the synth and needs no Docker. The Docker image is only the nominal
fallback CDK requires in the bundling options; local bundling never declines, so it is
never pulled. Skipping bundling (context ``aws:cdk:bundling-stacks = []``) keeps the
asset pointing at the source, which is how the tests synth in seconds.
"""

from __future__ import annotations

import hashlib
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

ROOT = Path(__file__).resolve().parents[2]
LAYER_SOURCE = ROOT / "layers" / "core"
PACKAGE = LAYER_SOURCE / "python" / "zerocode"
PYTHON_VERSION = "3.13"  # the newest with a tiktoken aarch64 wheel on the index
RUNTIME = lambda_.Runtime.PYTHON_3_13
ASSET_EXCLUDE = ["**/__pycache__", "**/*.pyc", "*.egg-info"]
_PIP_PLATFORM = {"arm64": "manylinux2014_aarch64", "x86_64": "manylinux2014_x86_64"}
_DOCKER_PLATFORM = {"arm64": "linux/arm64", "x86_64": "linux/amd64"}


def runtime_dependencies(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """``[project].dependencies``: every one is imported by the API or the build events."""
    with pyproject.open("rb") as f:
        return [str(d) for d in tomllib.load(f)["project"]["dependencies"]]


def pip_arguments(target: Path | str, architecture: str, deps: list[str]) -> list[str]:
    """``pip install`` for another platform: binary wheels only, no bytecode compiled by
    this interpreter (its ``.pyc`` would be for the wrong Python version)."""
    return [
        "install",
        "--quiet",
        "--no-compile",
        "--disable-pip-version-check",
        "--platform",
        _PIP_PLATFORM[architecture],
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        "--only-binary=:all:",
        "--upgrade",
        "--target",
        str(target),
        *deps,
    ]


@jsii.implements(ILocalBundling)
class PipLocalBundling:
    """Bundles the layer on this machine with this interpreter's pip."""

    def __init__(self, architecture: str, deps: list[str]) -> None:
        self.architecture, self.deps = architecture, deps

    def try_bundle(self, output_dir: str, *, image: DockerImage, **_: object) -> bool:
        target = Path(output_dir) / "python"
        command = [
            sys.executable,
            "-m",
            "pip",
            *pip_arguments(target, self.architecture, self.deps),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"bundling the core layer failed: {shlex.join(command)}\n{done.stdout}{done.stderr}"
            )
        shutil.copytree(
            PACKAGE,
            target / "zerocode",
            dirs_exist_ok=True,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        return True


def source_hash(architecture: str, deps: list[str]) -> str:
    """Changes when the package's files, the dependency list or the target platform do
    (the dependencies live outside the asset's directory, so CDK could not see them)."""
    digest = hashlib.sha256()
    digest.update(repr((PYTHON_VERSION, _PIP_PLATFORM[architecture], deps)).encode())
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(path.relative_to(PACKAGE).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def lambda_architecture(name: str) -> lambda_.Architecture:
    return lambda_.Architecture.ARM_64 if name == "arm64" else lambda_.Architecture.X86_64


def core_layer(scope: Construct, architecture: lambda_.Architecture) -> lambda_.LayerVersion:
    arch = architecture.name
    deps = runtime_dependencies()
    docker = (
        "pip install --no-compile --target /asset-output/python "
        f"{shlex.join(deps)} && cp -r /asset-input/python/zerocode /asset-output/python/"
    )
    code = lambda_.Code.from_asset(
        str(LAYER_SOURCE),
        exclude=ASSET_EXCLUDE,
        asset_hash_type=AssetHashType.CUSTOM,
        asset_hash=source_hash(arch, deps),
        bundling=BundlingOptions(
            image=DockerImage.from_registry(f"public.ecr.aws/sam/build-python{PYTHON_VERSION}"),
            platform=_DOCKER_PLATFORM[arch],
            command=["bash", "-c", docker],
            local=PipLocalBundling(arch, deps),
        ),
    )
    return lambda_.LayerVersion(
        scope,
        "CoreLayer",
        code=code,
        compatible_runtimes=[RUNTIME],
        compatible_architectures=[architecture],
        description="zerocode core package and its dependencies",
    )
