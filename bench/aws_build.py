"""AWS build benchmark: one build through the platform's CodeBuild path, as measured here.

What CodeBuild itself adds (starting a Lambda-compute build, pulling the image) is not
measurable here; docs/operations.md cites AWS for it. Everything else runs for real: the
builder starts the build (source zip, the data-role session, the links; StartBuild itself is
stubbed), the buildspec's one command runs the in-box program with the real toolchain, Vite
and Chromium against S3 on moto's server, and the builder unpacks and publishes the archive
as build_events would. Median of N each, in one run. Beside it, the old buildspec's own
steps (``npm ci`` from a warm npm cache, as the S3 cache restored it, then ``vite build``).

Prints JSON, writes bench/results/aws_build.json and the "aws-build" section of
docs/benchmarks.md.

    .venv/bin/python bench/aws_build.py            # 3 of each
    .venv/bin/python bench/aws_build.py --runs 1   # smoke run
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import boto3  # noqa: E402
from botocore.stub import Stubber  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

from bench.docs import replace_section  # noqa: E402
from tests.aws_standins import BuildRole, CodeBuildRun, run_the_buildspec  # noqa: E402
from tests.integration.publishing.test_vue_template_builds import created_files  # noqa: E402
from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder  # noqa: E402
from zerocode.adapters.local.toolchain_store import ToolchainStore  # noqa: E402
from zerocode.apps.records import CodeGenType  # noqa: E402
from zerocode.apps.workspace import Snapshot  # noqa: E402
from zerocode.bootstrap.settings import Settings  # noqa: E402
from zerocode.publishing import toolchain  # noqa: E402
from zerocode.publishing.builds import BuildJob, new_build_id  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "aws_build.json"
STEP = re.compile(r"^zerocode: (\S+) took ([0-9.]+) s$", re.M)
PAGE = b"<!doctype html><html><body><h1>Otters</h1><p>They hold hands.</p></body></html>"


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def one_build(
    builder: CodeBuildBuilder,
    build: BuildJob,
    role: BuildRole,
    tools: Path,
    chromium: str,
    work: Path,
) -> dict[str, float]:
    sent: list[dict[str, Any]] = []
    builder.codebuild.meta.events.register(
        "before-parameter-build.codebuild.StartBuild", lambda params, **kw: sent.append(params)
    )
    clock = time.perf_counter()
    with Stubber(builder.codebuild) as stub:
        stub.add_response("start_build", {"build": {"id": "zc:1"}}, None)
        builder.start(build)
    start = time.perf_counter() - clock
    clock = time.perf_counter()
    done = run_the_buildspec(
        CodeBuildRun("zc:1", "zc", dict(sent[-1])),
        role=role,
        toolchain=tools,
        chromium=chromium,
        workdir=work,
    )
    box = time.perf_counter() - clock
    if done.returncode != 0:
        raise RuntimeError(done.stdout[-3000:] + done.stderr[-3000:])
    clock = time.perf_counter()
    with Stubber(builder.codebuild) as stub:
        stub.add_response(
            "batch_get_builds", {"builds": [{"id": "zc:1", "buildStatus": "SUCCEEDED"}]}, None
        )
        outcome = builder.outcome(build.app_id, build.build_id, "zc:1")
    unpack = time.perf_counter() - clock
    assert outcome is not None and outcome.ok, outcome
    steps = {name: float(seconds) for name, seconds in STEP.findall(done.stdout)}
    return {"start": start, "box": box, **steps, "unpack and publish": unpack}


def old_buildspec(tools_cache: Path, work: Path) -> dict[str, float]:
    """The steps the old buildspec ran after provisioning: npm ci (npm cache warm, as the
    S3 cache restored it) and vite build."""
    tree = work / "toolchain"
    tree.mkdir(parents=True)
    for name, data in toolchain.manifest().items():
        (tree / name).write_bytes(data)
    clock = time.perf_counter()
    subprocess.run(
        ["npm", *toolchain.NPM_CI_ARGS, "--cache", str(tools_cache)],
        cwd=tree,
        check=True,
        capture_output=True,
    )
    npm_ci = time.perf_counter() - clock
    app = work / "app"
    files = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
    for name, data in toolchain.build_tree(files).items():
        (app / name).parent.mkdir(parents=True, exist_ok=True)
        (app / name).write_bytes(data)
    (app / "node_modules").symlink_to(tree / "node_modules")
    clock = time.perf_counter()
    subprocess.run(["node", *toolchain.VITE_ARGS], cwd=app, check=True, capture_output=True)
    return {"npm ci": npm_ci, "vite build": time.perf_counter() - clock}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    os.environ.update(AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{server._server.server_port}"  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory(prefix="zc-bench-aws-") as tmp:
            work = Path(tmp)

            def client(service: str) -> Any:
                return boto3.client(service, region_name="us-east-1", endpoint_url=url)

            s3 = client("s3")
            s3.create_bucket(Bucket="zc-bench-builds")
            role = client("iam").create_role(RoleName="data", AssumeRolePolicyDocument="{}")
            project_role = BuildRole.made(url, "project")
            builder = CodeBuildBuilder(
                client("codebuild"),
                s3,
                "zc",
                "zc-bench-builds",
                sts=client("sts"),
                data_role_arn=role["Role"]["Arn"],
                build_role_id=project_role.role_id,
            )
            store = ToolchainStore(work / "toolchain", Settings().npm_cache)
            modules, why = asyncio.run(store.ensure())
            if modules is None:
                raise SystemExit("\n".join(why))
            vue = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
            cases = {
                "vue preview": (CodeGenType.VUE_PROJECT, vue, True),
                "vue deploy": (CodeGenType.VUE_PROJECT, vue, False),
                "html preview": (CodeGenType.HTML, {"index.html": PAGE}, True),
                "html deploy": (CodeGenType.HTML, {"index.html": PAGE}, False),
            }
            measured: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
            before: list[dict[str, float]] = []
            for i in range(runs):
                for name, (kind, files, preview) in cases.items():
                    build = BuildJob(
                        app_id="app1",
                        build_id=new_build_id(),
                        kind=kind,
                        source=Snapshot.of(files),
                        preview=preview,
                    )
                    measured[name].append(
                        one_build(
                            builder,
                            build,
                            project_role,
                            modules.parent,
                            chromium,
                            work / f"{name}-{i}",
                        )
                    )
                before.append(old_buildspec(Settings().npm_cache, work / f"old-{i}"))
    finally:
        server.stop()
    result: dict[str, Any] = {
        "runs": runs,
        "node": subprocess.run(
            ["node", "--version"], capture_output=True, text=True
        ).stdout.strip(),
        "after": {
            name: {step: median([r[step] for r in rows]) for step in rows[0]}
            for name, rows in measured.items()
        },
        "before (old buildspec, after provisioning)": {
            step: median([r[step] for r in before]) for step in before[0]
        },
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    steps = ["start", "fetch", "build", "check", "hand-back", "box", "unpack and publish"]
    lines = [
        "## AWS builds: the platform's part (`bench/aws_build.py`)",
        "",
        f"Median of {runs}, seconds, Node {result['node']} on this machine. `box` is the whole",
        "in-box program (`python3 -m zerocode.buildbox` as a process: fetch, build, check and",
        "cover, hand-back, plus Python and Chromium start-up); `start` is the builder's part",
        "of StartBuild (source zip, data-role session, links); `unpack and publish` is",
        "build_events' (or the poller's) part. CodeBuild's own start and image pull are not",
        'measurable here: docs/operations.md, "Preview latency and build cost on AWS".',
        "",
        "| build | " + " | ".join(steps) + " |",
        "|---|" + "---|" * len(steps),
    ]
    for name, row in result["after"].items():
        lines.append(f"| {name} | " + " | ".join(f"{row.get(s, 0):.2f}" for s in steps) + " |")
    old = result["before (old buildspec, after provisioning)"]
    lines += [
        "",
        f"The old buildspec's own steps, after CodeBuild provisioned a SMALL instance: "
        f"`npm ci` from a warm npm cache {old['npm ci']:.2f} s, `vite build` "
        f"{old['vite build']:.2f} s (no check, no cover).",
    ]
    replace_section("aws-build", lines)


if __name__ == "__main__":
    main()
