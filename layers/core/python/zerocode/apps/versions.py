"""Versions: every turn that changes an app's files leaves a snapshot of them.

A version is a manifest (path → sha256 of the content) with the digest a build of those
files records (:class:`zerocode.apps.workspace.Snapshot`), so a version and the preview
build made from it are recognisably the same source. Contents are stored once per app,
by hash: a version that changes one file of fifty stores one new blob. Numbers count up
per app (v1, v2, …); they are taken by a conditional write, so two writers cannot both
make v7. Restoring a version writes its files back and is itself a new version.
"""

from __future__ import annotations

import difflib
import hashlib
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from zerocode.apps.workspace import Snapshot
from zerocode.errors import Conflict, InvalidInput, NotFound

VERSION_PATTERN = r"^v([1-9][0-9]{0,8})$"
_VERSION_ID = re.compile(VERSION_PATTERN)
SUMMARY_CHARS = 200
DIFF_CONTEXT = 3
MAX_DIFF_CHARS = 200_000  # per file: a diff past it is cut, saying so


class VersionKind(StrEnum):
    TURN = "turn"  # a chat turn changed the files
    RESTORE = "restore"  # an earlier version was restored
    EDIT = "edit"  # a person edited a file (by hand, or its text in the preview)


@dataclass(frozen=True, kw_only=True)
class Version:
    app_id: str
    number: int
    turn: int  # the transcript turn that made it (a restore's note is a turn too)
    kind: VersionKind
    summary: str  # what made it, for people: the request, or "restored v2"
    digest: str  # Snapshot.digest of the files: equals the source_digest of its builds
    manifest: Mapping[str, str]  # path -> sha256 of the content
    created_at: float = field(default_factory=time.time)
    restored_from: int | None = None
    build_id: str | None = None  # the preview build made from these files, if any

    @property
    def id(self) -> str:
        return version_id(self.number)


@dataclass(frozen=True)
class VersionPage:
    versions: list[Version]  # newest first
    next_cursor: str | None


class VersionStore(Protocol):
    """Per-app versions and the contents they name. ``add`` stores the blobs first and the
    version last, only if its number is still free (else Conflict), so a version never
    names a blob that is not there."""

    def add(self, version: Version, blobs: Mapping[str, bytes]) -> None: ...

    def latest(self, app_id: str) -> Version | None: ...

    def get(self, app_id: str, number: int) -> Version | None: ...

    def list(self, app_id: str, before: int | None = None, limit: int = 20) -> list[Version]:
        """Newest first; only numbers below ``before`` when given."""
        ...

    def blob(self, app_id: str, sha: str) -> bytes:
        """Raises NotFound."""
        ...

    def delete_app(self, app_id: str) -> int: ...


def version_id(number: int) -> str:
    return f"v{number}"


def parse_version_id(value: object) -> int:
    match = _VERSION_ID.match(value) if isinstance(value, str) else None
    if match is None:
        raise InvalidInput("version id must look like v1, v2, … (as the versions list gives)")
    return int(match.group(1))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def summary_of(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SUMMARY_CHARS else flat[: SUMMARY_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True, kw_only=True)
class FileDiff:
    path: str
    status: str  # added | modified | deleted
    diff: str  # unified diff ("" for a binary file)
    binary: bool = False


@dataclass(frozen=True)
class Change:
    """What a restore did to one path."""

    path: str
    status: str  # added | modified | deleted (relative to the files before the restore)


class Versions:
    """The operations on versions over a store (records, reads, diffs)."""

    def __init__(self, store: VersionStore) -> None:
        self.store = store

    def record(
        self,
        app_id: str,
        files: Mapping[str, bytes],
        *,
        turn: int,
        summary: str,
        kind: VersionKind = VersionKind.TURN,
        restored_from: int | None = None,
        build_id: str | None = None,
    ) -> Version | None:
        """A new version of ``files``, or None when they are the newest version's already."""
        source = Snapshot.of(files)
        latest = self.store.latest(app_id)
        if latest is not None and latest.digest == source.digest:
            return None
        manifest = {path: sha256(data) for path, data in sorted(files.items())}
        known = set(latest.manifest.values()) if latest else set()
        blobs = {manifest[p]: data for p, data in files.items() if manifest[p] not in known}
        version = Version(
            app_id=app_id,
            number=(latest.number if latest else 0) + 1,
            turn=turn,
            kind=kind,
            summary=summary_of(summary),
            digest=source.digest,
            manifest=manifest,
            restored_from=restored_from,
            build_id=build_id,
        )
        try:
            self.store.add(version, blobs)
        except Conflict:
            raise Conflict("another version of this app was just made; try again") from None
        return version

    def get(self, app_id: str, version: str) -> Version:
        found = self.store.get(app_id, parse_version_id(version))
        if found is None:
            raise NotFound(f"version {version} not found")
        return found

    def page(self, app_id: str, cursor: str | None, limit: int) -> VersionPage:
        before = parse_version_id(cursor) if cursor is not None else None
        found = self.store.list(app_id, before, limit + 1)
        shown = found[:limit]
        return VersionPage(shown, shown[-1].id if len(found) > limit else None)

    def files(self, version: Version) -> dict[str, bytes]:
        return {
            path: self.store.blob(version.app_id, sha) for path, sha in version.manifest.items()
        }

    def made_from(self, app_id: str, newest: int = 50) -> dict[str, str]:
        """Source digest -> the newest version with those files, among the ``newest``: which
        version a build (or a checks run) of those files was made from."""
        made: dict[str, str] = {}
        for v in self.store.list(app_id, None, newest):
            made.setdefault(v.digest, v.id)
        return made

    def previous(self, version: Version) -> Version | None:
        older = self.store.list(version.app_id, version.number, 1)
        return older[0] if older else None

    def diff(self, version: Version, against: Version | None) -> list[FileDiff]:
        """Per-file unified diffs from ``against`` (None: nothing) to ``version``."""
        old = against.manifest if against else {}
        new = version.manifest
        out: list[FileDiff] = []
        for path in sorted(set(old) | set(new)):
            if old.get(path) == new.get(path):
                continue
            status = "added" if path not in old else "deleted" if path not in new else "modified"
            before = self.store.blob(version.app_id, old[path]) if path in old else b""
            after = self.store.blob(version.app_id, new[path]) if path in new else b""
            out.append(file_diff(path, status, before, after))
        return out


def file_diff(path: str, status: str, before: bytes, after: bytes) -> FileDiff:
    try:
        a, b = before.decode("utf-8"), after.decode("utf-8")
    except UnicodeDecodeError:
        return FileDiff(path=path, status=status, diff="", binary=True)
    lines = difflib.unified_diff(
        a.splitlines(keepends=True),
        b.splitlines(keepends=True),
        fromfile="/dev/null" if status == "added" else f"a/{path}",
        tofile="/dev/null" if status == "deleted" else f"b/{path}",
        n=DIFF_CONTEXT,
    )
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if len(text) > MAX_DIFF_CHARS:
        text = text[:MAX_DIFF_CHARS] + f"\n[diff cut at {MAX_DIFF_CHARS} characters]\n"
    return FileDiff(path=path, status=status, diff=text)


def line_counts(before: bytes, after: bytes) -> tuple[int, int]:
    """Lines added and removed turning ``before`` into ``after``: the ``+`` and ``-`` lines
    of :func:`file_diff`'s diff (the same matcher, so the two always agree)."""
    a = before.decode("utf-8", "replace").splitlines(keepends=True)
    b = after.decode("utf-8", "replace").splitlines(keepends=True)
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag in ("replace", "delete"):
            removed += i2 - i1
        if tag in ("replace", "insert"):
            added += j2 - j1
    return added, removed


def changes(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[Change]:
    """What turning ``before`` into ``after`` changes, path by path, sorted."""
    out = []
    for path in sorted(set(before) | set(after)):
        if before.get(path) == after.get(path):
            continue
        status = "added" if path not in before else "deleted" if path not in after else "modified"
        out.append(Change(path, status))
    return out
