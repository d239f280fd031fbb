"""S3 Workspace: one key prefix per app, ``{prefix}{app_id}/{path}``.

Every write is conditional. ``write`` first reads the object's current ETag,
then puts with ``IfMatch=<etag>`` (replace exactly what was there) or
``IfNoneMatch="*"`` (create only if still absent). A writer that slips in
between the two calls makes S3 answer 412 (or 409 while its write is in
flight, or 404 if it deleted the file), and that becomes
:class:`zerocode.errors.Conflict` instead of a silently lost update.

The file-count limit is checked by listing the prefix before a create; two
concurrent creates may overshoot it by one each, which is acceptable for a
guard against runaway generation.

A key is the prefix and the path: a path within the path rules whose key would pass S3's
1,024 bytes is :class:`PathRefused` here (:mod:`.s3_keys`), never S3's ``KeyTooLongError``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.adapters.aws.s3_keys import key_refusal
from zerocode.apps.path_bounds import shown
from zerocode.apps.workspace import (
    DEFAULT_LIMITS,
    FileInfo,
    FileMissing,
    PathRefused,
    WorkspaceFull,
    WorkspaceLimits,
    check_app_id,
    clean_path,
)
from zerocode.errors import Conflict

_MISSING = {"404", "NoSuchKey", "NotFound"}
_CONFLICT = {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}
_BATCH = 1000  # DeleteObjects accepts at most 1000 keys


class S3Workspace:
    def __init__(
        self,
        client: Any,
        bucket: str,
        prefix: str = "workspaces/",
        limits: WorkspaceLimits = DEFAULT_LIMITS,
    ) -> None:
        self.client = client
        self.bucket = bucket
        self.prefix = prefix if not prefix or prefix.endswith("/") else prefix + "/"
        self.limits = limits

    def read(self, app_id: str, path: str) -> bytes:
        key = self._key(app_id, path)
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                raise FileMissing(f"file {clean_path(path)} does not exist") from None
            raise
        body: bytes = response["Body"].read()
        return body

    def write(self, app_id: str, path: str, data: bytes) -> None:
        key = self._key(app_id, path)
        rel = clean_path(path)
        if len(data) > self.limits.most(rel):
            raise WorkspaceFull(
                f"file {rel} is {len(data)} bytes; the limit is "
                f"{self.limits.most(rel)} bytes per file"
            )
        etag = self._etag(key)
        if etag is None:
            if self._count(app_id) >= self.limits.max_files:
                raise WorkspaceFull(
                    f"cannot create {rel}: the project already has "
                    f"{self.limits.max_files} files, the limit"
                )
            condition = {"IfNoneMatch": "*"}
        else:
            condition = {"IfMatch": etag}
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=data, **condition)
        except ClientError as exc:
            if error_code(exc) in _CONFLICT | _MISSING:
                raise Conflict(
                    f"file {rel} was changed by another writer; read it again and retry"
                ) from None
            raise

    def delete(self, app_id: str, path: str) -> None:
        key = self._key(app_id, path)
        if self._etag(key) is None:
            raise FileMissing(f"file {clean_path(path)} does not exist")
        self.client.delete_object(Bucket=self.bucket, Key=key)

    def list(self, app_id: str) -> list[FileInfo]:
        """Source files only: keys that are not clean workspace paths are left out."""
        base = self._app_prefix(app_id)
        out: list[FileInfo] = []
        for item in self._objects(base):
            rel = item["Key"][len(base) :]
            try:
                if clean_path(rel) != rel:
                    continue
            except PathRefused:
                continue
            out.append(FileInfo(rel, int(item["Size"])))
        return sorted(out, key=lambda f: f.path)

    def delete_app(self, app_id: str) -> int:
        """Delete every object under the app's prefix, build output included."""
        keys = [item["Key"] for item in self._objects(self._app_prefix(app_id))]
        for start in range(0, len(keys), _BATCH):
            batch = [{"Key": k} for k in keys[start : start + _BATCH]]
            response = self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True}
            )
            if response.get("Errors"):
                first = response["Errors"][0]
                raise RuntimeError(
                    f"could not delete {len(response['Errors'])} objects of "
                    f"app {app_id}, e.g. {first.get('Key')}: "
                    f"{first.get('Code')} {first.get('Message')}"
                )
        return len(keys)

    def _app_prefix(self, app_id: str) -> str:
        return f"{self.prefix}{check_app_id(app_id)}/"

    def _key(self, app_id: str, path: str) -> str:
        rel = clean_path(path)
        key = self._app_prefix(app_id) + rel
        why = key_refusal(key)
        if why is not None:
            raise PathRefused(f"path {shown(rel)} is refused: {why}; shorten the path")
        return key

    def _etag(self, key: str) -> str | None:
        try:
            response = self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return None
            raise
        etag: str = response["ETag"]
        return etag

    def _count(self, app_id: str) -> int:
        return len(self.list(app_id))

    def _objects(self, prefix: str) -> Iterator[dict[str, Any]]:
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
            yield from page.get("Contents", ())
