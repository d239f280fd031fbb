"""The S3 VersionStore: ``{prefix}{app}/blobs/{sha}`` and ``{prefix}{app}/v/{key}.json``.

A version's record key counts down (``999999999 - number``), so S3's ascending listing
gives the newest first and "latest" is one list call of one key. The record is written
last and only if absent (``IfNoneMatch="*"``): a version never names a missing blob, and
two writers cannot both take a number. Blobs are content-addressed, so writing one twice
writes the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from botocore.exceptions import ClientError

from zerocode.adapters.aws.errors import error_code
from zerocode.apps.versions import Version, VersionKind
from zerocode.apps.workspace import check_app_id
from zerocode.errors import Conflict, NotFound

_TOP = 999_999_999
_MISSING = {"404", "NoSuchKey", "NotFound"}
_TAKEN = {"PreconditionFailed", "412", "ConditionalRequestConflict", "409"}
_BATCH = 1000


class S3VersionStore:
    def __init__(self, client: Any, bucket: str, prefix: str = "versions/") -> None:
        self.client, self.bucket = client, bucket
        self.prefix = prefix if prefix.endswith("/") else prefix + "/"

    def add(self, version: Version, blobs: Mapping[str, bytes]) -> None:
        base = self._base(version.app_id)
        for sha, data in blobs.items():
            self.client.put_object(Bucket=self.bucket, Key=f"{base}blobs/{sha}", Body=data)
        record = {
            "number": version.number,
            "turn": version.turn,
            "kind": version.kind.value,
            "summary": version.summary,
            "digest": version.digest,
            "manifest": dict(version.manifest),
            "createdAt": version.created_at,
            "restoredFrom": version.restored_from,
            "buildId": version.build_id,
        }
        try:
            self.client.put_object(
                Bucket=self.bucket,
                Key=self._record_key(version.app_id, version.number),
                Body=json.dumps(record, separators=(",", ":")).encode(),
                ContentType="application/json",
                IfNoneMatch="*",
            )
        except ClientError as exc:
            if error_code(exc) in _TAKEN:
                raise Conflict(f"version {version.id} of app {version.app_id} exists") from None
            raise

    def latest(self, app_id: str) -> Version | None:
        found = self.list(app_id, None, 1)
        return found[0] if found else None

    def get(self, app_id: str, number: int) -> Version | None:
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self._record_key(app_id, number))
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                return None
            raise
        return _version(app_id, json.loads(body["Body"].read()))

    def list(self, app_id: str, before: int | None = None, limit: int = 20) -> list[Version]:
        kwargs: dict[str, Any] = {
            "Bucket": self.bucket,
            "Prefix": f"{self._base(app_id)}v/",
            "MaxKeys": max(1, min(limit, 1000)),
        }
        if before is not None:
            kwargs["StartAfter"] = self._record_key(app_id, before)
        keys = [o["Key"] for o in self.client.list_objects_v2(**kwargs).get("Contents", ())]
        out = []
        for key in keys[:limit]:
            number = _TOP - int(key.rsplit("/", 1)[1].removesuffix(".json"))
            version = self.get(app_id, number)
            if version is not None:
                out.append(version)
        return out

    def blob(self, app_id: str, sha: str) -> bytes:
        try:
            body = self.client.get_object(
                Bucket=self.bucket, Key=f"{self._base(app_id)}blobs/{sha}"
            )
        except ClientError as exc:
            if error_code(exc) in _MISSING:
                raise NotFound(
                    f"the content {sha[:12]} of a version of app {app_id} is missing"
                ) from None
            raise
        data: bytes = body["Body"].read()
        return data

    def delete_app(self, app_id: str) -> int:
        keys = list(self._keys(self._base(app_id)))
        for start in range(0, len(keys), _BATCH):
            batch = [{"Key": k} for k in keys[start : start + _BATCH]]
            response = self.client.delete_objects(
                Bucket=self.bucket, Delete={"Objects": batch, "Quiet": True}
            )
            if response.get("Errors"):
                raise RuntimeError(
                    f"could not delete {len(response['Errors'])} version objects of app {app_id}"
                )
        return sum(1 for k in keys if "/v/" in k)

    def _base(self, app_id: str) -> str:
        return f"{self.prefix}{check_app_id(app_id)}/"

    def _record_key(self, app_id: str, number: int) -> str:
        return f"{self._base(app_id)}v/{_TOP - number:09d}.json"

    def _keys(self, prefix: str) -> Iterator[str]:
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
            for item in page.get("Contents", ()):
                yield str(item["Key"])


def _version(app_id: str, raw: dict[str, Any]) -> Version:
    return Version(
        app_id=app_id,
        number=int(raw["number"]),
        turn=int(raw["turn"]),
        kind=VersionKind(raw["kind"]),
        summary=str(raw["summary"]),
        digest=str(raw["digest"]),
        manifest={str(k): str(v) for k, v in raw["manifest"].items()},
        created_at=float(raw["createdAt"]),
        restored_from=raw.get("restoredFrom"),
        build_id=raw.get("buildId"),
    )
