"""A uid of its own for each build running on this machine.

Process limits (``RLIMIT_NPROC``) count per uid: when every build ran as ``nobody``, one build
holding ~250 idle processes made another user's concurrent build hang until its deadline. So
a build box runs as one uid of a small pool (``FIRST`` … ``FIRST + SIZE - 1``, numbers no
account uses), held for the build's whole life by an ``flock`` on a file per uid under
``/run/zerocode/box-uids``: machine-wide (several servers on one machine never share a uid),
and released by the kernel when a server dies, so a crash leaks nothing. When all are busy a
build waits for one, within its deadline.

A uid is handed out only while no process runs as it: a killed box's processes (a build
stopped because it was superseded, a prepared box reaped) may outlive the lock for a moment,
and a new build under their uid would share their process count, so a lock alone is not
the rule; the processes are.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

FIRST = 1_930_000_000
SIZE = 64
LOCKS = Path("/run/zerocode/box-uids")


class NoUidFree(Exception):
    """Every uid of the pool stayed busy until the build's deadline."""


class UidPool:
    def __init__(self, first: int = FIRST, size: int = SIZE, locks: Path = LOCKS) -> None:
        self.first, self.size, self.locks = first, size, locks

    def _try(self) -> tuple[int, int] | None:
        self.locks.mkdir(mode=0o700, parents=True, exist_ok=True)
        for uid in range(self.first, self.first + self.size):
            fd = os.open(self.locks / str(uid), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if runs_as(uid):  # the last holder's processes are still dying
                os.close(fd)
                continue
            return uid, fd
        return None

    @contextlib.asynccontextmanager
    async def uid(self, wait: float) -> AsyncIterator[int]:
        """A uid no other build on this machine holds, for the ``async with`` block."""
        deadline = time.monotonic() + wait
        pause = 0.05
        while (got := await asyncio.to_thread(self._try)) is None:
            if time.monotonic() >= deadline:
                raise NoUidFree(
                    f"all {self.size} build slots of this machine stayed busy for {wait:.0f} s"
                )
            await asyncio.sleep(pause)
            pause = min(pause * 2, 1.0)
        uid, fd = got
        try:
            yield uid
        finally:
            os.close(fd)  # releases the flock


def runs_as(uid: int) -> bool:
    """Whether any process of this machine has ``uid`` as its real uid (what RLIMIT_NPROC
    counts), read from /proc/{pid}/status."""
    wanted = str(uid)
    with os.scandir("/proc") as entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/status", "rb") as status:
                    for line in status:
                        if line.startswith(b"Uid:"):
                            if line.split()[1].decode() == wanted:
                                return True
                            break
            except OSError:  # it ended meanwhile
                continue
    return False
