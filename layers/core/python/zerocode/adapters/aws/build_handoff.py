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

MAX_SOURCE_BYTES = 64 << 20
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
