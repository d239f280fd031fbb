"""S3 object keys: S3's own bound on a key, and a build's site as keys, checked whole.

S3 refuses a key longer than :data:`MAX_KEY_BYTES` (``KeyTooLongError``, mid-write); a key
is a prefix (``workspaces/{appId}/``, ``builds/{appId}/{buildId}/``) and a path that the path
rules allow up to 1,024 bytes, so the key is checked here first and refused with a reason.

A site's paths are output paths: they are held to the output rule
(:func:`zerocode.publishing.output_archive.refuse_name`), not the source rule. A Vue app's
``public/`` is copied to the site's root, so the source ``public/dist/a.txt`` is the site's
``dist/a.txt``: no source path may start with ``dist/``, any site may hold it.
"""

from __future__ import annotations

from pathlib import Path

from zerocode.apps.path_bounds import utf8_size
from zerocode.publishing.output_archive import OutputRefused, refuse_name

MAX_KEY_BYTES = 1024


def key_refusal(key: str) -> str | None:
    """Why S3 would refuse ``key``, for people, or None."""
    size = utf8_size(key)
    if size <= MAX_KEY_BYTES:
        return None
    return f"its storage key would be {size} bytes, longer than S3's {MAX_KEY_BYTES}"


def site_objects(site: Path, prefix: str, *, leave_out: str) -> dict[str, Path]:
    """Every file of the unpacked ``site`` by its key under ``prefix`` (``leave_out``, a
    site path, is not one). Raises :class:`OutputRefused` for a path the output rule or S3
    refuses, before the caller writes anything."""
    objects: dict[str, Path] = {}
    for file in sorted(site.rglob("*")):
        rel = file.relative_to(site).as_posix()
        if not file.is_file() or rel == leave_out:
            continue
        why = refuse_name(rel) or key_refusal(prefix + rel)
        if why is not None:
            raise OutputRefused(f"the build's site holds {rel[:120]!r}: {why}")
        objects[prefix + rel] = file
    return objects
