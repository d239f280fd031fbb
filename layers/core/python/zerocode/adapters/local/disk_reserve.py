"""Space kept back on the data directory's disk so a turn can always record its own end.

A turn that meets a full disk half-way must still close its transcript with what it did,
write its display entry and its ``done`` (docs/engine.md, "A full disk"); all of that is
a write. So the platform holds a reserve file of a few MB beside the database: a turn is
only started while the reserve is in place with as much again free beside it, and the
first turn that meets a full disk deletes the reserve so its ending (and the endings of
the turns running with it) can be written. The reserve is made again once there is room.

The file's blocks are allocated for real (``posix_fallocate``, zeros where that is not
supported), never sparse: a sparse file would hold back nothing.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import threading
from pathlib import Path

from zerocode.adapters.local.free_space import MB, free_bytes
from zerocode.apps.storage_health import StorageHealth

log = logging.getLogger("zerocode.storage")

RESERVE_NAME = ".space-reserve"
_CHUNK = 1 << 20


class DiskReserve:
    """A reserve file of ``size`` bytes in ``directory`` (engine/parts.py SpaceReserve)."""

    def __init__(self, directory: Path, size: int) -> None:
        self.path = directory / RESERVE_NAME
        self.size = size
        self._lock = threading.Lock()

    def ready(self) -> bool:
        """Whether a turn may start: the reserve is in place (made now if it can be) and as
        much again is free beside it."""
        with self._lock:
            if not self._in_place() and not self._make():
                return False
            return self.free() >= self.size

    def release(self) -> bool:
        """The disk is full: give the reserve's space to the writes that record what
        happened. Whether there was a reserve to give."""
        with self._lock:
            try:
                self.path.unlink()
            except FileNotFoundError:
                return False
            log.error("the data directory's disk is full: its %d-byte reserve is freed", self.size)
            return True

    def check(self) -> StorageHealth:
        """Health's word on it (apps/storage_health.py): a reserve that cannot be kept means
        turns and edits are refused."""
        if self.ready():
            return StorageHealth()
        return StorageHealth(
            (
                f"the disk reserve of {self.size / MB:.0f} MB at {self.path} cannot be kept "
                f"({self.free() / MB:.1f} MB free): turns and edits are refused until space "
                "is freed",
            )
        )

    def free(self) -> int:
        """Bytes free to an unprivileged writer on the reserve's file system."""
        return free_bytes(self.path.parent)

    def _in_place(self) -> bool:
        try:
            return self.path.stat().st_size >= self.size
        except FileNotFoundError:
            return False

    def _make(self) -> bool:
        """Make the reserve when twice its size is free (the reserve and a turn's room)."""
        if self.free() < 2 * self.size:
            return False
        part = self.path.with_name(self.path.name + ".part")
        try:
            fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                _allocate(fd, self.size)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(part, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                part.unlink()
            log.warning("could not make the disk reserve: %s", exc.strerror or exc)
            return False
        return True


def _allocate(fd: int, size: int) -> None:
    try:
        os.posix_fallocate(fd, 0, size)
        return
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # the file system cannot: write
            raise
    zeros = bytes(_CHUNK)
    left = size
    while left > 0:
        left -= os.write(fd, zeros[: min(left, _CHUNK)])
