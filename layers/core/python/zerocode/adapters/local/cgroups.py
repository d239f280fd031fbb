"""A build's cgroup: memory and process limits that are always there when the platform is root.

Build cgroups are children of the server's "builds" cgroup (:mod:`.build_slice`), itself
under the server's own cgroup, which caps all builds together.

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
SLICE = "zerocode-builds-"  # the parent of one server's builds (build_slice.py)
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


def owner_tag() -> str:
    """This server: its pid and start time (a pid alone is reused)."""
    return f"{os.getpid()}.{_start_time(os.getpid())}"


class BuildCgroup:
    def __init__(self, dirs: list[Path]) -> None:
        self.dirs = dirs

    @property
    def procs(self) -> list[str]:
        return [str(group / "cgroup.procs") for group in self.dirs]

    @classmethod
    def make(cls, parents: list[Path], memory_bytes: int, processes: int) -> BuildCgroup:
        """A child of each of ``parents`` (the builds' cgroup: one on v2; memory, pids and
        cpu on v1), with the build's own memory and process caps."""
        name = f"{PREFIX}{owner_tag()}-{secrets.token_hex(4)}"
        made: list[Path] = []
        try:
            for parent in parents:
                group = parent / name
                group.mkdir()
                made.append(group)
                if (parent / "cgroup.controllers").is_file():  # v2
                    (group / "memory.max").write_text(str(memory_bytes))
                    with contextlib.suppress(FileNotFoundError):  # no swap accounting here
                        (group / "memory.swap.max").write_text("0")
                    (group / "pids.max").write_text(str(processes))
                elif (parent / "memory.limit_in_bytes").is_file():  # v1 memory
                    (group / "memory.limit_in_bytes").write_text(str(memory_bytes))
                elif (parent / "pids.max").is_file():  # v1 pids
                    (group / "pids.max").write_text(str(processes))
                # v1 cpu: only the builds' aggregate CPU cap, which holds this build too
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
            # v2 counts kills here, v1 too (oom_control) when a parent's cap (the builds'
            # aggregate) was the one hit, and failcnt when it was this group's own.
            for name, key in (
                ("memory.events", "oom_kill "),
                ("memory.oom_control", "oom_kill "),
                ("memory.failcnt", ""),
            ):
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


def sweep(places: list[Path]) -> int:
    """Remove build cgroups (and builds' parents) whose owning server is gone, their
    processes killed first; ``places`` are the directories they may be in."""
    removed = 0
    for parent in dict.fromkeys(places):
        with contextlib.suppress(OSError):
            for group in parent.iterdir():
                prefix = next((p for p in (PREFIX, SLICE) if group.name.startswith(p)), None)
                if prefix is None or not group.is_dir():
                    continue
                owner = group.name[len(prefix) :].split("-", 1)[0]
                pid, _, started = owner.partition(".")
                alive = pid.isdigit() and _start_time(int(pid)) == started
                if not alive and _remove_tree(group):
                    removed += 1
    if removed:
        log.info("removed %d stale build cgroup(s)", removed)
    return removed


def _remove_tree(group: Path) -> bool:
    """A cgroup and its children, deepest first."""
    with contextlib.suppress(OSError):
        for child in group.iterdir():
            if child.is_dir():
                _remove_tree(child)
    return BuildCgroup([group]).remove(wait=2.0)
