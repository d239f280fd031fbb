"""The runtime check on AWS: what the build's own browser found.

No browser runs in the API function; each build checks its own output inside CodeBuild
(zerocode.buildbox) and the platform keeps the result at ``checks/{appId}/{buildId}.json``
(:mod:`.codebuild_builder`). This adapter reads it, so the turn repairs runtime errors on
AWS exactly as locally (engine/repair.py). A build whose page could not be checked, or
whose result is missing, has no problems to report: the check's own trouble never fails a
turn.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.build_handoff import MAX_CHECK_BYTES, check_problems
from zerocode.adapters.aws.errors import error_code
from zerocode.apps.records import App
from zerocode.apps.workspace import check_app_id
from zerocode.publishing.builds import Build, BuildState

log = logging.getLogger(__name__)


class BuildCheckResult:
    """:class:`zerocode.engine.runtime_check.RuntimeCheck` from the build's own result."""

    def __init__(self, s3: Any, bucket: str) -> None:
        self.s3, self.bucket = s3, bucket

    async def check(self, app: App, build: Build) -> list[str] | None:
        if build.state is not BuildState.SUCCEEDED:
            return None
        return await asyncio.to_thread(self.read, app.id, build.id)

    def read(self, app_id: str, build_id: str) -> list[str] | None:
        key = f"checks/{check_app_id(app_id)}/{check_app_id(build_id)}.json"
        try:
            body = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"]
            data = body.read(MAX_CHECK_BYTES + 1)
        except ClientError as exc:
            if error_code(exc) not in {"404", "NoSuchKey", "NotFound"}:
                log.warning("runtime check of build %s unreadable: %s", build_id, error_code(exc))
            return None
        return check_problems(data)
