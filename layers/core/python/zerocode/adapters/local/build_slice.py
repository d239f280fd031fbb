"""Where build cgroups go: one "builds" cgroup under the server's own, with an aggregate cap.

Builds made at the root of the hierarchy escaped the server's limits (a build held 1.2 GB
while the server sat in a 400 MiB memory cgroup), and 64 uids x 2 GiB allowed 128 GiB on a
24 GiB machine. Now every build's cgroup is a child of one parent, ``zerocode-builds-{owner}``,
made under the cgroup the server itself runs in (read from ``/proc/self/cgroup``, per
controller on v1), so the kernel charges all builds to the server's own limit too, and the
parent caps their sum: memory (half of the smaller of the machine's RAM and the server's own
memory limit), processes and CPU (three quarters of the cores), sized by :func:`size`. Each
build's own cap (``ZEROCODE_BUILD_MEMORY_MB`` ...) stays under it.
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
from dataclasses import dataclass
from pathlib import Path

from zerocode.adapters.local import cgroups
from zerocode.adapters.local.cgroups import CgroupUnavailable, owner_tag

SLICE = "zerocode-builds-"
LEAF = "zerocode-server"  # v2: where the server moves itself when its cgroup must be a parent
PERIOD = 100_000  # µs: the CPU cap's period
UNLIMITED = 1 << 60  # v1 says "no limit" with a huge number


@dataclass(frozen=True)
class Aggregate:
    """What all builds of one server may use together."""

    memory_bytes: int
    processes: int
    cpu_quota_us: int  # per PERIOD

    @property
    def cpus(self) -> float:
        return self.cpu_quota_us / PERIOD

    def describe(self) -> str:
        return (
            f"{self.memory_bytes / (1 << 30):.1f} GiB, {self.processes} processes, "
            f"{self.cpus:g} CPUs for all builds"
        )


def size(ram: int, server_limit: int | None, cores: int, threads_max: int) -> Aggregate:
    """Half of the memory the server may have (the machine's, or less when its own cgroup is
    limited: the other half is the server's, its browser's and the system's), three quarters
    of the cores (at least one), and a quarter of the kernel's threads (at most 4,096)."""
    budget = min(ram, server_limit) if server_limit else ram
    return Aggregate(
        memory_bytes=max(budget // 2, 1 << 20),
        processes=max(64, min(4096, threads_max // 4)),
        cpu_quota_us=max(PERIOD, cores * PERIOD * 3 // 4),
    )


def slots(aggregate: Aggregate, build_memory: int, cores: int) -> int:
    """How many builds run at once by default: as many as fit the aggregate memory at their
    own cap, and no more than two per core (more only slows every build), at least one."""
    return max(1, min(aggregate.memory_bytes // build_memory, 2 * cores))


def own_paths(proc_cgroup: str) -> dict[str, str]:
    """``/proc/self/cgroup`` as controller → path ("" for v2's unified line)."""
    found: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            found[controller] = parts[2]
    return found


def server_memory_limit(group: Path, top: Path, key: str) -> int | None:
    """The smallest memory limit from the server's cgroup up to the hierarchy's root."""
    best: int | None = None
    here = group
    while True:
        with contextlib.suppress(OSError, ValueError):
            text = (here / key).read_text().strip()
            if text != "max" and int(text) < UNLIMITED:
                best = int(text) if best is None else min(best, int(text))
        if here == top or top not in here.parents:
            return best
        here = here.parent


def here(base: Path, proc_cgroup: str | None = None) -> tuple[Aggregate, int | None]:
    """This machine's aggregate for builds, and the server's own memory limit (or None)."""
    own = own_paths(proc_cgroup or Path("/proc/self/cgroup").read_text())
    if (base / "cgroup.controllers").is_file():
        group = base / own.get("", "/").lstrip("/")
        limit = server_memory_limit(group, base, "memory.max")
    else:
        top = base / "memory"
        group = top / own.get("memory", "/").lstrip("/")
        limit = server_memory_limit(group, top, "memory.limit_in_bytes")
    ram, cores, threads = machine()
    return size(ram, limit, cores, threads), limit


def machine() -> tuple[int, int, int]:
    """RAM, cores and the kernel's thread limit of this machine."""
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    threads = 32_768
    with contextlib.suppress(OSError, ValueError):
        threads = int(Path("/proc/sys/kernel/threads-max").read_text())
    return ram, len(os.sched_getaffinity(0)), threads


@dataclass
class BuildSlice:
    """The parent of this server's build cgroups: ``dirs`` (one on v2; memory, pids and cpu
    on v1), capped at ``aggregate``."""

    dirs: list[Path]
    aggregate: Aggregate
    server_limit: int | None

    @classmethod
    def make(cls, base: Path, proc_cgroup: str | None = None) -> BuildSlice:
        """Made (or taken again: one per server process) under the server's own cgroup."""
        own = own_paths(proc_cgroup or Path("/proc/self/cgroup").read_text())
        name = f"{SLICE}{owner_tag()}"
        try:
            aggregate, limit = here(base, proc_cgroup)
            if (base / "cgroup.controllers").is_file():
                made = cls._make_v2(base, own.get("", "/"), name, aggregate, limit)
            else:
                made = cls._make_v1(base, own, name, aggregate, limit)
        except OSError as exc:
            raise CgroupUnavailable(
                f"the builds' cgroup under the server's own could not be made: {exc}"
            ) from None
        atexit.register(made.remove)
        return made

    @classmethod
    def _make_v1(
        cls, base: Path, own: dict[str, str], name: str, aggregate: Aggregate, limit: int | None
    ) -> BuildSlice:
        places = {c: base / c / own.get(c, "/").lstrip("/") for c in ("memory", "pids", "cpu")}
        dirs = []
        for controller, parent in places.items():
            if controller == "cpu" and not (parent / "cpu.cfs_quota_us").is_file():
                continue  # no CPU controller mounted: memory and processes only
            group = parent / name
            group.mkdir(exist_ok=True)
            dirs.append(group)
            if controller == "memory":
                with contextlib.suppress(OSError):  # always 1 on recent kernels
                    (group / "memory.use_hierarchy").write_text("1")
                (group / "memory.limit_in_bytes").write_text(str(aggregate.memory_bytes))
            elif controller == "pids":
                (group / "pids.max").write_text(str(aggregate.processes))
            else:
                (group / "cpu.cfs_period_us").write_text(str(PERIOD))
                (group / "cpu.cfs_quota_us").write_text(str(aggregate.cpu_quota_us))
        return cls(dirs, aggregate, limit)

    @classmethod
    def _make_v2(
        cls, base: Path, own_path: str, name: str, aggregate: Aggregate, limit: int | None
    ) -> BuildSlice:
        parent = base / own_path.lstrip("/")
        if parent.name == LEAF:  # the server moved itself there before: its parent is its own
            parent = parent.parent
        wanted = {"memory", "pids"}
        offered = set((parent / "cgroup.controllers").read_text().split())
        if not wanted <= offered:
            raise OSError(errno.ENOTSUP, f"{parent} offers no {' '.join(wanted - offered)}")
        enable = " ".join(f"+{c}" for c in sorted(wanted | ({"cpu"} & offered)))
        try:
            (parent / "cgroup.subtree_control").write_text(enable)
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
            # A v2 cgroup with processes in it has no children with controllers (the real
            # root excepted; a container's is not): the server moves itself into a leaf of
            # its own cgroup (same limits), then enables them.
            leaf = parent / LEAF
            leaf.mkdir(exist_ok=True)
            (leaf / "cgroup.procs").write_text(str(os.getpid()))
            (parent / "cgroup.subtree_control").write_text(enable)
        group = parent / name
        group.mkdir(exist_ok=True)
        (group / "cgroup.subtree_control").write_text(enable)
        (group / "memory.max").write_text(str(aggregate.memory_bytes))
        with contextlib.suppress(FileNotFoundError):
            (group / "memory.swap.max").write_text("0")
        (group / "pids.max").write_text(str(aggregate.processes))
        if "cpu" in offered:
            (group / "cpu.max").write_text(f"{aggregate.cpu_quota_us} {PERIOD}")
        return cls([group], aggregate, limit)

    def remove(self) -> None:
        """At the server's exit: its builds' cgroup goes when empty (else the next start's
        sweep removes it)."""
        for group in self.dirs:
            with contextlib.suppress(OSError):
                group.rmdir()

    def describe(self) -> str:
        within = (
            f"the server's {self.server_limit / (1 << 20):.0f} MiB"
            if self.server_limit
            else "the machine's RAM"
        )
        return f"builds under the server's cgroup, within {within}: {self.aggregate.describe()}"

    def places(self) -> list[Path]:
        """Where stale build cgroups may be: these parents' parents (other slices of dead
        servers) and the hierarchy's roots (the layout before slices)."""
        return [group.parent for group in self.dirs]


def builds_cgroup(*, use: bool) -> tuple[list[Path] | None, str]:
    """The builds' cgroup under the server's own (stale ones of dead servers swept), and
    what it caps; None when this platform makes no cgroups (not root, no hierarchy)."""
    base = cgroups.root() if use else None
    if base is None:
        return None, ""
    roots = [base, *(base / c for c in ("memory", "pids", "cpu"))]
    try:
        made = BuildSlice.make(base)
    finally:
        cgroups.sweep(roots)  # the layout before slices too
    cgroups.sweep(made.places())
    return made.dirs, made.describe()
