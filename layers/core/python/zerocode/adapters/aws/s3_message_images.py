"""The images of users' messages on AWS: ``versions/{appId}/images/{sha256}`` in the
workspaces bucket, in the app's own folder of its history beside its versions' contents
(never in DynamoDB, Redis or the transcript): the grants and the deletion of an app's
versions cover them as they are (M8)."""

from __future__ import annotations

from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.apps.workspace import check_app_id
from zerocode.memory.images import ImageMissing, check_digest

_MISSING = {"404", "NoSuchKey", "NotFound"}
_BATCH = 1000


class S3MessageImages:
    def __init__(self, client: Any, bucket: str, prefix: str = "versions/") -> None:
        self.client, self.bucket = client, bucket
        self.prefix = prefix if prefix.endswith("/") else prefix + "/"

    def _key(self, app_id: str, sha256: str) -> str:
        return f"{self.prefix}{check_app_id(app_id)}/images/{check_digest(sha256)}"

    def put(self, app_id: str, sha256: str, data: bytes) -> None:
        self.client.put_object(
            Bucket=self.bucket,
            Key=self._key(app_id, sha256),
            Body=data,
            ContentType="application/octet-stream",
        )

    def get(self, app_id: str, sha256: str) -> bytes:
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self._key(app_id, sha256))
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                raise ImageMissing(f"image {sha256[:12]} of app {app_id} is not kept") from None
            raise
        data: bytes = body["Body"].read()
        return data

    def delete_app(self, app_id: str) -> int:
        prefix = f"{self.prefix}{check_app_id(app_id)}/images/"
        paginator = self.client.get_paginator("list_objects_v2")
        keys = [
            str(item["Key"])
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix)
            for item in page.get("Contents", ())
        ]
        for start in range(0, len(keys), _BATCH):
            batch = [{"Key": k} for k in keys[start : start + _BATCH]]
            response = self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True}
            )
            if response.get("Errors"):
                raise RuntimeError(f"could not delete {len(response['Errors'])} images of {app_id}")
        return len(keys)
