"""A build's cgroup: memory and process limits that are always there when the platform is root.

Where the platform may make cgroups (root, cgroup v2 or v1 with the memory and pids
controllers) a build gets one of its own, and a build whose cgroup cannot be made is refused
(:class:`CgroupUnavailable`), never run without limits. A cgroup is removed only once it is
empty: after the box ended, its members are waited for, killed if any remain, and ``rmdir``
is retried; one that still cannot be removed is logged, and at start :func:`sweep` removes
those whose owning server is gone. Names carry the owner (pid and start time), so one server
never sweeps another's running builds.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import time
from pathlib import Path

log = logging.getLogger(__name__)

PREFIX = "zerocode-build-"
BASE = Path("/sys/fs/cgroup")


class CgroupUnavailable(Exception):
    """The build's cgroup could not be made: the build is refused, saying so."""


def root(base: Path = BASE) -> Path | None:
    """Where build cgroups go, or None when this platform cannot make any (not root)."""
    if os.geteuid() != 0:
        return None
    if (base / "cgroup.controllers").is_file():
        return base
    if (base / "memory").is_dir() and (base / "pids").is_dir():
        return base
    return None


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22: start time in clock ticks


def _owner_tag() -> str:
    return f"{os.getpid()}.{_start_time(os.getpid())}"


def _groups_of(base: Path, name: str) -> list[Path]:
    if (base / "cgroup.controllers").is_file():
        return [base / name]
    return [base / "memory" / name, base / "pids" / name]


class BuildCgroup:
    def __init__(self, dirs: list[Path]) -> None:
        self.dirs = dirs

    @property
    def procs(self) -> list[str]:
        return [str(group / "cgroup.procs") for group in self.dirs]

    @classmethod
    def make(cls, base: Path, memory_bytes: int, processes: int) -> BuildCgroup:
        name = f"{PREFIX}{_owner_tag()}-{secrets.token_hex(4)}"
        made: list[Path] = []
        try:
            if (base / "cgroup.controllers").is_file():  # v2
                group = base / name
                group.mkdir()
                made.append(group)
                (group / "memory.max").write_text(str(memory_bytes))
                with contextlib.suppress(FileNotFoundError):  # no swap accounting here
                    (group / "memory.swap.max").write_text("0")
                (group / "pids.max").write_text(str(processes))
            else:  # v1
                memory, pids = base / "memory" / name, base / "pids" / name
                memory.mkdir()
                made.append(memory)
                (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                pids.mkdir()
                made.append(pids)
                (pids / "pids.max").write_text(str(processes))
        except OSError as exc:
            cls(made).remove(wait=1.0)
            raise CgroupUnavailable(
                f"the build's cgroup (memory and process limits) could not be made: {exc}"
            ) from None
        return cls(made)

    def members(self) -> set[int]:
        found: set[int] = set()
        for group in self.dirs:
            with contextlib.suppress(OSError):
                found.update(int(p) for p in (group / "cgroup.procs").read_text().split())
        return found

    def out_of_memory(self) -> bool:
        for group in self.dirs:
            for name, key in (("memory.events", "oom_kill "), ("memory.failcnt", "")):
                with contextlib.suppress(OSError):
                    text = (group / name).read_text()
                    if key and any(
                        line.startswith(key) and line.split()[1] != "0"
                        for line in text.splitlines()
                    ):
                        return True
                    if not key and text.strip() not in ("", "0"):
                        return True
        return False

    def remove(self, wait: float = 5.0) -> bool:
        """Wait until empty (killing what remains half-way), then rmdir, retrying until
        ``wait`` seconds passed. False (and a log line) when a directory is still there."""
        deadline = time.monotonic() + wait
        pause = 0.01
        killed = False
        while True:
            members = self.members()
            if members and not killed and time.monotonic() > deadline - wait / 2:
                for pid in members:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                killed = True
            if not members:
                for group in list(self.dirs):
                    try:
                        group.rmdir()
                    except FileNotFoundError:
                        pass
                    except OSError:
                        continue
                    self.dirs.remove(group)
                if not self.dirs:
                    return True
            if time.monotonic() >= deadline:
                log.warning(
                    "build cgroup %s not removed (%d process(es) left); the next start sweeps it",
                    ", ".join(map(str, self.dirs)),
                    len(members),
                )
                return False
            time.sleep(pause)
            pause = min(pause * 2, 0.2)


def sweep(base: Path | None) -> int:
    """Remove build cgroups whose owning server is gone (their processes killed first)."""
    if base is None:
        return 0
    parents = (
        [base] if (base / "cgroup.controllers").is_file() else [base / "memory", base / "pids"]
    )
    removed = 0
    for parent in parents:
        with contextlib.suppress(OSError):
            for group in parent.iterdir():
                if not group.name.startswith(PREFIX) or not group.is_dir():
                    continue
                owner = group.name[len(PREFIX) :].split("-", 1)[0]
                pid, _, started = owner.partition(".")
                alive = pid.isdigit() and _start_time(int(pid)) == started
                if not alive and BuildCgroup([group]).remove(wait=2.0):
                    removed += 1
    if removed:
        log.info("removed %d stale build cgroup(s)", removed)
    return removed
