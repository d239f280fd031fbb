"""Build benchmark: Vue builds of one generated project through ``LocalBuilder``, the builder
the platform uses (the platform's build tree, ``vite build``, the ``dist/index.html`` check,
the copy to ``builds/{appId}/{buildId}/``), median of N each, in one run.

Prints JSON, writes bench/results/build.json and the "build" section of docs/benchmarks.md.

    .venv/bin/python bench/build.py            # 3 of each
    .venv/bin/python bench/build.py --runs 1   # smoke run

- cold: an empty npm cache and no installed toolchain: the platform's toolchain is installed
  from its lockfile (``npm ci --ignore-scripts``, once per machine and lockfile), then built.
- warm, sandboxed: the toolchain installed, a new app, built in bubblewrap (what every build
  after the first is).
- warm, unsandboxed: the same under the development override (no bubblewrap), to measure
  what the sandbox costs. Sandboxed and unsandboxed builds alternate, so drift in the
  machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.docs import replace_section  # noqa: E402
from tests.integration.publishing.test_vue_template_builds import created_files  # noqa: E402
from zerocode.adapters.local.builder import LocalBuilder  # noqa: E402
from zerocode.adapters.local.sandbox import Bubblewrap, Unsandboxed, sandbox  # noqa: E402
from zerocode.adapters.local.toolchain_store import ToolchainStore  # noqa: E402
from zerocode.apps.records import CodeGenType  # noqa: E402
from zerocode.publishing.builds import BuildJob, Snapshot, new_build_id  # noqa: E402

DESCRIPTION = "A Vue todo app with an about page"


def timed(builder: LocalBuilder, app_id: str, snapshot: Snapshot) -> float:
    start = time.perf_counter()
    outcome = asyncio.run(
        builder.build(BuildJob(app_id, new_build_id(), CodeGenType.VUE_PROJECT, snapshot))
    )
    seconds = time.perf_counter() - start
    if not outcome.ok:
        raise SystemExit(f"build failed:\n{outcome.log_tail}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    files = created_files(DESCRIPTION)
    snapshot = Snapshot.of({p: c.encode() for p, c in files.items()})
    n = args.runs
    box = sandbox(override=False)
    if not isinstance(box, Bubblewrap):
        raise SystemExit(f"bench/build.py measures the sandbox: {box.refusal}")
    loose = Unsandboxed(box.node)
    with tempfile.TemporaryDirectory(prefix="zc-bench-build-") as tmp:
        work = Path(tmp)
        cold = []
        for i in range(n):
            store = ToolchainStore(work / f"cold-tc-{i}", work / f"cold-npm-{i}")
            cold.append(timed(LocalBuilder(work / f"cold-{i}", box, store), "app0", snapshot))
        store = ToolchainStore(work / "toolchain", work / "npm")
        sandboxed, unsandboxed = (
            LocalBuilder(work / "s", box, store),
            LocalBuilder(work / "u", loose, store),
        )
        timed(sandboxed, "first", snapshot)  # installs the toolchain; not counted
        timed(unsandboxed, "first", snapshot)  # Node's and the disk's caches warm for both
        warm, warm_loose = [], []
        for i in range(n):
            warm.append(timed(sandboxed, f"app{i}", snapshot))
            warm_loose.append(timed(unsandboxed, f"app{i}", snapshot))
        store_mb = sum(f.stat().st_size for f in store.modules.rglob("*") if f.is_file()) / 2**20
    result: dict[str, Any] = {
        "project": DESCRIPTION,
        "runs": args.runs,
        "files": len(files),
        "sandbox": box.description,
        "cold_s": [round(s, 2) for s in cold],
        "warm_sandboxed_s": [round(s, 2) for s in warm],
        "warm_unsandboxed_s": [round(s, 2) for s in warm_loose],
        "cold_median_s": round(statistics.median(cold), 2),
        "warm_sandboxed_median_s": round(statistics.median(warm), 3),
        "warm_unsandboxed_median_s": round(statistics.median(warm_loose), 3),
        "toolchain_mb": round(store_mb, 1),
    }
    result["sandboxed_over_unsandboxed"] = round(
        result["warm_sandboxed_median_s"] / result["warm_unsandboxed_median_s"], 3
    )
    result["warm_over_cold"] = round(result["warm_sandboxed_median_s"] / result["cold_median_s"], 3)
    print(json.dumps(result, indent=2))
    (ROOT / "bench" / "results" / "build.json").write_text(json.dumps(result, indent=2) + "\n")
    if not args.no_docs:
        write_docs(result)


def write_docs(r: dict[str, Any]) -> None:
    lines = [
        "## Builds (`bench/build.py`)",
        "",
        f'The Vue project the offline model generates for "{r["project"]}" '
        f"({r['files']} files), built by `LocalBuilder` (the platform's build tree, "
        "`vite build`, the `dist/index.html` check, the copy to the build's own "
        f"directory); median of {r['runs']} runs each, in one run.",
        "",
        "| build | median s | runs s | ratio |",
        "|---|---:|---|---:|",
        f"| cold: empty npm cache, the toolchain installed first ({r['toolchain_mb']} MB, "
        f"once per machine) | {r['cold_median_s']} | {', '.join(map(str, r['cold_s']))} "
        "| |",
        f"| **warm, sandboxed** ({r['sandbox']}), new app | "
        f"{r['warm_sandboxed_median_s']} | {', '.join(map(str, r['warm_sandboxed_s']))} | "
        f"**{r['sandboxed_over_unsandboxed']}** of unsandboxed; {r['warm_over_cold']} of "
        "cold |",
        f"| warm, unsandboxed (the development override), new app | "
        f"{r['warm_unsandboxed_median_s']} | "
        f"{', '.join(map(str, r['warm_unsandboxed_s']))} | 1.0 |",
        "",
        "Target: a sandboxed warm build ≤ 1.15× an unsandboxed one. Builds no longer "
        "install anything: the toolchain is installed once from the platform's lockfile "
        "and mounted read-only, so a warm build is `vite build` alone.",
    ]
    replace_section("build", lines)


if __name__ == "__main__":
    main()
