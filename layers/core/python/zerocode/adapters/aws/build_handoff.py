"""What an AWS build and the platform hand each other: names and bounds, in one place.

No link is in a build's record (docs/builds.md, "AWS builds"). CodeBuild runs each build
under a session of the project's role named after the build (``AWSCodeBuild-{uuid}``), and
that role may read and delete only objects under ``sources/${aws:userid}/``: its own
session's prefix (:func:`build_identity`, :func:`source_key`). The platform starts the run,
then puts its source zip there; the box asks STS who it is and fetches it. Inside the zip,
:data:`HANDOFF_FILE` carries a presigned POST for the one archive it sends back, bounded in
size (:data:`MAX_OUTPUT_BYTES`) and signed by a session that can write that one key. The
archive is a tar of :data:`ARCHIVE_ROOT`: the built site under ``dist/``, the runtime
check's result, the cover, a deploy's look at its page for its publish report and the tail
of the build's log. The platform unpacks it by the
strict rules of :mod:`zerocode.publishing.output_archive`; every name below is what it
looks for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HANDOFF_FILE = ".zerocode/handoff.json"  # in the source zip: {"output": {"url", "fields"}}
SOURCES = "sources/"  # sources/{identity}/{appId}/{runId}.zip
# What the project role may read and delete (infra): IAM puts the asking session's
# ``{role id}:{session name}`` for the variable, so each run reaches its own prefix only.
OWN_SOURCES = SOURCES + "${aws:userid}/*"
# How CodeBuild names its role's session for a run (CloudTrail shows the principal
# ``{role id}:AWSCodeBuild-{build uuid}``); the box says so loudly should it ever differ.
CODEBUILD_SESSION = "AWSCodeBuild-"
BUCKET_VARIABLE = "ZEROCODE_SOURCE_BUCKET"  # a bucket's name: no capability
PICKER_IN_SOURCE = ".zerocode/picker.js"  # a preview's element picker, sent with its source
# The app's data model (never one of its site's files), for the build's own checks of a
# data app (zerocode/buildbox/box_data.py): the box takes it out before building.
DATA_MODEL_IN_SOURCE = ".zerocode/data-model.json"
ARCHIVE_ROOT = "out"
SITE_DIR = "dist"  # out/dist/: the site
CHECK_FILE = "check.json"  # out/check.json: {"checked": bool, "problems": [str]}
COVER_FILE = "cover.png"  # out/cover.png: the build's screenshot (previews too)
LOG_FILE = "log.txt"  # out/log.txt: the tail of what the build printed
# out/report.json: a deploy build's browser look at its home page, for the publish report
# (zerocode/buildbox/box_report.py writes it; adapters/aws/build_report.py reads it)
REPORT_FILE = "report.json"
COVER_PATH = "__zerocode/cover.png"  # where the cover is published, inside the site
PLATFORM_DIR = "__zerocode/"  # the platform's part of a site; an app's own files never go here

# A checks run (ZEROCODE_TASK=checks: an app's acceptance checks against a build's output,
# zerocode/buildbox/box_checks.py): its source is that output under SITE_IN_SOURCE and the
# checks; it hands back their verdicts and the failures' screenshots, no site.
TASK_VARIABLE, TASK_CHECKS = "ZEROCODE_TASK", "checks"
SITE_IN_SOURCE = "site/"
CHECKS_IN_SOURCE = ".zerocode/checks.json"  # {"checks": [...], "platform": [...], "seconds"}
ACCEPTANCE_FILE = "acceptance.json"  # out/acceptance.json: {"results": [...], "whyNotRun"}
SHOTS_DIR = "shots"  # out/shots/{check id}.png: a failed check's screenshot

MAX_SOURCE_BYTES = 64 << 20
# What the output POST accepts (its policy's content-length-range): the archive of a site
# the platform would unpack at all (output_archive.MAX_BYTES) and its tar headers.
MAX_OUTPUT_BYTES = 128 << 20
MAX_ACCEPTANCE_BYTES = 256 << 10
MAX_CHECK_BYTES = 64 << 10
MAX_REPORT_BYTES = 1 << 20  # links (2,000 at most), console lines, axe's violations
MAX_COVER_BYTES = 4 << 20
MAX_LOG_BYTES = 16 << 10
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ARCHIVE_TYPE = "application/x-tar"  # the Content-Type the output POST is signed for
MAX_PROBLEMS, MAX_PROBLEM_CHARS = 10, 300


def check_problems(raw: bytes | None) -> list[str] | None:
    """A check result as the platform reads it: the problems found (strings, bounded), or
    None when the page was not checked. Anything malformed or too large is "not checked":
    the result is the build's word, and the build ran the app's code."""
    if raw is None or len(raw) > MAX_CHECK_BYTES:
        return None
    try:
        found = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(found, dict) or found.get("checked") is not True:
        return None
    problems = found.get("problems")
    if not isinstance(problems, list) or not all(isinstance(p, str) for p in problems):
        return None
    return [p[:MAX_PROBLEM_CHARS] for p in problems[:MAX_PROBLEMS]]


def build_identity(role_id: str, runner_id: str) -> str:
    """The ``aws:userid`` of a CodeBuild run's role session: the role's unique id and the
    session CodeBuild names after the run (its id is ``{project}:{uuid}``, or an ARN ending
    so)."""
    return f"{role_id}:{CODEBUILD_SESSION}{runner_id.rsplit(':', 1)[-1]}"


def run_of_identity(identity: str) -> str | None:
    """The build uuid a session's ``aws:userid`` names, or None if it is not a CodeBuild
    run's session."""
    session = identity.rpartition(":")[2]
    return (
        session.removeprefix(CODEBUILD_SESSION) if session.startswith(CODEBUILD_SESSION) else None
    )


def source_key(identity: str, app_id: str, run_id: str) -> str:
    """Where one run's source zip is: under its own session's prefix, which only that
    session of the project's role may read (infra/zerocode_infra/builds.py)."""
    return f"{SOURCES}{identity}/{app_id}/{run_id}.zip"


def session_policy(
    bucket: str,
    staging_key: str,
    *,
    partition: str = "aws",
    region: str = "us-east-1",
) -> dict[str, Any]:
    """The policy of the session that signs one build's output POST: write its own staging
    archive, with the bucket's KMS key only through S3; nothing else."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "WriteOwnOutputArchive",
                "Effect": "Allow",
                "Action": "s3:PutObject",
                "Resource": f"arn:{partition}:s3:::{bucket}/{staging_key}",
            },
            {
                "Sid": "BucketKeyThroughS3",
                "Effect": "Allow",
                "Action": "kms:GenerateDataKey",
                "Resource": "*",
                "Condition": {"StringEquals": {"kms:ViaService": f"s3.{region}.amazonaws.com"}},
            },
        ],
    }


def phases_said(build: dict[str, Any]) -> str:
    """What CodeBuild says about each phase that did not succeed, and where the full log is."""
    lines = []
    for phase in build.get("phases", []):
        status = phase.get("phaseStatus")
        if status and status != "SUCCEEDED":
            contexts = "; ".join(
                c.get("message", "") for c in phase.get("contexts", []) if c.get("message")
            )
            lines.append(f"{phase.get('phaseType')}: {status} {contexts}".rstrip())
    link = build.get("logs", {}).get("deepLink")
    if link:
        lines.append(f"full log: {link}")
    return "\n".join(lines)


def read_text(path: Path, limit: int) -> str:
    if not path.is_file():
        return ""
    with path.open("rb") as f:
        return f.read(limit).decode("utf-8", "replace")


def is_png(path: Path) -> bool:
    if not path.is_file() or path.stat().st_size > MAX_COVER_BYTES:
        return False
    with path.open("rb") as f:
        return f.read(len(PNG_MAGIC)) == PNG_MAGIC


def stored_check(path: Path) -> dict[str, Any]:
    """The build's check result as kept in ``checks/``: only what the platform reads."""
    small = path.is_file() and path.stat().st_size <= MAX_CHECK_BYTES
    raw = path.read_bytes() if small else None
    problems = check_problems(raw)
    return {"checked": problems is not None, "problems": problems or []}
