"""The CodeBuild builder: S3 (moto) for sources and outputs, botocore Stubber where the exact
CodeBuild request or a failed build matters (moto ignores overrides and always succeeds),
and the buildspec's own commands run here with real npm."""

from __future__ import annotations

import asyncio
import io
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import boto3
import pytest
import yaml
from botocore.stub import ANY, Stubber

from tests.integration.test_vue_template_builds import created_files
from zerocode.adapters.codebuild_builder import BUILDSPEC, CodeBuildBuilder
from zerocode.apps import CodeGenType
from zerocode.builds import BuildJob, Snapshot, new_build_id
from zerocode.settings import Settings

BUCKET = "zc-builds"


@pytest.fixture
def s3(aws: None) -> Any:
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    return client


def codebuild_client() -> Any:
    return boto3.client("codebuild", region_name="us-east-1")


def job(kind: CodeGenType, files: dict[str, bytes], preview: bool = False) -> BuildJob:
    return BuildJob("app1", new_build_id(), kind, Snapshot.of(files), preview=preview)


def keys(s3: Any, prefix: str) -> list[str]:
    return [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix)
            .get("Contents", [])]


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
    assert page == b'<html><body><h1>Hi</h1><script src="__zerocode/picker.js" defer>' \
        b"</script></body></html>"
    about = s3.get_object(Bucket=BUCKET, Key=prefix + "about.html")["Body"].read()
    assert about.endswith(b'<script src="__zerocode/picker.js" defer></script>')
    script = s3.get_object(Bucket=BUCKET, Key=prefix + "__zerocode/picker.js")
    assert script["ContentType"] == "text/javascript" and b"zerocode" in script["Body"].read()
    deploy = job(CodeGenType.MULTI_FILE, files)
    builder.start(deploy)
    published = f"builds/app1/{deploy.build_id}/"
    assert sorted(keys(s3, published)) == [published + "about.html", published + "index.html"]
    assert s3.get_object(Bucket=BUCKET, Key=published + "index.html")["Body"].read() == \
        files["index.html"]


def test_a_vue_preview_sends_the_picker_with_its_source(s3: Any) -> None:
    client = codebuild_client()
    builder = CodeBuildBuilder(client, s3, "zc-project", BUCKET)
    vue = job(CodeGenType.VUE_PROJECT, {"package.json": b"{}"}, preview=True)
    with Stubber(client) as stub:
        stub.add_response("start_build", {"build": {"id": "zc-project:1"}}, {
            "projectName": "zc-project", "idempotencyToken": vue.build_id,
            "sourceTypeOverride": "S3", "sourceLocationOverride": ANY,
            "buildspecOverride": BUILDSPEC, "artifactsOverride": ANY,
            "environmentVariablesOverride": [
                {"name": "ZEROCODE_APP_ID", "value": "app1", "type": "PLAINTEXT"},
                {"name": "ZEROCODE_BUILD_ID", "value": vue.build_id, "type": "PLAINTEXT"},
                {"name": "ZEROCODE_PREVIEW", "value": "1", "type": "PLAINTEXT"}]})
        builder.start(vue)
        stub.assert_no_pending_responses()
    body = s3.get_object(Bucket=BUCKET, Key=f"sources/app1/{vue.build_id}.zip")["Body"].read()
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert sorted(archive.namelist()) == [".zerocode/picker.js", "package.json"]


def test_a_vue_build_is_started_with_its_own_source_and_output_prefix(s3: Any) -> None:
    client = codebuild_client()
    builder = CodeBuildBuilder(client, s3, "zc-project", BUCKET)
    vue = job(CodeGenType.VUE_PROJECT, {"package.json": b"{}", "index.html": b"<div>"})
    with Stubber(client) as stub:
        stub.add_response("start_build", {"build": {"id": "zc-project:1234"}}, {
            "projectName": "zc-project", "idempotencyToken": vue.build_id,
            "sourceTypeOverride": "S3",
            "sourceLocationOverride": f"{BUCKET}/sources/app1/{vue.build_id}.zip",
            "buildspecOverride": BUILDSPEC,
            "artifactsOverride": {
                "type": "S3", "location": BUCKET, "path": "builds/app1", "name": vue.build_id,
                "namespaceType": "NONE", "packaging": "NONE", "encryptionDisabled": False,
                "overrideArtifactName": False},
            "environmentVariablesOverride": ANY})
        assert builder.start(vue) == "zc-project:1234"
        stub.assert_no_pending_responses()
    body = s3.get_object(Bucket=BUCKET, Key=f"sources/app1/{vue.build_id}.zip")["Body"].read()
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert sorted(archive.namelist()) == ["index.html", "package.json"]


def test_outcomes_follow_codebuild_and_success_needs_the_output(s3: Any) -> None:
    client = codebuild_client()
    builder = CodeBuildBuilder(client, s3, "zc", BUCKET)
    bid = new_build_id()
    with Stubber(client) as stub:
        stub.add_response("batch_get_builds", {"builds": [
            {"id": "zc:1", "buildStatus": "IN_PROGRESS"}]}, {"ids": ["zc:1"]})
        stub.add_response("batch_get_builds", {"builds": [
            {"id": "zc:1", "buildStatus": "SUCCEEDED"}]}, {"ids": ["zc:1"]})
        stub.add_response("batch_get_builds", {"builds": [
            {"id": "zc:1", "buildStatus": "SUCCEEDED"}]}, {"ids": ["zc:1"]})
        stub.add_response("batch_get_builds", {"builds": [{
            "id": "zc:2", "buildStatus": "FAILED", "logs": {"deepLink": "https://logs/x"},
            "phases": [{"phaseType": "INSTALL", "phaseStatus": "SUCCEEDED"},
                       {"phaseType": "BUILD", "phaseStatus": "FAILED", "contexts": [
                           {"statusCode": "COMMAND_EXECUTION_ERROR",
                            "message": "Error while executing command: npm run build"}]}]}]},
            {"ids": ["zc:2"]})
        assert builder.outcome("app1", bid, "zc:1") is None  # still running
        missing = builder.outcome("app1", bid, "zc:1")
        assert missing is not None and not missing.ok and "no index.html" in (missing.error or "")
        s3.put_object(Bucket=BUCKET, Key=f"builds/app1/{bid}/index.html", Body=b"<div>")
        done = builder.outcome("app1", bid, "zc:1")
        assert done is not None and done.ok and done.output == f"s3://{BUCKET}/builds/app1/{bid}/"
        failed = builder.outcome("app1", bid, "zc:2")
        assert failed is not None and not failed.ok and "FAILED" in (failed.error or "")
        assert "npm run build" in failed.log_tail and "https://logs/x" in failed.log_tail
        stub.assert_no_pending_responses()


def test_build_polls_until_codebuild_finishes(s3: Any) -> None:
    client = codebuild_client()
    naps: list[float] = []

    async def nap(seconds: float) -> None:
        naps.append(seconds)

    builder = CodeBuildBuilder(client, s3, "zc", BUCKET, poll_seconds=2, sleep=nap)
    vue = job(CodeGenType.VUE_PROJECT, {"package.json": b"{}"})
    with Stubber(client) as stub:
        stub.add_response("start_build", {"build": {"id": "zc:9"}}, None)
        for status in ("IN_PROGRESS", "IN_PROGRESS", "STOPPED"):
            stub.add_response("batch_get_builds", {"builds": [
                {"id": "zc:9", "buildStatus": status}]}, {"ids": ["zc:9"]})
        outcome = asyncio.run(builder.build(vue))
    assert not outcome.ok and "STOPPED" in (outcome.error or "") and naps == [2, 2, 2]


def test_delete_app_removes_sources_and_outputs_of_that_app_only(s3: Any) -> None:
    builder = CodeBuildBuilder(codebuild_client(), s3, "zc", BUCKET)
    for key in ("builds/app1/b1/index.html", "builds/app1/b2/a.js", "sources/app1/b1.zip",
                "builds/app10/b1/index.html"):
        s3.put_object(Bucket=BUCKET, Key=key, Body=b"x")
    assert builder.delete_app("app1") == 3
    assert keys(s3, "") == ["builds/app10/b1/index.html"]


def test_the_buildspec_builds_a_generated_vue_project(tmp_path: Path) -> None:
    """The buildspec's install and build commands, run by bash as CodeBuild runs them."""
    spec = yaml.safe_load(BUILDSPEC)
    assert spec["phases"]["install"]["runtime-versions"]["nodejs"] >= 20
    assert spec["artifacts"]["base-directory"] == "dist"
    for path, content in created_files("A Vue todo list").items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(content, encoding="utf-8")
    (tmp_path / ".zerocode").mkdir()
    (tmp_path / ".zerocode" / "picker.js").write_text("// picker")
    env = f"export npm_config_cache={Settings().npm_cache} ZEROCODE_PREVIEW=1"
    for phase in ("install", "build", "post_build"):
        for command in spec["phases"][phase]["commands"]:
            done = subprocess.run(["bash", "-c", f"{env}; {command}"],
                                  cwd=tmp_path, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    page = (tmp_path / "dist" / "index.html").read_text()
    assert page.count('<script src="__zerocode/picker.js" defer></script></body>') == 1
    assert (tmp_path / "dist" / "__zerocode" / "picker.js").read_text() == "// picker"
