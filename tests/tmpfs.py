"""A small tmpfs for a data directory that fills up or is read-only, as a real disk does.

Mounting needs root (CI runs as root): elsewhere the test is skipped saying so. The mount
is always undone, whatever the test did.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


def _mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


@contextlib.contextmanager
def tmpfs(where: Path, size: str, *, read_only: bool = False) -> Iterator[Path]:
    """``where`` (made if missing) as a tmpfs of ``size`` (mount's syntax: 2m), mode 0700
    (so the platform does not warn about an open data directory)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs the tests as root)")
    where.mkdir(parents=True, exist_ok=True)
    options = f"{'ro,' if read_only else ''}size={size},mode=700"
    _mount("-t", "tmpfs", "-o", options, "tmpfs", str(where))
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount(where: Path, *, read_only: bool) -> None:
    """The mounted tmpfs at ``where`` read-only or writable again (nothing may hold a file
    open for writing there to make it read-only)."""
    subprocess.run(
        ["mount", "-o", f"remount,{'ro' if read_only else 'rw'}", str(where)], check=True
    )


def ballast(where: Path, leave_mb: float) -> Path:
    """A file filling ``where``'s file system until ``leave_mb`` MB are free."""
    info = os.statvfs(where)
    size = info.f_bavail * info.f_frsize - int(leave_mb * (1 << 20))
    path = where / "ballast"
    with path.open("wb") as f:
        f.write(b"\0" * max(size, 0))
    return path
