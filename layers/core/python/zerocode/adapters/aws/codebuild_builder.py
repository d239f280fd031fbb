"""AWS builds on CodeBuild; outputs in S3 at ``builds/{appId}/{buildId}/``.

A Vue project is untrusted code, so its build holds no rights over anyone else's data
(docs/security.md, "AWS builds: scoped credentials"). The project's snapshot, made into
the platform's build tree (``toolchain.build_tree``: the app's sources with the platform's
package.json and vite.config.js) plus the toolchain's own package.json and lockfile under
``.zerocode/toolchain/``, is zipped to ``sources/{appId}/{buildId}.zip``. CodeBuild's own
role may not read it: the starter assumes the *build data role* with a session policy that
allows exactly ``s3:GetObject`` on that zip and ``s3:PutObject`` under the build's own
output prefix (:func:`session_policy`), and hands those short-lived credentials to this
build alone, in its environment overrides. The project has no source and no artifacts;
the buildspec below downloads the zip with the scoped credentials, installs the toolchain
with ``npm ci --ignore-scripts`` from the platform's lockfile and runs ``vite build`` with
every credential removed from the environment (the container's own role included), then
uploads ``dist/`` to the build's own prefix (``index.html`` last) with the scoped
credentials again. The project (in infra) caches npm downloads in S3; ``npm ci`` checks
every package against the lockfile's integrity hashes, so a cache entry cannot change what
a later build installs.

Completion arrives as an EventBridge "CodeBuild Build State Change" (``functions/
build_events``); :meth:`outcome` is also the polling fallback. A succeeded build counts
only once its ``index.html`` is seen in the bucket.

HTML and multi-file apps have nothing to compile: their files are checked and copied to
the output prefix directly, and the outcome is known at once.

A preview build's pages get the console's element picker (``__zerocode/picker.js``, linked
relatively), because CloudFront serves previews from S3 as they are; deploy builds never
carry it.
"""

from __future__ import annotations

import asyncio
import io
import json
import mimetypes
import time
import zipfile
from collections.abc import Awaitable, Callable
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import check_app_id, clean_path
from zerocode.publishing import toolchain
from zerocode.publishing.builds import BuildJob, BuildOutcome
from zerocode.publishing.picker import PICKER, PICKER_FILE, with_picker

# How long a build's scoped credentials last: the project's queued timeout plus its build
# timeout (15 + 15 minutes in infra), so they outlive any build that can still upload.
CREDENTIAL_SECONDS = 30 * 60
# Where the source zip carries the toolchain's package.json and lockfile.
TOOLCHAIN_DIR = ".zerocode/toolchain"
# The build's scoped credentials travel under these names (never AWS_*, so no tool picks
# them up by itself); only the two `aws s3 cp` steps map them to AWS_* for one command.
CREDENTIAL_VARIABLES = (
    "ZEROCODE_S3_ACCESS_KEY_ID",
    "ZEROCODE_S3_SECRET_ACCESS_KEY",
    "ZEROCODE_S3_SESSION_TOKEN",
)
# Everything that could give a build's install or compile step AWS rights: the scoped
# credentials, any AWS_* credentials, and the container's own role (CodeBuild serves it at
# 169.254.170.2$AWS_CONTAINER_CREDENTIALS_RELATIVE_URI).
_UNSET = (
    *CREDENTIAL_VARIABLES,
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
)
NO_CREDENTIALS = "env " + " ".join(f"-u {name}" for name in _UNSET)
# One `aws` command with the build's scoped credentials (the AWS CLI takes credentials from
# the environment before the container's role).
_SCOPED = (
    " ".join(f'AWS_{name.removeprefix("ZEROCODE_S3_")}="${name}"' for name in CREDENTIAL_VARIABLES)
    + " aws"
)
NPM_CI = "npm ci --ignore-scripts --no-audit --no-fund --prefer-offline"
VITE_BUILD = "node " + " ".join(toolchain.VITE_ARGS)

# Each command stands alone (a `cd` only in a subshell, no variable set for the next):
# `app/` is the project, `toolchain/` (outside it) the installed toolchain, linked as
# app/node_modules. Install and build run with no credentials; only the download and the
# upload (index.html last) use the build's scoped ones.
BUILDSPEC = f"""\
version: 0.2
env:
  shell: bash
phases:
  install:
    runtime-versions:
      nodejs: 20
    commands:
      - mkdir -p app toolchain && {_SCOPED} s3 cp --only-show-errors
        "$ZEROCODE_SOURCE_URI" source.zip && python3 -m zipfile -e source.zip app
        && rm source.zip
      - mv app/{TOOLCHAIN_DIR}/package.json app/{TOOLCHAIN_DIR}/package-lock.json toolchain/
        && rm -rf app/{TOOLCHAIN_DIR} app/node_modules && ln -s ../toolchain/node_modules
        app/node_modules
      - (cd toolchain && {{ {NO_CREDENTIALS} {NPM_CI}
        || {{ echo "npm ci failed; once more with an empty npm cache";
        {NO_CREDENTIALS} {NPM_CI} --cache "$(mktemp -d)"; }}; }})
  build:
    commands:
      - (cd app && {NO_CREDENTIALS} {VITE_BUILD})
      - test -f app/dist/index.html
        || {{ echo "build finished but dist/index.html is missing"; exit 1; }}
      - if [ "$ZEROCODE_PREVIEW" = 1 ]; then
        mkdir -p app/dist/__zerocode && cp app/.zerocode/picker.js app/dist/__zerocode/picker.js
        && sed -i 's#</body>#<script src="__zerocode/picker.js" defer></script></body>#'
        app/dist/index.html; fi
      - {_SCOPED} s3 cp --only-show-errors --recursive --exclude index.html
        app/dist "$ZEROCODE_OUTPUT_URI"
        && {_SCOPED} s3 cp --only-show-errors app/dist/index.html
        "${{ZEROCODE_OUTPUT_URI}}index.html"
cache:
  paths:
    - /root/.npm/**/*
"""
_FAILED = {"FAILED", "FAULT", "STOPPED", "TIMED_OUT"}
_MISSING = {"404", "NoSuchKey", "NotFound"}


class CodeBuildBuilder:
    def __init__(
        self,
        codebuild: Any,
        s3: Any,
        project: str,
        bucket: str,
        *,
        sts: Any = None,
        data_role_arn: str | None = None,
        credential_seconds: int = CREDENTIAL_SECONDS,
        poll_seconds: float = 5.0,
        timeout_seconds: float = 14 * 60,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """``sts`` and ``data_role_arn`` (the build data role, infra) are needed for Vue
        builds: each one runs with credentials of that role scoped to the build."""
        self.codebuild, self.s3, self.project, self.bucket = codebuild, s3, project, bucket
        self.sts, self.data_role_arn, self.credential_seconds = (
            sts,
            data_role_arn,
            credential_seconds,
        )
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
        return BuildOutcome(
            ok=False,
            log_tail="",
            output=None,
            error=f"CodeBuild did not finish within {self.timeout_seconds:.0f} s",
        )

    def source_key(self, app_id: str, build_id: str) -> str:
        return f"sources/{check_app_id(app_id)}/{check_app_id(build_id)}.zip"

    def start(self, job: BuildJob) -> str | BuildOutcome:
        if job.kind is not CodeGenType.VUE_PROJECT:
            return self._copy_static(job)
        source_key = self.source_key(job.app_id, job.build_id)
        prefix = self.output_prefix(job.app_id, job.build_id)
        credentials = self._scoped_credentials(job.build_id, source_key, prefix)
        extra = {".zerocode/picker.js": PICKER.read_bytes()} if job.preview else {}
        self.s3.put_object(
            Bucket=self.bucket, Key=source_key, Body=_zip(job, extra), ContentType="application/zip"
        )
        variables = {
            "ZEROCODE_APP_ID": job.app_id,
            "ZEROCODE_BUILD_ID": job.build_id,
            "ZEROCODE_PREVIEW": "1" if job.preview else "0",
            "ZEROCODE_SOURCE_URI": f"s3://{self.bucket}/{source_key}",
            "ZEROCODE_OUTPUT_URI": f"s3://{self.bucket}/{prefix}",
            **credentials,
        }
        answer = self.codebuild.start_build(
            projectName=self.project,
            idempotencyToken=job.build_id,
            sourceTypeOverride="NO_SOURCE",
            buildspecOverride=BUILDSPEC,
            artifactsOverride={"type": "NO_ARTIFACTS"},
            environmentVariablesOverride=[
                {"name": name, "value": value, "type": "PLAINTEXT"}
                for name, value in variables.items()
            ],
        )
        return str(answer["build"]["id"])

    def _scoped_credentials(self, build_id: str, source_key: str, prefix: str) -> dict[str, str]:
        """Credentials of the build data role that can read this build's source and write
        its output prefix, nothing else, for as long as the build can run."""
        if self.sts is None or not self.data_role_arn:
            raise RuntimeError(
                "Vue builds on CodeBuild need the build data role (ZEROCODE_BUILD_DATA_ROLE_ARN)"
            )
        meta = self.s3.meta
        policy = session_policy(
            self.bucket, source_key, prefix, partition=meta.partition, region=meta.region_name
        )
        answer = self.sts.assume_role(
            RoleArn=self.data_role_arn,
            RoleSessionName=f"zerocode-{build_id}",
            Policy=json.dumps(policy, separators=(",", ":")),
            DurationSeconds=self.credential_seconds,
        )
        given = answer["Credentials"]
        return dict(
            zip(
                CREDENTIAL_VARIABLES,
                (
                    str(given["AccessKeyId"]),
                    str(given["SecretAccessKey"]),
                    str(given["SessionToken"]),
                ),
                strict=True,
            )
        )

    def outcome(self, app_id: str, build_id: str, runner_id: str) -> BuildOutcome | None:
        builds = self.codebuild.batch_get_builds(ids=[runner_id]).get("builds", [])
        if not builds:
            return BuildOutcome(
                ok=False, log_tail="", output=None, error=f"CodeBuild has no build {runner_id}"
            )
        build = builds[0]
        status = str(build.get("buildStatus", "IN_PROGRESS"))
        tail = _log_tail(build)
        if status == "SUCCEEDED":
            prefix = self.output_prefix(app_id, build_id)
            if not self._exists(prefix + "index.html"):
                return BuildOutcome(
                    ok=False,
                    log_tail=tail,
                    output=None,
                    error="the build succeeded but its output has no index.html",
                )
            return BuildOutcome(ok=True, log_tail=tail, output=f"s3://{self.bucket}/{prefix}")
        if status in _FAILED:
            return BuildOutcome(
                ok=False, log_tail=tail, output=None, error=f"the project did not build ({status})"
            )
        return None

    def delete_app(self, app_id: str) -> int:
        removed = 0
        for prefix in (f"builds/{check_app_id(app_id)}/", f"sources/{app_id}/"):
            paginator = self.s3.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                keys = [{"Key": o["Key"]} for o in page.get("Contents", [])]
                if keys:
                    self.s3.delete_objects(
                        Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True}
                    )
                    removed += len(keys)
        return removed

    def _copy_static(self, job: BuildJob) -> BuildOutcome:
        if "index.html" not in job.source.files:
            return BuildOutcome(
                ok=False, log_tail="", output=None, error="the app has no index.html yet"
            )
        prefix = self.output_prefix(job.app_id, job.build_id)
        files = dict(job.source.files)
        if job.preview:
            files = {
                p: with_picker(d, relative=True) if p.endswith(".html") else d
                for p, d in files.items()
            }
            files[PICKER_FILE] = PICKER.read_bytes()
        # index.html last: the output counts as complete once it is there.
        for path in sorted(files, key=lambda p: p == "index.html"):
            media = mimetypes.guess_type(path)[0] or "application/octet-stream"
            self.s3.put_object(
                Bucket=self.bucket,
                Key=prefix + clean_path(path),
                Body=files[path],
                ContentType=media,
            )
        return BuildOutcome(
            ok=True,
            log_tail=f"checked and copied {len(job.source.files)} file(s)",
            output=f"s3://{self.bucket}/{prefix}",
        )

    def _exists(self, key: str) -> bool:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return False
            raise
        return True


def session_policy(
    bucket: str,
    source_key: str,
    output_prefix: str,
    *,
    partition: str = "aws",
    region: str = "us-east-1",
) -> dict[str, Any]:
    """The session policy of one build's credentials: its own source object, its own output
    prefix, and the bucket's KMS key only through S3 (the build data role names the key)."""
    arn = f"arn:{partition}:s3:::{bucket}/"
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "ReadOwnSource",
                "Effect": "Allow",
                "Action": "s3:GetObject",
                "Resource": arn + source_key,
            },
            {
                "Sid": "WriteOwnOutput",
                "Effect": "Allow",
                "Action": "s3:PutObject",
                "Resource": arn + output_prefix + "*",
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


def _zip(job: BuildJob, extra: dict[str, bytes]) -> bytes:
    """The platform's build tree of the snapshot, the toolchain's manifest, ``extra``."""
    files = {
        **toolchain.build_tree(job.source.files),
        **{f"{TOOLCHAIN_DIR}/{name}": data for name, data in toolchain.manifest().items()},
        **extra,
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            archive.writestr(clean_path(path), files[path])
    return buffer.getvalue()


def _log_tail(build: dict[str, Any]) -> str:
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
