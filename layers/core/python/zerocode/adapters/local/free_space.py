"""The data directory's room: free space against ``ZEROCODE_MIN_FREE_MB``, and whether it
can be written at all (issue 29).

``zerocode serve`` refuses to start on a data directory it cannot write or that has less
free space than the minimum (one line saying which path and how much is left, before any
log or database write there), and ``/api/health`` turns "degraded" when the space falls
below the minimum while it runs.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from zerocode.adapters.local.private import private_dir

MB = 1 << 20
_FULL = (errno.ENOSPC, errno.EDQUOT)


def free_bytes(path: Path) -> int:
    """Bytes an unprivileged writer may still use on ``path``'s file system."""
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize


def low_space(path: Path, min_free_mb: int) -> str | None:
    """Why ``path`` has too little room (its free space and the minimum), or None."""
    free = free_bytes(path)
    return None if free >= min_free_mb * MB else _too_little(path, free, min_free_mb)


def _too_little(path: Path, free: int, min_free_mb: int) -> str:
    return (
        f"the data directory {path.resolve()} has {free / MB:.1f} MB free, below the "
        f"minimum of {min_free_mb} MB (ZEROCODE_MIN_FREE_MB)"
    )


def data_dir_refusal(path: Path, min_free_mb: int) -> str | None:
    """Why the server must not start on ``path``, in one line, or None. The directory is
    made if missing (0700), then a small file is written, synced and removed there: a
    read-only or full file system says so now rather than at the first log or turn."""
    where = path.resolve()
    try:
        private_dir(path)
    except OSError as exc:
        return f"the data directory {where} cannot be created ({exc.strerror or exc})"
    try:
        fd, name = tempfile.mkstemp(prefix=".write-check-", dir=path)
        try:
            os.write(fd, b"\0" * 4096)
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(name)
    except OSError as exc:
        if exc.errno in _FULL:
            return _too_little(path, free_bytes(path), min_free_mb) + " and cannot be written"
        return f"the data directory {where} cannot be written ({exc.strerror or exc})"
    return low_space(path, min_free_mb)
