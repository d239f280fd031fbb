"""AWS builds on CodeBuild; outputs in S3 at ``builds/{appId}/{buildId}/``.

A Vue project's snapshot is zipped to ``sources/{appId}/{buildId}.zip`` and CodeBuild is
started on it with the buildspec below (Node 20, ``npm ci`` or ``npm install``, ``npm run
build``, ``dist/index.html`` checked) and the build's own output prefix as its artifact
location, so a build can only ever write its own immutable prefix. The project (in infra)
caches npm downloads in S3. Completion arrives as an EventBridge "CodeBuild Build State
Change" (``functions/build_events``); :meth:`outcome` is also the polling fallback. A
succeeded build counts only once its ``index.html`` is seen in the bucket.

HTML and multi-file apps have nothing to compile: their files are checked and copied to
the output prefix directly, and the outcome is known at once.

A preview build's pages get the console's element picker (``__zerocode/picker.js``, linked
relatively), because CloudFront serves previews from S3 as they are; deploy builds never
carry it.
"""

from __future__ import annotations

import asyncio
import io
import mimetypes
import time
import zipfile
from collections.abc import Awaitable, Callable
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws_errors import error_code
from zerocode.apps import CodeGenType
from zerocode.builds import BuildJob, BuildOutcome
from zerocode.picker import PICKER, PICKER_FILE, with_picker
from zerocode.workspace import check_app_id, clean_path

BUILDSPEC = """\
version: 0.2
env:
  shell: bash
phases:
  install:
    runtime-versions:
      nodejs: 20
    commands:
      - if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --prefer-offline;
        else npm install --no-audit --no-fund --prefer-offline; fi
  build:
    commands:
      - npm run build
      - test -f dist/index.html || { echo "build finished but dist/index.html is missing"; exit 1; }
  post_build:
    commands:
      - if [ "$ZEROCODE_PREVIEW" = 1 ] && [ -f dist/index.html ]; then
        mkdir -p dist/__zerocode && cp .zerocode/picker.js dist/__zerocode/picker.js &&
        sed -i 's#</body>#<script src="__zerocode/picker.js" defer></script></body>#'
        dist/index.html; fi
artifacts:
  base-directory: dist
  files:
    - '**/*'
cache:
  paths:
    - /root/.npm/**/*
"""
_FAILED = {"FAILED", "FAULT", "STOPPED", "TIMED_OUT"}
_MISSING = {"404", "NoSuchKey", "NotFound"}


class CodeBuildBuilder:
    def __init__(self, codebuild: Any, s3: Any, project: str, bucket: str, *,
                 poll_seconds: float = 5.0, timeout_seconds: float = 14 * 60,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.codebuild, self.s3, self.project, self.bucket = codebuild, s3, project, bucket
        self.poll_seconds, self.timeout_seconds, self.sleep = poll_seconds, timeout_seconds, sleep

    def output_prefix(self, app_id: str, build_id: str) -> str:
        return f"builds/{check_app_id(app_id)}/{check_app_id(build_id)}/"

    async def build(self, job: BuildJob) -> BuildOutcome:
        """Start the build and poll it (a chat turn's preview waits for its build)."""
        started = await asyncio.to_thread(self.start, job)
        if isinstance(started, BuildOutcome):
            return started
        deadline = time.monotonic() + self.timeout_seconds
        while time.monotonic() < deadline:
            await self.sleep(self.poll_seconds)
            done = await asyncio.to_thread(self.outcome, job.app_id, job.build_id, started)
            if done is not None:
                return done
        return BuildOutcome(False, "", None, f"CodeBuild did not finish within "
                                             f"{self.timeout_seconds:.0f} s")

    def start(self, job: BuildJob) -> str | BuildOutcome:
        if job.kind is not CodeGenType.VUE_PROJECT:
            return self._copy_static(job)
        source_key = f"sources/{check_app_id(job.app_id)}/{check_app_id(job.build_id)}.zip"
        extra = {".zerocode/picker.js": PICKER.read_bytes()} if job.preview else {}
        self.s3.put_object(Bucket=self.bucket, Key=source_key, Body=_zip(job, extra),
                           ContentType="application/zip")
        answer = self.codebuild.start_build(
            projectName=self.project, idempotencyToken=job.build_id,
            sourceTypeOverride="S3", sourceLocationOverride=f"{self.bucket}/{source_key}",
            buildspecOverride=BUILDSPEC,
            artifactsOverride={
                "type": "S3", "location": self.bucket, "path": f"builds/{job.app_id}",
                "name": job.build_id, "namespaceType": "NONE", "packaging": "NONE",
                "encryptionDisabled": False, "overrideArtifactName": False},
            environmentVariablesOverride=[
                {"name": "ZEROCODE_APP_ID", "value": job.app_id, "type": "PLAINTEXT"},
                {"name": "ZEROCODE_BUILD_ID", "value": job.build_id, "type": "PLAINTEXT"},
                {"name": "ZEROCODE_PREVIEW", "value": "1" if job.preview else "0",
                 "type": "PLAINTEXT"}])
        return str(answer["build"]["id"])

    def outcome(self, app_id: str, build_id: str, runner_id: str) -> BuildOutcome | None:
        builds = self.codebuild.batch_get_builds(ids=[runner_id]).get("builds", [])
        if not builds:
            return BuildOutcome(False, "", None, f"CodeBuild has no build {runner_id}")
        build = builds[0]
        status = str(build.get("buildStatus", "IN_PROGRESS"))
        tail = _log_tail(build)
        if status == "SUCCEEDED":
            prefix = self.output_prefix(app_id, build_id)
            if not self._exists(prefix + "index.html"):
                return BuildOutcome(False, tail, None, "the build succeeded but its output "
                                                       "has no index.html")
            return BuildOutcome(True, tail, f"s3://{self.bucket}/{prefix}")
        if status in _FAILED:
            return BuildOutcome(False, tail, None, f"the project did not build ({status})")
        return None

    def delete_app(self, app_id: str) -> int:
        removed = 0
        for prefix in (f"builds/{check_app_id(app_id)}/", f"sources/{app_id}/"):
            paginator = self.s3.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                if keys:
                    self.s3.delete_objects(Bucket=self.bucket,
                                           Delete={"Objects": keys, "Quiet": True})
                    removed += len(keys)
        return removed

    def _copy_static(self, job: BuildJob) -> BuildOutcome:
        if "index.html" not in job.source.files:
            return BuildOutcome(False, "", None, "the app has no index.html yet")
        prefix = self.output_prefix(job.app_id, job.build_id)
        files = dict(job.source.files)
        if job.preview:
            files = {p: with_picker(d, relative=True) if p.endswith(".html") else d
                     for p, d in files.items()}
            files[PICKER_FILE] = PICKER.read_bytes()
        # index.html last: the output counts as complete once it is there.
        for path in sorted(files, key=lambda p: p == "index.html"):
            media = mimetypes.guess_type(path)[0] or "application/octet-stream"
            self.s3.put_object(Bucket=self.bucket, Key=prefix + clean_path(path),
                               Body=files[path], ContentType=media)
        return BuildOutcome(True, f"checked and copied {len(job.source.files)} file(s)",
                            f"s3://{self.bucket}/{prefix}")

    def _exists(self, key: str) -> bool:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return False
            raise
        return True


def _zip(job: BuildJob, extra: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(job.source.files):
            archive.writestr(clean_path(path), job.source.files[path])
        for path, data in extra.items():
            archive.writestr(path, data)
    return buffer.getvalue()


def _log_tail(build: dict[str, Any]) -> str:
    """What CodeBuild says about each phase that did not succeed, and where the full log is."""
    lines = []
    for phase in build.get("phases", []):
        status = phase.get("phaseStatus")
        if status and status != "SUCCEEDED":
            contexts = "; ".join(c.get("message", "") for c in phase.get("contexts", [])
                                 if c.get("message"))
            lines.append(f"{phase.get('phaseType')}: {status} {contexts}".rstrip())
    link = build.get("logs", {}).get("deepLink")
    if link:
        lines.append(f"full log: {link}")
    return "\n".join(lines)
