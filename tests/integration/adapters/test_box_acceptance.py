"""Acceptance checks on AWS (issue 42, point 1): a checks run of the build box, as CodeBuild
runs it. S3, STS and IAM on moto's server; CodeBuild the stand-in (tests/aws_standins.py),
whose builds run the buildspec's one command here with the real in-box program and Chromium.
The verdicts come back through the one-archive hand-off and are read by the platform's
rules; a hostile box's verdicts are never "passed" unless well formed; a run the turn stops,
or that runs out of time, is stopped on CodeBuild."""

from __future__ import annotations

import asyncio
import json
import tarfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from tests.aws_standins import BuildRole, CodeBuildRun, StandIns, run_the_buildspec
from tests.integration.adapters.test_buildbox import moto_url  # noqa: F401 - a fixture
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.aws.build_acceptance import BoxAcceptance, read_verdicts
from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder
from zerocode.apps.records import App, CodeGenType
from zerocode.engine.acceptance import parse_check
from zerocode.engine.check_suite import CheckResult, StoredCheck
from zerocode.entrypoints import build_events
from zerocode.publishing.builds import Build, BuildPurpose, BuildState, new_build_id

PAGE = b"""<!doctype html><html lang="en"><head><title>Counter</title></head><body>
<h1>Counter</h1><p id="count">0</p>
<button type="button" id="add">Add</button><button type="button">Try it</button>
<script>
document.getElementById('add').addEventListener('click', () => {
  const shown = document.getElementById('count');
  shown.textContent = String(Number(shown.textContent) + 1);
});
</script></body></html>"""
COUNTS = {
    "description": "Add counts the clicks",
    "steps": [{"click": {"role": "button", "name": "Add"}}],
    "expect": [{"text": {"css": "#count"}, "equals": "1"}],
}
TRY_IT = {
    "description": "Try it shows a greeting",
    "steps": [{"click": {"role": "button", "name": "Try it"}}],
    "expect": [{"visible": {"text": "Hello"}}],
}


def stored(n: int, raw: dict[str, Any]) -> StoredCheck:
    return StoredCheck(id=f"c{n}", check=parse_check(raw), added_turn=1)


@pytest.fixture
def aws(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:  # noqa: F811
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    standins = StandIns().start()
    standins.codebuild.add_project("zc-project", {})
    s3 = boto3.client("s3", endpoint_url=moto_url)
    bucket = f"zc-builds-{new_build_id()[-6:]}"
    s3.create_bucket(Bucket=bucket)
    role = boto3.client("iam", endpoint_url=moto_url).create_role(
        RoleName=f"data-{bucket}", AssumeRolePolicyDocument="{}"
    )["Role"]["Arn"]
    codebuild = boto3.client(
        "codebuild",
        endpoint_url=standins.client_environment()["AWS_ENDPOINT_URL_CODEBUILD"],
        config=Config(proxies={"http": standins.proxy_url}),
    )
    project_role = BuildRole.made(moto_url, f"project-{bucket}")
    builder = CodeBuildBuilder(
        codebuild,
        s3,
        "zc-project",
        bucket,
        sts=boto3.client("sts", endpoint_url=moto_url),
        data_role_arn=role,
        build_role_id=project_role.role_id,
        poll_seconds=0.2,
    )
    try:
        yield {
            "s3": s3,
            "bucket": bucket,
            "builder": builder,
            "standins": standins,
            "role": project_role,
        }
    finally:
        standins.stop()


def succeeded_build() -> Build:
    return Build(
        id=new_build_id(),
        app_id="app1",
        purpose=BuildPurpose.PREVIEW,
        kind=CodeGenType.HTML,
        source_digest="d",
        state=BuildState.SUCCEEDED,
    )


def published(aws: dict[str, Any], files: dict[str, bytes]) -> Build:
    """A succeeded build whose output is in the bucket, as a finished build leaves it."""
    build = succeeded_build()
    for name, data in files.items():
        aws["s3"].put_object(Bucket=aws["bucket"], Key=f"builds/app1/{build.id}/{name}", Body=data)
    return build


def runner(aws: dict[str, Any], **kwargs: Any) -> BoxAcceptance:
    return BoxAcceptance(aws["builder"], shown=lambda app: None, models=lambda: None, **kwargs)


def keys(aws: dict[str, Any], prefix: str) -> list[str]:
    found = aws["s3"].list_objects_v2(Bucket=aws["bucket"], Prefix=prefix).get("Contents", [])
    return [o["Key"] for o in found]


def stopped_while_waiting(aws: dict[str, Any], wait: Callable[[], Awaitable[object]]) -> str:
    """Start ``wait`` (which starts one CodeBuild run and waits for it), cancel it once
    CodeBuild has the run, as a stopped turn is; the run it started must be stopped, and its
    source (never fetched: nobody plays CodeBuild here) deleted. The run's id."""
    codebuild = aws["standins"].codebuild
    started = threading.Event()
    codebuild.on_start = lambda run: started.set()

    async def stopped_midway() -> None:
        task = asyncio.ensure_future(wait())
        assert await asyncio.to_thread(started.wait, 30)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(stopped_midway())
    (run,) = codebuild.runs()
    assert codebuild.stopped == [run.id] and run.status == "STOPPED"
    assert keys(aws, "sources/") == []
    return str(run.id)


def stopped_when_late(aws: dict[str, Any], first: str) -> None:
    codebuild = aws["standins"].codebuild
    second = next(r for r in codebuild.runs() if r.id != first)
    assert codebuild.stopped == [first, second.id] and second.status == "STOPPED"


APP = App(id="app1", owner="u1", name="Counter", code_gen_type=CodeGenType.HTML, init_prompt="")


def test_the_suite_runs_in_the_box_and_each_verdict_comes_back(
    aws: dict[str, Any], tmp_path: Path
) -> None:
    chromium = chromium_or_skip()
    played: list[str] = []

    def play(run: CodeBuildRun) -> None:
        done = run_the_buildspec(
            run,
            role=aws["role"],
            toolchain=tmp_path / "none",
            chromium=chromium,
            workdir=tmp_path / run.id[-8:],
        )
        played.append(done.stdout + done.stderr)
        aws["standins"].codebuild.finish(run.id, "SUCCEEDED" if done.returncode == 0 else "FAILED")

    aws["standins"].codebuild.on_start = play
    build = published(aws, {"index.html": PAGE})
    told: list[CheckResult] = []
    outcome = asyncio.run(
        runner(aws).run(APP, build, [stored(1, COUNTS), stored(2, TRY_IT)], 60, told.append)
    )
    assert outcome.why_not_run is None, played
    (took,) = [line for line in played[0].splitlines() if "zerocode: checks took" in line]
    print(took)  # the figure docs/operations.md quotes ("Acceptance checks on AWS")
    passed, failed = outcome.results
    assert (passed.check_id, passed.status) == ("c1", "passed")
    assert (failed.check_id, failed.status) == ("c2", "failed")
    assert failed.evidence is not None and failed.evidence.where == "expect[0]"
    assert "Hello" in failed.evidence.expected
    assert failed.evidence.shot and failed.screenshot is not None
    assert failed.screenshot.startswith(handoff.PNG_MAGIC)
    assert [r.check_id for r in told] == ["c1", "c2"]
    (run,) = aws["standins"].codebuild.runs()
    assert run.variables[handoff.TASK_VARIABLE] == handoff.TASK_CHECKS
    assert run.variables["ZEROCODE_CHECKED_BUILD"] == build.id
    # The run's source and hand-back are gone; the checked build's output is untouched.
    assert keys(aws, "sources/") == [] and keys(aws, "staging/") == []
    assert keys(aws, f"builds/app1/{build.id}/") == [f"builds/app1/{build.id}/index.html"]
    # Its completion event is not a build's: build_events leaves it to the waiting suite.
    said = build_events.handle(None, run.event())  # type: ignore[arg-type]
    assert said == {
        "result": "ignored",
        "reason": "a checks run: the suite that started it reads it",
    }


def test_a_stopped_turn_stops_its_checks_run_and_one_out_of_time_is_stopped_too(
    aws: dict[str, Any],
) -> None:
    """Nobody plays CodeBuild here: the run stays in progress until it is stopped."""
    build = published(aws, {"index.html": PAGE})
    first = stopped_while_waiting(aws, lambda: runner(aws).run(APP, build, [stored(1, COUNTS)], 60))
    late = asyncio.run(runner(aws, start_seconds=0.5).run(APP, build, [stored(1, COUNTS)], 0.5))
    assert [r.status for r in late.results] == ["not_run"]
    assert late.why_not_run == "the checks run did not finish within 1 s"
    stopped_when_late(aws, first)


def test_nothing_to_check_is_not_run_and_says_why(aws: dict[str, Any]) -> None:
    checks = [stored(1, COUNTS)]
    gone = succeeded_build()  # its output never written
    failed = Build(**{**gone.__dict__, "state": BuildState.FAILED})
    for build, why in (
        (None, "the preview shows no build"),
        (failed, "the build did not succeed"),
        (gone, "the build's output is gone"),
    ):
        outcome = asyncio.run(runner(aws).run(APP, build, checks))
        assert outcome.why_not_run == why and outcome.results[0].status == "not_run"
    assert aws["standins"].codebuild.runs() == []


def hand_back(tmp: Path, body: object, shots: dict[str, bytes] | None = None) -> Path:
    out = tmp / "out"
    out.mkdir()
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    (out / handoff.ACCEPTANCE_FILE).write_bytes(raw)
    for name, data in (shots or {}).items():
        (out / handoff.SHOTS_DIR).mkdir(exist_ok=True)
        (out / handoff.SHOTS_DIR / name).write_bytes(data)
    return out


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"not json", "the checks run's verdicts could not be read"),
        (b"x" * (handoff.MAX_ACCEPTANCE_BYTES + 1), "the checks run's verdicts could not be read"),
        ({"results": "all passed"}, "the checks run's verdicts could not be read"),
        ({"results": [{"id": "c1", "status": "PASSED"}]}, "did not report every check"),
        ({"results": [{"id": "c9", "status": "passed"}]}, "did not report every check"),
        ({"results": [{"id": ["c1"], "status": "passed"}]}, "did not report every check"),
    ],
)
def test_a_hostile_box_cannot_pass_a_check_by_a_malformed_verdict(
    tmp_path: Path, body: object, why: str
) -> None:
    outcome = read_verdicts(hand_back(tmp_path, body), [stored(1, COUNTS)])
    assert [r.status for r in outcome.results] == ["not_run"]
    assert outcome.why_not_run is not None and why in outcome.why_not_run


def test_the_box_verdicts_are_bounded_and_a_screenshot_must_be_a_small_png(tmp_path: Path) -> None:
    body = {
        "results": [
            {"id": "c1", "status": "passed"},
            {"id": "c1", "status": "failed"},  # a second verdict for c1 is ignored
            {
                "id": "c2",
                "status": "failed",
                "evidence": {"where": "w" * 500, "expected": "e", "actual": "a" * 10_000},
                "shot": True,
            },
            {
                "id": "c3",
                "status": "failed",
                "evidence": {"where": "expect[0]", "expected": "e", "actual": "a"},
                "shot": True,
            },
        ],
        "whyNotRun": "  \n",
    }
    shots = {"c2.png": b"GIF89a not a png", "c3.png": handoff.PNG_MAGIC + b"\0" * 64}
    checks = [stored(1, COUNTS), stored(2, TRY_IT), stored(3, TRY_IT)]
    outcome = read_verdicts(hand_back(tmp_path, body, shots), checks)
    first, second, third = outcome.results
    assert first.status == "passed" and outcome.why_not_run is None
    assert second.evidence is not None and len(second.evidence.where) == 40
    assert len(second.evidence.actual) == 1_500
    assert second.screenshot is None and not second.evidence.shot
    assert third.screenshot == shots["c3.png"] and third.evidence is not None
    assert third.evidence.shot


def test_an_archive_that_breaks_the_rules_is_not_run(aws: dict[str, Any], tmp_path: Path) -> None:
    """A box that hands back a link instead of its verdicts: refused by the archive rules,
    so nothing is read through it and the checks are not run."""
    codebuild = aws["standins"].codebuild
    builder: CodeBuildBuilder = aws["builder"]

    def hostile(run: CodeBuildRun) -> None:
        out = tmp_path / "hostile" / handoff.ARCHIVE_ROOT
        out.mkdir(parents=True)
        (out / handoff.ACCEPTANCE_FILE).symlink_to("/etc/passwd")
        archive = tmp_path / "hostile.tar"
        with tarfile.open(archive, "w") as tar:
            tar.add(out, arcname=handoff.ARCHIVE_ROOT)
        app_id, run_id = run.variables["ZEROCODE_APP_ID"], run.variables["ZEROCODE_BUILD_ID"]
        aws["s3"].put_object(
            Bucket=aws["bucket"],
            Key=builder.staging_key(app_id, run_id),
            Body=archive.read_bytes(),
        )
        codebuild.finish(run.id, "SUCCEEDED")

    codebuild.on_start = hostile
    build = published(aws, {"index.html": PAGE})
    outcome = asyncio.run(runner(aws).run(APP, build, [stored(1, COUNTS)], 60))
    assert [r.status for r in outcome.results] == ["not_run"]
    assert outcome.why_not_run == "the checks run handed back no verdicts (SUCCEEDED)"
    assert keys(aws, "staging/") == []


def test_a_build_whose_turn_is_stopped_or_out_of_time_is_stopped_on_codebuild(
    aws: dict[str, Any],
) -> None:
    """Issue 42, point 3: cancel and supersede stop the CodeBuild build (a superseded turn
    is cancelled as a stopped one is); so does a wait that runs out."""
    from zerocode.apps.workspace import Snapshot
    from zerocode.publishing.builds import BuildJob

    builder: CodeBuildBuilder = aws["builder"]
    builder.waiter.hear_seconds = 0.1

    def job() -> BuildJob:
        return BuildJob(
            app_id="app1",
            build_id=new_build_id(),
            kind=CodeGenType.HTML,
            source=Snapshot.of({"index.html": PAGE}),
            preview=True,
        )

    first = stopped_while_waiting(aws, lambda: builder.build(job()))
    builder.timeout_seconds = 0.3
    late = asyncio.run(builder.build(job()))
    assert not late.ok and "did not finish within" in (late.error or "")
    stopped_when_late(aws, first)
