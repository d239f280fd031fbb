"""A CodeBuild run's source: put where only that run can read it, with its output POST.

The run is started first (nothing of its source is in the StartBuild request, so nothing is
in its record or its events); its CodeBuild id names its role session, and the source zip
goes under that session's own prefix (:func:`.build_handoff.source_key`), which the
project's role may read only as that session (infra). Inside the zip is the one capability
the build gets: a presigned POST of its output archive, bounded in size by the POST's
policy and signed by a session of the *build data role* scoped to that one key
(:func:`.build_handoff.session_policy`). The zip is deleted by the build as soon as it has
it, by :meth:`BuildSources.drop` when a run is stopped, and by the lifecycle rule
otherwise.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import boto3

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import check_app_id, clean_path
from zerocode.data.model import DATA_MODEL
from zerocode.publishing import toolchain
from zerocode.publishing.builds import BuildJob, served_files
from zerocode.publishing.picker import PICKER

# How long a run's output POST lasts: a Lambda-compute build runs at most 15 minutes from
# its start and does not queue; the POST is signed just after the start. (STS's shortest
# session is 15 minutes; the POST's own policy expires with it.)
CREDENTIAL_SECONDS = 20 * 60
# Where the source zip carries the toolchain's package.json and lockfile.
TOOLCHAIN_DIR = ".zerocode/toolchain"


class BuildSources:
    def __init__(
        self,
        s3: Any,
        bucket: str,
        *,
        sts: Any = None,
        data_role_arn: str | None = None,
        build_role_id: str | None = None,
        credential_seconds: int = CREDENTIAL_SECONDS,
    ) -> None:
        """``build_role_id``: the unique id of the CodeBuild project's role (infra passes
        it), whose sessions' ``aws:userid`` name the source prefixes."""
        self.s3, self.bucket = s3, bucket
        self.sts, self.data_role_arn, self.build_role_id = sts, data_role_arn, build_role_id
        self.credential_seconds = credential_seconds

    def ready(self) -> None:
        """Raises unless runs can be given their sources (before a run is started)."""
        if self.sts is None or not self.data_role_arn or not self.build_role_id:
            raise RuntimeError(
                "builds on CodeBuild need the build data role and the build role's id "
                "(ZEROCODE_BUILD_DATA_ROLE_ARN, ZEROCODE_BUILD_ROLE_ID)"
            )

    def key(self, runner_id: str, app_id: str, run_id: str) -> str:
        identity = handoff.build_identity(str(self.build_role_id), runner_id)
        return handoff.source_key(identity, check_app_id(app_id), check_app_id(run_id))

    def staging_key(self, app_id: str, run_id: str) -> str:
        return f"staging/{check_app_id(app_id)}/{check_app_id(run_id)}.tar"

    def put(self, runner_id: str, app_id: str, run_id: str, files: dict[str, bytes]) -> None:
        """The run's source zip, with its output POST, where only that run can read it."""
        self.ready()
        staging_key = self.staging_key(app_id, run_id)
        output = self._signer(run_id, staging_key).generate_presigned_post(
            Bucket=self.bucket,
            Key=staging_key,
            Fields={"Content-Type": handoff.ARCHIVE_TYPE},
            Conditions=[
                {"Content-Type": handoff.ARCHIVE_TYPE},
                ["content-length-range", 1, handoff.MAX_OUTPUT_BYTES],
            ],
            ExpiresIn=self.credential_seconds,
        )
        self.s3.put_object(
            Bucket=self.bucket,
            Key=self.key(runner_id, app_id, run_id),
            Body=_zip({**files, handoff.HANDOFF_FILE: json.dumps({"output": output}).encode()}),
            ContentType="application/zip",
        )

    def drop(self, runner_id: str, app_id: str, run_id: str) -> None:
        """The run's source, should it never have fetched it (a stopped run)."""
        if self.build_role_id:
            self.s3.delete_object(Bucket=self.bucket, Key=self.key(runner_id, app_id, run_id))

    def of_app(self, app_id: str) -> list[str]:
        """Every source zip of the app still there (``sources/{identity}/{app}/…``)."""
        wanted, keys = check_app_id(app_id), []
        for page in self.s3.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=handoff.SOURCES
        ):
            for item in page.get("Contents", []):
                parts = str(item["Key"]).split("/")
                if len(parts) == 4 and parts[2] == wanted:
                    keys.append(str(item["Key"]))
        return keys

    def _signer(self, run_id: str, staging_key: str) -> Any:
        """An S3 client of a build data role session that can write this run's staging
        archive, nothing else, for as long as the run can go on."""
        meta = self.s3.meta
        policy = handoff.session_policy(
            self.bucket, staging_key, partition=meta.partition, region=meta.region_name
        )
        given = self.sts.assume_role(
            RoleArn=self.data_role_arn,
            RoleSessionName=f"zerocode-{run_id}",
            Policy=json.dumps(policy, separators=(",", ":")),
            DurationSeconds=self.credential_seconds,
        )["Credentials"]
        return boto3.client(
            "s3",
            region_name=meta.region_name,
            endpoint_url=meta.endpoint_url,
            aws_access_key_id=given["AccessKeyId"],
            aws_secret_access_key=given["SecretAccessKey"],
            aws_session_token=given["SessionToken"],
            config=meta.config,
        )


def source_files(job: BuildJob) -> dict[str, bytes]:
    """What a build fetches: a Vue project's platform build tree and the toolchain's
    manifest, or an html app's files; a preview's picker; the data model."""
    if job.kind is CodeGenType.VUE_PROJECT:
        files = {
            **toolchain.build_tree(job.source.files),
            **{f"{TOOLCHAIN_DIR}/{name}": data for name, data in toolchain.manifest().items()},
        }
    else:
        served = served_files(job.source.files)
        files = {p: d for p, d in served.items() if not p.startswith(".zerocode/")}
    if job.preview:
        files[handoff.PICKER_IN_SOURCE] = PICKER.read_bytes()
    model = job.source.files.get(DATA_MODEL)
    if model is not None:  # for the build's own checks; no site serves it
        files[handoff.DATA_MODEL_IN_SOURCE] = model
    return files


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(files):
            archive.writestr(clean_path(path), files[path])
    return buffer.getvalue()
