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
- hand-over: the output leaving the box (``tar`` in a second, read-only box, unpacked by the
  host's rules), timed alone, for the project's ``dist/`` and for a large synthetic one.
- event loop: the largest gap between 5 ms ticks of the server's loop while a build prints
  without end (stopped at the 1 MiB output limit): logs are read off the loop.

Builds start warm (issue 28, point 3), a mode of its own that writes bench/results/
build_warm.json and the "warm-start" section of docs/builds.md:

    .venv/bin/python bench/build.py warm            # 20 rounds
    .venv/bin/python bench/build.py warm --quick    # 3

Each round builds the same project four ways, in turn (so drift in the machine's load falls
on all alike), and records the box's part (the ``vite build`` process: from the box's start,
or for a prepared box from its build's start) and the whole ``build()``; with the machine's
load (``/proc/loadavg``) before and after:
- today: the path before this change, Node 20 (the system's) and no compile cache, a box
  opened for the build and ``vite build`` run in it;
- cold, no cache: the toolchain's Node 22, a box started for the build, no compile cache;
- cold: the same with the compile cache (what a build gets when nothing was prepared);
- prepared: a box prepared for the app a second before its build (the model still working).
And, to show the compile cache is used, the time Node 22 takes in a box to import Vite, the
Vue plugin and the SFC compiler, with and without it.
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
from zerocode.adapters.local.builder import BOX_SAID, LocalBuilder  # noqa: E402
from zerocode.adapters.local.sandbox import (  # noqa: E402
    Bubblewrap,
    Limits,
    Sandbox,
    Unsandboxed,
    sandbox,
)
from zerocode.adapters.local.toolchain_store import ToolchainStore  # noqa: E402
from zerocode.apps.records import CodeGenType  # noqa: E402
from zerocode.apps.workspace import Snapshot  # noqa: E402
from zerocode.publishing import output_archive, toolchain  # noqa: E402
from zerocode.publishing.builds import BuildJob, new_build_id  # noqa: E402

DESCRIPTION = "A Vue todo app with an about page"


def timed(builder: LocalBuilder, app_id: str, snapshot: Snapshot) -> float:
    start = time.perf_counter()
    outcome = asyncio.run(
        builder.build(
            BuildJob(
                app_id=app_id,
                build_id=new_build_id(),
                kind=CodeGenType.VUE_PROJECT,
                source=snapshot,
            )
        )
    )
    seconds = time.perf_counter() - start
    if not outcome.ok:
        raise SystemExit(f"build failed:\n{outcome.log_tail}")
    return seconds


async def handover(box: Sandbox, modules: Path, work: Path, script: str | None) -> dict[str, Any]:
    """Build (vite, or ``script`` writing a synthetic dist/), then time the hand-over alone."""
    project = work / "project"
    project.mkdir(parents=True)
    tree = toolchain.build_tree(dict(SOURCE))
    for path, data in tree.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_bytes(data)
    if script is not None:
        (project / "make.cjs").write_text(script)
    async with box.open(project, modules, Limits()) as session:
        argv = ["node", "make.cjs"] if script else ["node", *toolchain.VITE_ARGS]
        built = await session.run(argv)
        assert built.ok, built.log
        got: list[output_archive.Unpacked] = []
        start = time.perf_counter()
        run = await session.export(
            "dist", lambda s: got.append(output_archive.unpack(s, work / "out"))
        )
        seconds = time.perf_counter() - start
    assert run.ok and got, run.log
    return {"files": got[0].files, "kib": got[0].bytes // 1024, "ms": round(seconds * 1000, 1)}


async def loop_gap(box: Sandbox, modules: Path, work: Path) -> float:
    """The worst gap (ms) between 5 ms ticks of this loop while a build prints without end."""
    project = work / "printer"
    project.mkdir(parents=True)
    (project / "p.cjs").write_text(
        "const fs = require('fs'); for (;;) fs.writeSync(1, 'x\\n'.repeat(512))"
    )
    task = asyncio.create_task(sandbox_run(box, project, modules))
    worst = 0.0
    while not task.done():
        start = time.perf_counter()
        await asyncio.sleep(0.005)
        worst = max(worst, time.perf_counter() - start - 0.005)
    await task
    return round(worst * 1000, 1)


async def sandbox_run(box: Sandbox, project: Path, modules: Path) -> None:
    async with box.open(project, modules, Limits()) as session:
        run = await session.run(["node", "p.cjs"])
    assert not run.ok and "printed more than" in (run.reason or ""), run.log


SOURCE = {p: c.encode() for p, c in created_files(DESCRIPTION).items()}
BIG_DIST = """const fs = require('fs'); fs.mkdirSync('dist/assets', {recursive: true});
fs.writeFileSync('dist/index.html', '<h1>big</h1>');
for (let i = 0; i < 2000; i++) fs.writeFileSync('dist/assets/f' + i + '.js', 'x'.repeat(10240));
"""


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
        modules = store.modules
        handed = [asyncio.run(handover(box, modules, work / f"h{i}", None)) for i in range(n)]
        handed_big = [
            asyncio.run(handover(box, modules, work / f"hb{i}", BIG_DIST)) for i in range(n)
        ]
        gaps = [asyncio.run(loop_gap(box, modules, work / f"g{i}")) for i in range(n)]
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
        "handover_project": handed[0] | {"ms": statistics.median(h["ms"] for h in handed)},
        "handover_big": handed_big[0] | {"ms": statistics.median(h["ms"] for h in handed_big)},
        "loop_gap_ms": gaps,
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
    hp, hb = r["handover_project"], r["handover_big"]
    gaps = ", ".join(map(str, r["loop_gap_ms"]))
    lines = [
        "## Builds (`bench/build.py`)",
        "",
        f'The Vue project the offline model generates for "{r["project"]}" '
        f"({r['files']} files), built by `LocalBuilder` (the platform's build tree, "
        "`vite build`, `dist/` handed over as a tar stream and unpacked into the build's "
        "own directory, the `dist/index.html` check; unsandboxed, the host's tar does the "
        f"hand-over); median of {r['runs']} runs each, in one run.",
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
        "",
        "The hand-over (the output leaving the box as one tar stream written in a second, "
        "read-only box and unpacked by the host's rules; median of the runs), part of every "
        "sandboxed build above:",
        "",
        "| output | files | KiB | ms |",
        "|---|---:|---:|---:|",
        f"| the project's dist/ | {hp['files']} | {hp['kib']} | {hp['ms']} |",
        f"| synthetic: 2,000 files of 10 KiB | {hb['files']} | {hb['kib']} | {hb['ms']} |",
        "",
        "Largest gap between 5 ms ticks of the event loop while a build prints without end "
        f"(until the 1 MiB output limit stops it), per run: {gaps} ms (logs are read and "
        "parsed in a thread of their own; before, 1 MiB of short lines held the loop 1.7 s).",
    ]
    replace_section("build", lines)


class _NoCache(LocalBuilder):
    async def _compile_cache(self, modules: Path) -> Path | None:
        return None


def _job(app_id: str, snapshot: Snapshot) -> BuildJob:
    return BuildJob(
        app_id=app_id, build_id=new_build_id(), kind=CodeGenType.VUE_PROJECT, source=snapshot
    )


def _box_part(log_tail: str) -> float:
    line = next(x for x in log_tail.splitlines() if x.startswith(BOX_SAID))
    return float(line[len(BOX_SAID) :].split()[0])


async def _today(box: Bubblewrap, modules: Path, work: Path) -> tuple[float, float]:
    """The path before: Node 20 from the system, no compile cache, a box opened for the
    build; the tree written, ``vite build``, the hand-over."""
    start = time.perf_counter()
    project = work / f"t{time.time_ns()}"
    project.mkdir(parents=True)
    for path, data in toolchain.build_tree(dict(SOURCE)).items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_bytes(data)
    async with box.open(project, modules, Limits()) as session:
        began = time.perf_counter()
        run = await session.run(["/usr/bin/node", *toolchain.VITE_ARGS])
        box_s = time.perf_counter() - began
        assert run.ok, run.log
        handed = await session.export(
            "dist", lambda s: output_archive.unpack(s, project.with_name(project.name + "o"))
        )
        assert handed.ok, handed.log
    return box_s, time.perf_counter() - start


IMPORTS = """import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
const start = performance.now()
await import('/build/node_modules/vite/dist/node/index.js')
await import('/build/node_modules/@vitejs/plugin-vue/dist/index.mjs')
createRequire(import.meta.url)('/build/node_modules/vue/compiler-sfc/index.js')
console.log(((performance.now() - start) / 1000).toFixed(4))
"""


async def _imports(box: Bubblewrap, modules: Path, work: Path, cache: Path | None) -> float:
    """Seconds Node 22 takes, inside a box, to import Vite, the Vue plugin and the SFC
    compiler (what a prepared box loads ahead), with or without the compile cache."""
    project = work / f"i{time.time_ns()}"
    project.mkdir(parents=True)
    (project / "imports.mjs").write_text(IMPORTS)
    async with box.open(project, modules, Limits(), cache=cache) as session:
        run = await session.run(["node", "imports.mjs"])
    assert run.ok, run.log
    return float(run.log[-1])


def _load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def measure_warm(n: int) -> dict[str, Any]:
    from zerocode.bootstrap.settings import Settings

    box = sandbox(override=False)
    if not isinstance(box, Bubblewrap):
        raise SystemExit(f"bench/build.py measures the sandbox: {box.refusal}")
    snapshot = Snapshot.of(dict(SOURCE))
    names = ("today", "cold_no_cache", "cold", "prepared")
    box_s: dict[str, list[float]] = {k: [] for k in names}
    build_s: dict[str, list[float]] = {k: [] for k in names}
    loads: list[list[float]] = []
    imports: dict[str, list[float]] = {"imports_cache": [], "imports_no_cache": []}
    with tempfile.TemporaryDirectory(prefix="zc-bench-warm-") as tmp:
        work = Path(tmp)
        store = ToolchainStore(work / "toolchain", Settings().npm_cache)
        builder = LocalBuilder(work / "data", box, store)
        bare = _NoCache(work / "data-nc", box, store)

        async def rounds() -> None:
            modules, said = await store.ensure()
            assert modules is not None, said
            warmed = await builder._compile_cache(modules)
            assert warmed is not None, "the compile cache was not made"
            for label in ("first", "second"):  # the disk's and the kernel's caches warm
                assert (await builder.build(_job(label, snapshot))).ok
                await _today(box, modules, work / "today")
            loads.append(_load())
            for i in range(n):
                for key, cached in (("imports_cache", warmed), ("imports_no_cache", None)):
                    imports[key].append(await _imports(box, modules, work / "imp", cached))
                b, t = await _today(box, modules, work / "today")
                box_s["today"].append(b)
                build_s["today"].append(t)
                for name, who in (("cold_no_cache", bare), ("cold", builder)):
                    start = time.perf_counter()
                    done = await who.build(_job(f"{name[:4]}{i}", snapshot))
                    build_s[name].append(time.perf_counter() - start)
                    assert done.ok, done.log_tail
                    box_s[name].append(_box_part(done.log_tail))
                app = f"prep{i}"
                assert await builder.prepare_box(app) is not None
                await asyncio.sleep(1.0)  # the model is still working
                start = time.perf_counter()
                done = await builder.build(_job(app, snapshot))
                build_s["prepared"].append(time.perf_counter() - start)
                assert done.ok and "prepared ahead" in done.log_tail, done.log_tail
                box_s["prepared"].append(_box_part(done.log_tail))
            loads.append(_load())

        asyncio.run(rounds())
    med = {k: round(statistics.median(v), 3) for k, v in box_s.items()}
    result: dict[str, Any] = {
        "project": DESCRIPTION,
        "rounds": n,
        "sandbox": box.description,
        "node": {"today": "system Node 20 (/usr/bin/node)", "now": "toolchain Node 22.23.5"},
        "loadavg_before_after": loads,
        "box_median_s": med,
        "build_median_s": {k: round(statistics.median(v), 3) for k, v in build_s.items()},
        "box_p90_s": {k: round(sorted(v)[int(0.9 * (len(v) - 1))], 3) for k, v in box_s.items()},
        "imports_median_s": {k: round(statistics.median(v), 3) for k, v in imports.items()},
        "box_s": {k: [round(x, 3) for x in v] for k, v in box_s.items()},
        "build_s": {k: [round(x, 3) for x in v] for k, v in build_s.items()},
    }
    result["box_over_today"] = {k: round(v / med["today"], 2) for k, v in med.items()}
    return result


def write_warm_docs(r: dict[str, Any]) -> None:
    """The "warm-start" section of docs/builds.md (docs/benchmarks.md is written by others)."""
    box, whole, ratio = r["box_median_s"], r["build_median_s"], r["box_over_today"]
    rows = {
        "today": "before: Node 20, no compile cache, box opened for the build",
        "cold_no_cache": "Node 22, box started for the build, no compile cache",
        "cold": "Node 22 + compile cache, box started for the build (nothing prepared)",
        "prepared": "**Node 22 + compile cache, box prepared ahead**",
    }
    lines = [
        f"Measured by `bench/build.py warm` ({r['rounds']} rounds, the four in turn each "
        f'round; the project the offline model writes for "{r["project"]}"; {r["sandbox"]}; '
        f"load average before/after {r['loadavg_before_after']}):",
        "",
        "| build | box's part, median s | p90 s | of today | whole build(), median s |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {label} | {box[k]} | {r['box_p90_s'][k]} | {ratio[k]} | {whole[k]} |"
            for k, label in rows.items()
        ),
    ]
    if "imports_median_s" in r:
        got = r["imports_median_s"]
        lines += [
            "",
            "The compile cache alone: Node 22 importing Vite, the Vue plugin and the SFC "
            f"compiler inside a box, median {got['imports_cache']} s with the read-only cache, "
            f"{got['imports_no_cache']} s without.",
        ]
    path = ROOT / "docs" / "builds.md"
    text = path.read_text()
    start, end = "<!-- warm-start:start -->", "<!-- warm-start:end -->"
    section = "\n".join([start, *lines, end])
    if start in text:
        text = text[: text.index(start)] + section + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


if __name__ == "__main__":
    if sys.argv[1:2] == ["warm"]:
        from bench.docs import run

        sys.argv.pop(1)
        run(
            __doc__ or "",
            ROOT / "bench" / "results" / "build_warm.json",
            measure_warm,
            write_warm_docs,
            count=("runs", "rounds", 3, 20),
        )
    else:
        main()
