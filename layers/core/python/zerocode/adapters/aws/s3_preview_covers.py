"""Preview covers on AWS: ``preview-covers/{appId}/{buildId}.png`` in the builds bucket.

Not under ``builds/``, the only prefix CloudFront's origin access may read: a preview cover
leaves the bucket only through the API (``GET /api/apps/{appId}/cover``, owner or admin),
which reads it with the API function's own role; no presigned link is ever made for it.
The builder puts a preview build's screenshot here when it unpacks the build
(:mod:`.codebuild_builder`); zerocode.publishing.preview_covers records and prunes.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.apps.workspace import check_app_id
from zerocode.publishing.preview_covers import MAX_COVER_BYTES

PREFIX = "preview-covers/"
_MISSING = {"404", "NoSuchKey", "NotFound"}


def preview_cover_key(app_id: str, build_id: str) -> str:
    return f"{PREFIX}{check_app_id(app_id)}/{check_app_id(build_id)}.png"


class S3PreviewCovers:
    def __init__(self, s3: Any, bucket: str) -> None:
        self.s3, self.bucket = s3, bucket

    def put(self, app_id: str, build_id: str, png: bytes) -> None:
        self.s3.put_object(
            Bucket=self.bucket,
            Key=preview_cover_key(app_id, build_id),
            Body=png,
            ContentType="image/png",
        )

    def get(self, app_id: str, build_id: str) -> bytes | None:
        try:
            body = self.s3.get_object(Bucket=self.bucket, Key=preview_cover_key(app_id, build_id))[
                "Body"
            ]
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return None
            raise
        try:
            data = bytes(body.read(MAX_COVER_BYTES + 1))
        finally:
            body.close()
        return data if len(data) <= MAX_COVER_BYTES else None

    def exists(self, app_id: str, build_id: str) -> bool:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=preview_cover_key(app_id, build_id))
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return False
            raise
        return True

    def prune(self, app_id: str, keep: Collection[str]) -> int:
        kept = {preview_cover_key(app_id, b) for b in keep}
        return self._delete(app_id, lambda key: key not in kept)

    def delete_app(self, app_id: str) -> int:
        return self._delete(app_id, lambda key: True)

    def _delete(self, app_id: str, chosen: Callable[[str], bool]) -> int:
        removed = 0
        paginator = self.s3.get_paginator("list_objects_v2")
        prefix = f"{PREFIX}{check_app_id(app_id)}/"
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
            keys = [{"Key": o["Key"]} for o in page.get("Contents", []) if chosen(o["Key"])]
            if keys:
                self.s3.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})
                removed += len(keys)
        return removed
