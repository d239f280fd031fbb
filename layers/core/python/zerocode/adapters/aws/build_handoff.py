"""What an AWS build and the platform hand each other: names and bounds, in one place.

The build holds no AWS credentials (docs/builds.md, "AWS builds"). It gets one presigned GET
of its source zip (the only link in its build record); inside the zip, :data:`HANDOFF_FILE`
carries a presigned DELETE of that zip (used as soon as it is downloaded, so the record's
link dies with it) and a presigned PUT of the one archive it sends back. The archive is a tar
of :data:`ARCHIVE_ROOT`: the built site under ``dist/``, the runtime check's result, the
cover and the tail of the build's log. The platform unpacks it by the strict rules of
:mod:`zerocode.publishing.output_archive`; every name below is what it looks for.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HANDOFF_FILE = ".zerocode/handoff.json"  # in the source zip: {"output": PUT, "done": DELETE}
PICKER_IN_SOURCE = ".zerocode/picker.js"  # a preview's element picker, sent with its source
# The app's data model (never one of its site's files), for the build's own checks of a
# data app (zerocode/buildbox/box_data.py): the box takes it out before building.
DATA_MODEL_IN_SOURCE = ".zerocode/data-model.json"
ARCHIVE_ROOT = "out"
SITE_DIR = "dist"  # out/dist/: the site
CHECK_FILE = "check.json"  # out/check.json: {"checked": bool, "problems": [str]}
COVER_FILE = "cover.png"  # out/cover.png: the build's screenshot (previews too)
LOG_FILE = "log.txt"  # out/log.txt: the tail of what the build printed
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
MAX_ACCEPTANCE_BYTES = 256 << 10
MAX_CHECK_BYTES = 64 << 10
MAX_COVER_BYTES = 4 << 20
MAX_LOG_BYTES = 16 << 10
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ARCHIVE_TYPE = "application/x-tar"  # the Content-Type the PUT link is signed for
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


def session_policy(
    bucket: str,
    source_key: str,
    staging_key: str,
    *,
    partition: str = "aws",
    region: str = "us-east-1",
) -> dict[str, Any]:
    """The policy of the session that signs one build's links: read and delete its own
    source, write its own staging archive, and the bucket's KMS key only through S3."""
    arn = f"arn:{partition}:s3:::{bucket}/"
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ReadAndDropOwnSource",
                "Effect": "Allow",
                "Action": ["s3:GetObject", "s3:DeleteObject"],
                "Resource": arn + source_key,
            },
            {
                "Sid": "WriteOwnOutputArchive",
                "Effect": "Allow",
                "Action": "s3:PutObject",
                "Resource": arn + staging_key,
            },
            {
                "Sid": "BucketKeyThroughS3",
                "Effect": "Allow",
                "Action": ["kms:Decrypt", "kms:GenerateDataKey"],
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
