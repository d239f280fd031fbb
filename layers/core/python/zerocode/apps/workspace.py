"""Workspace port: an app's generated source files, addressed by workspace-relative paths.

Paths are checked by :func:`clean_path` before any adapter sees them, so the
sandbox rules are the same for a local directory and an S3 prefix.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from zerocode.apps.guards import BIDI_CONTROLS, invisible
from zerocode.apps.path_bounds import BOUNDS, shown, too_long
from zerocode.errors import InvalidInput, NotFound, PayloadTooLarge


class PathRefused(InvalidInput):
    code = "path_refused"


class FileMissing(NotFound):
    code = "file_missing"


class WorkspaceFull(PayloadTooLarge):
    code = "workspace_full"


@dataclass(frozen=True)
class FileInfo:
    path: str
    size: int


@dataclass(frozen=True)
class WorkspaceLimits:
    max_file_bytes: int = 512 * 1024
    max_files: int = 200
    max_image_bytes: int = 5 * 1024 * 1024  # a file of an image type (apps/assets.py)

    def most(self, path: str) -> int:
        """The bytes a file at ``path`` may hold: images more than text."""
        ext = posixpath.splitext(path)[1].lstrip(".").lower()
        return self.max_image_bytes if ext in IMAGE_EXTENSIONS else self.max_file_bytes


# The extensions the larger bound of an image applies to (apps/assets.py's types).
IMAGE_EXTENSIONS = frozenset({"png", "jpg", "jpeg", "webp", "gif", "avif", "ico"})


DEFAULT_LIMITS = WorkspaceLimits()


@dataclass(frozen=True)
class Snapshot:
    """The app's source at one moment, and its digest (what a version records and
    a build was made from)."""

    files: Mapping[str, bytes]
    digest: str

    @classmethod
    def of(cls, files: Mapping[str, bytes]) -> Snapshot:
        h = hashlib.sha256()
        for path in sorted(files):
            data = files[path]
            h.update(f"{path}\0{len(data)}\0".encode())
            h.update(data)
        return cls(dict(files), h.hexdigest())


class Workspace(Protocol):
    def read(self, app_id: str, path: str) -> bytes:
        """Raises FileMissing."""
        ...

    def write(self, app_id: str, path: str, data: bytes) -> None:
        """Create or replace; raises WorkspaceFull past the limits, PathRefused on links."""
        ...

    def delete(self, app_id: str, path: str) -> None:
        """Raises FileMissing."""
        ...

    def list(self, app_id: str) -> list[FileInfo]:
        """Every file, sorted by path."""
        ...

    def delete_app(self, app_id: str) -> int: ...


NON_SOURCE_DIRS = frozenset({"node_modules", "dist", ".git"})
# Names the platform gives its own temporary files inside a workspace (the local adapter
# writes each file as a temporary sibling, then renames it over the target): never a path.
PLATFORM_TEMP_PREFIXES = (".zc-tmp-",)
# Characters no path may hold: controls, bidi and other invisible format characters
# (zero-width spaces and joiners, BOM, word joiner, variation selectors...), line and
# paragraph separators, spaces other than U+0020, surrogates, private-use and unassigned
# code points.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_APP_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def check_app_id(app_id: str) -> str:
    """The app id itself, or PathRefused: it becomes a directory name or an S3 key segment."""
    if not isinstance(app_id, str) or not _APP_ID.fullmatch(app_id):
        raise PathRefused(f"app id {app_id!r} must be 1-64 letters, digits, '_' or '-'")
    return app_id


def clean_path(path: str) -> str:
    """A normalised workspace-relative POSIX path, or PathRefused.

    Refused: empty, over the byte bounds (:mod:`zerocode.apps.path_bounds`), absolute
    (``/x``, ``C:/x``), any ``..`` segment, control characters, backslashes, bidi controls
    and other invisible characters (a name must look like what it is), paths into
    ``node_modules``/``dist``/``.git`` which are build output or tooling, never source, and
    the platform's temporary names (``.zc-tmp-*``) at any depth.
    """
    if not isinstance(path, str) or not path.strip():
        raise PathRefused("path is empty")
    why = too_long(path)
    if why is not None:  # first: the messages below show the path
        raise PathRefused(f"path {shown(path)} is refused: {why}; paths are {BOUNDS}")
    if any(ord(c) < 32 or c == "\x7f" for c in path) or "\\" in path:
        raise PathRefused(f"path {path!r} contains a control character or a backslash")
    _check_characters(path)
    if path.startswith("/") or (len(path) > 2 and path[1] == ":" and path[2] in "/\\"):
        raise PathRefused(f"path {path!r} is absolute; use a path relative to the project")
    parts = path.split("/")
    if ".." in parts:
        raise PathRefused(f"path {path!r} leaves the project ('..' is not allowed)")
    clean = posixpath.normpath(path)
    if clean in (".", "") or clean.split("/")[0] in NON_SOURCE_DIRS:
        raise PathRefused(f"path {path!r} is not a source file path")
    if any(part.startswith(PLATFORM_TEMP_PREFIXES) for part in clean.split("/")):
        raise PathRefused(
            f"path {path!r} uses a name the platform reserves for its temporary files "
            f"(names starting {' or '.join(PLATFORM_TEMP_PREFIXES)}); choose another name"
        )
    return clean


def _check_characters(path: str) -> None:
    """PathRefused for a character that would make a path display otherwise than it is."""
    bidi = sorted({f"U+{ord(c):04X}" for c in path if c in BIDI_CONTROLS})
    if bidi:
        raise PathRefused(
            f"path {path!r} contains bidirectional control characters ({', '.join(bidi)}), "
            "which make a name display in another order than it is written; remove them"
        )
    hidden = sorted(
        {
            f"U+{ord(c):04X}"
            for c in path
            if unicodedata.category(c) in _REFUSED_CATEGORIES
            or invisible(c)
            or (unicodedata.category(c) == "Zs" and c != " ")  # a no-break space looks like one
        }
    )
    if hidden:
        raise PathRefused(
            f"path {path!r} contains invisible or non-printing characters ({', '.join(hidden)}), "
            "which make two different names look the same; use visible characters only"
        )
