"""The build's source, fetched as the build itself, from where only it can read.

The platform puts a run's source zip under ``sources/{aws:userid}/…`` after CodeBuild has
started the run (:mod:`zerocode.adapters.aws.build_sources`), and the project's role may
read and delete there only as that run's own session. So the box asks STS who it is, reads
its zip from its own prefix (waiting a little: the platform writes it just after the start)
and deletes it. Should CodeBuild ever name its sessions otherwise, the box says so plainly
instead of waiting for a source that is elsewhere. No credential, and nothing but S3's and
STS's error codes, is ever said.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.buildbox.transfer import TransferFailed

WAIT_SECONDS = 60.0  # the platform puts the source in the second after StartBuild returns
_NOT_YET = {"NoSuchKey", "404", "AccessDenied", "403"}  # no ListBucket: missing reads as 403


class OwnSource:
    def __init__(
        self,
        s3: Any,
        sts: Any,
        bucket: str,
        app_id: str,
        build_id: str,
        runner_id: str = "",
        *,
        wait_seconds: float = WAIT_SECONDS,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """``runner_id``: CodeBuild's id of this run (``CODEBUILD_BUILD_ID``), if told."""
        self.s3, self.sts, self.bucket = s3, sts, bucket
        self.app_id, self.build_id, self.runner_id = app_id, build_id, runner_id
        self.wait_seconds, self.sleep = wait_seconds, sleep

    @classmethod
    def from_environment(cls, bucket: str, app_id: str, build_id: str, runner_id: str) -> OwnSource:
        """Clients with the container's credentials, made before the box scrubs its
        environment (nothing it starts afterwards inherits them)."""
        import botocore.session
        from botocore.config import Config

        config = Config(
            connect_timeout=5, read_timeout=30, retries={"mode": "standard", "max_attempts": 3}
        )
        session = botocore.session.get_session()
        return cls(
            session.create_client("s3", config=config),
            session.create_client("sts", config=config),
            bucket,
            app_id,
            build_id,
            runner_id,
            wait_seconds=WAIT_SECONDS,
        )

    def identity(self) -> str:
        """This session's ``aws:userid``, checked to be CodeBuild's session of this run."""
        try:
            identity = str(self.sts.get_caller_identity()["UserId"])
        except Exception as exc:
            raise TransferFailed(f"asking STS who this build is: {_code(exc)}") from None
        run = handoff.run_of_identity(identity)
        expected = self.runner_id.rsplit(":", 1)[-1]
        if run is None or (expected and run != expected):
            raise TransferFailed(
                f"this build runs as {identity[:160]!r}, not as CodeBuild's session of run "
                f"{expected or '?'} ({handoff.CODEBUILD_SESSION}{expected or '{uuid}'}); the "
                "platform puts a run's source under that session's own prefix, the only one "
                "it may read (docs/builds.md, 'AWS builds')"
            )
        return identity

    def fetch(self, limit: int) -> bytes:
        """The source zip's bytes (at most ``limit``), deleted from S3 once read."""
        key = handoff.source_key(self.identity(), self.app_id, self.build_id)
        deadline, pause, said = time.monotonic() + self.wait_seconds, 0.2, ""
        while True:
            try:
                data = self._read(key, limit)
                break
            except _Missing as exc:
                said = str(exc)
            if time.monotonic() + pause > deadline:
                raise TransferFailed(
                    f"no source came under this build's own prefix in {self.wait_seconds:.0f}"
                    f" s (S3 said {said})"
                )
            self.sleep(pause)
            pause = min(pause * 2, 2.0)
        try:
            self.s3.delete_object(Bucket=self.bucket, Key=key)
        except Exception as exc:
            raise TransferFailed(f"deleting the source: {_code(exc)}") from None
        return data

    def _read(self, key: str, limit: int) -> bytes:
        try:
            body = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"]
        except Exception as exc:
            code = _code(exc)
            if code in _NOT_YET:
                raise _Missing(code) from None
            raise TransferFailed(f"downloading the source: {code}") from None
        try:
            data = body.read(limit + 1)
        except Exception as exc:
            raise TransferFailed(f"downloading the source: {_code(exc)}") from None
        finally:
            body.close()
        if len(data) > limit:
            raise TransferFailed(f"downloading the source: larger than {limit >> 20} MiB")
        return bytes(data)


class _Missing(Exception):
    """Not there (yet), or not this session's to read."""


def _code(exc: BaseException) -> str:
    """S3's or STS's error code, or the kind of failure: never a message (which could
    quote a request)."""
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        return str(response.get("Error", {}).get("Code") or "an error")
    return type(exc).__name__
