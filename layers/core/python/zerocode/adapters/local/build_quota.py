"""A build's disk quota: its work directory is a size-bounded tmpfs, not the data disk.

A build once wrote 144 MiB/s with fsync into its project directory on the data disk (about
25 GB per 180 s build): three builds filled the disk and every user's turns were refused.
Now, when the platform is root, the host mounts a tmpfs of ``ZEROCODE_BUILD_DISK_MB`` over
the build's work directory before anything runs there; the build box and the tar box bind
it as ``/build``, and a build that writes more gets ENOSPC and fails saying "the build wrote
more than N MiB". The data disk holds only the empty mount point.

tmpfs pages are charged to the memory cgroup of whoever writes them: the build's own (so its
memory cap bounds its disk use and its memory together, and the builds' aggregate bounds the
sum), except the sources the host writes into it, which are the server's. They are freed when
the box ends and the tmpfs is unmounted (before its cgroup is removed).

Not root, nothing can be mounted: builds then write to the data disk, bounded per file by the
file-size rlimit only; the banner says so.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import logging
import os
import tempfile
from pathlib import Path

from zerocode.adapters.local.cgroups import BuildCgroup

log = logging.getLogger(__name__)

MS_NOSUID, MS_NODEV = 2, 4
MNT_DETACH = 2
FULL_SLACK = 1 << 20  # less free than this after a failed build: it hit the quota


class QuotaUnavailable(Exception):
    """The build's quota could not be mounted: the build is refused, saying why."""


# This process's quotas still mounted: at its exit they go (a box whose event loop closed
# before it was closed, in tests); a killed server's go at the next start (release_under).
_MOUNTED: set[Path] = set()


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def mount(target: Path, size: int) -> None:
    """A tmpfs of ``size`` bytes over ``target`` (an empty directory), nosuid and nodev."""
    options = f"size={size},mode=0700".encode()
    if _libc().mount(b"tmpfs", os.fsencode(target), b"tmpfs", MS_NOSUID | MS_NODEV, options):
        err = ctypes.get_errno()
        raise QuotaUnavailable(
            f"the build's disk quota (a tmpfs of {size >> 20} MiB) could not be mounted: "
            f"{os.strerror(err)}"
        )
    _MOUNTED.add(target)


def unmount(target: Path) -> None:
    """Detach it (lazily: nothing may be using it by now, but nothing waits if something
    does); its pages are freed with the last user."""
    _MOUNTED.discard(target)
    if _libc().umount2(os.fsencode(target), MNT_DETACH) and ctypes.get_errno() != 22:
        log.warning("build quota %s not unmounted: %s", target, os.strerror(ctypes.get_errno()))


@atexit.register
def _at_exit() -> None:
    for target in list(_MOUNTED):
        unmount(target)


def mounted_under(root: Path) -> list[Path]:
    """tmpfs mount points at or below ``root``, deepest first (from /proc/self/mountinfo)."""
    found = []
    top = str(root.resolve())
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mountinfo").read_text().splitlines():
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")
            if (point == top or point.startswith(top + "/")) and " - tmpfs " in line:
                found.append(Path(point))
    return sorted(found, key=lambda p: -len(p.parts))


def release_under(root: Path) -> int:
    """Unmount every build quota below ``root``: before a tree is removed (an app's work
    directories when it is deleted; a crashed server's at start)."""
    points = mounted_under(root)
    for point in points:
        unmount(point)
    return len(points)


def works(size: int = 1 << 20) -> str | None:
    """None when a quota can be mounted here, else why not (for the banner)."""
    if os.geteuid() != 0:
        return "not root: no disk quota per build, only the file-size limit"
    with tempfile.TemporaryDirectory(prefix="zerocode-quota-") as tmp:
        try:
            mount(Path(tmp), size)
        except QuotaUnavailable as exc:
            return str(exc)
        unmount(Path(tmp))
    return None


def full(target: Path) -> bool:
    """Whether the quota at ``target`` is (nearly) used up."""
    try:
        stat = os.statvfs(target)
    except OSError:
        return False
    return stat.f_bavail * stat.f_frsize < FULL_SLACK


def exit_reason(
    code: int | None, group: BuildCgroup | None, quota: Path | None, quota_bytes: int
) -> str:
    """Why a build that exited badly failed, for people: its quota, its memory, a signal."""
    if quota is not None and full(quota):
        return f"the build wrote more than {quota_bytes >> 20} MiB (its disk quota) and failed"
    if group is not None and group.out_of_memory():
        return "the build ran out of memory (the sandbox's limit) and was stopped"
    if code is not None and code < 0:
        return f"the build was killed by signal {-code}"
    return f"the build exited with code {code}"
