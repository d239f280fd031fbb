"""Where the suite's CPU goes, module by module (issue 40, point 2): with
``ZEROCODE_TEST_CPU_DIR`` set, each test process writes, per module, the wall time its tests
took and the CPU time spent meanwhile by the process and its descendants (servers, builds, the
Playwright driver with its Chromium), as ``<worker>.json`` in that directory. A process
that leaves the tree (a daemon re-parented to init) is not counted.

    ZEROCODE_TEST_CPU_DIR=/tmp/cpu make test
    .venv/bin/python -m tests.module_cpu /tmp/cpu      # the table, most CPU first
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

_TICK = os.sysconf("SC_CLK_TCK")


def _cpu() -> float:
    """This process's CPU, its reaped children's, and what its live descendants have spent
    so far (with what they reaped): a server or browser kept for many modules is charged to
    each module as it works for it, not to the module that happens to stop it."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime + _live_descendants()


def _live_descendants() -> float:
    return descendants_cpu(os.getpid())


def descendants_cpu(root: int) -> float:
    """CPU seconds spent so far by ``root``'s live descendants (with what they reaped)."""
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue  # ended meanwhile
        pid = int(entry.name)
        parent[pid] = int(fields[1])
        ticks[pid] = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    mine, total = {root}, 0
    changed = True
    while changed:
        changed = False
        for pid, ppid in parent.items():
            if ppid in mine and pid not in mine:
                mine.add(pid)
                changed = True
    for pid in mine - {root}:
        total += ticks[pid]
    return total / _TICK


class ModuleCpu:
    """Charges each test's span (setup, call, teardown) to its module."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.cpu: dict[str, float] = defaultdict(float)
        self.wall: dict[str, float] = defaultdict(float)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> object:
        module = item.nodeid.split("::", 1)[0]
        cpu, wall = _cpu(), time.monotonic()
        yield
        self.cpu[module] += _cpu() - cpu
        self.wall[module] += time.monotonic() - wall

    def pytest_sessionfinish(self) -> None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        figures = {
            m: {"cpu": round(self.cpu[m], 2), "wall": round(self.wall[m], 2)} for m in self.cpu
        }
        figures["(process total)"] = {"cpu": round(_cpu(), 2), "wall": 0.0}
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / f"{worker}.json").write_text(json.dumps(figures, indent=1))


def register(config: pytest.Config) -> None:
    where = os.environ.get("ZEROCODE_TEST_CPU_DIR")
    if where:
        config.pluginmanager.register(ModuleCpu(Path(where)), "zerocode-module-cpu")


def main(where: str) -> None:
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    paths = sorted(Path(where).glob("*.json"))
    if any(p.stem.startswith("gw") for p in paths):  # xdist: the controller's children are
        paths = [p for p in paths if p.stem != "main"]  # the workers, counted already
    for path in paths:
        for module, f in json.loads(path.read_text()).items():
            cpu[module] += f["cpu"]
            wall[module] += f["wall"]
    modules = [m for m in cpu if not m.startswith("(")]
    print(
        f"modules: {len(modules)}, CPU in tests {sum(cpu[m] for m in modules):.0f} s, "
        f"worker processes in all {cpu['(process total)']:.0f} CPU-s, "
        f"wall in tests {sum(wall[m] for m in modules):.0f} s"
    )
    print("| module | CPU-s | wall s | CPU/wall |")
    print("|---|---:|---:|---:|")
    for m in sorted(modules, key=lambda m: -cpu[m])[:40]:
        share = cpu[m] / wall[m] if wall[m] else 0.0
        print(f"| `{m}` | {cpu[m]:.1f} | {wall[m]:.1f} | {share:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
