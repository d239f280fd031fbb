"""Prerendering at publish (issue 44, point 3): what rendering a Vue site's routes in the
checking browser adds to a deploy.

Prints JSON, writes bench/results/prerender.json and the "prerender" section of
docs/benchmarks.md.

    .venv/bin/python bench/prerender.py              # 10 deploys each way
    .venv/bin/python bench/prerender.py --quick      # 2 (smoke)
    .venv/bin/python bench/prerender.py --docs-only  # docs/benchmarks.md from the last results

In-process, over the local platform (SQLite, offline scripted model, the real Vite build in
its box, the kept Chromium): one Vue app as the offline model first makes it (a home and an
about view), deployed ``runs`` times with prerendering and ``runs`` times without, one
after the other in turns. A deploy is timed from its request to its build's end (its site
published); the prerender's own seconds are read from the build's log line. Each build has
its box started cold (no prepared box), so both sides pay the same start.
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checks import commit, others  # noqa: E402
from bench.docs import replace_section, run  # noqa: E402
from zerocode.apps.records import CodeGenType  # noqa: E402
from zerocode.bootstrap import wiring  # noqa: E402
from zerocode.bootstrap.settings import Settings  # noqa: E402
from zerocode.engine.events import DoneEvent  # noqa: E402
from zerocode.publishing.builds import BuildState  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "prerender.json"
PROMPT = "A Vue todo app with an about page"
_LINE = re.compile(r"prerendered (\d+) route\(s\) in ([0-9.]+) s")


async def deploys(p: Any, count: int) -> list[tuple[float, float, int]]:
    """``count`` deploys of one Vue app: each one's seconds, its prerender's, and routes."""
    app = await p.create_app("bench", PROMPT, CodeGenType.VUE_PROJECT)
    events = [e async for e in p.engine.start(app, PROMPT, None).events()]
    (done,) = [e for e in events if isinstance(e, DoneEvent)]
    assert done.status == "succeeded", done
    found: list[tuple[float, float, int]] = []
    for _ in range(count):
        app = p.apps.get(app.id)
        start = time.perf_counter()
        build = await p.publishing.start_deploy(app)
        await p.publishing.drain()
        took = time.perf_counter() - start
        ended = p.builds.get(app.id, build.id)
        assert ended is not None and ended.state is BuildState.SUCCEEDED, ended
        line = _LINE.search(ended.log_tail)
        seconds, routes = (float(line.group(2)), int(line.group(1))) if line else (0.0, 0)
        found.append((took, seconds, routes))
    return found


def measure(count: int) -> dict[str, Any]:
    load_start, busy = [round(x, 2) for x in os.getloadavg()], others()
    sides: dict[str, list[tuple[float, float, int]]] = {"with": [], "without": []}

    async def in_turns(tmp: str) -> None:  # one loop: the kept browser started once
        for n in range(2 * count + 1):
            side = "with" if n % 2 == 0 else "without"
            settings = Settings(
                data_dir=Path(tmp) / f"data-{n}",
                runtime_check=False,
                prerender=side == "with",
                build_prepared_boxes=0,
            )
            found = await deploys(wiring.platform(settings), 1)
            if n > 0:  # the first starts the browser and warms the toolchain: not counted
                sides[side] += found

    with tempfile.TemporaryDirectory(prefix="zerocode-prerender-bench-") as tmp:
        asyncio.run(in_turns(tmp))
    with_, without = sides["with"], sides["without"]
    routes = {r for _, _, r in with_}
    assert routes and 0 not in routes, with_
    return {
        "commit": commit(),
        "cpus": os.cpu_count(),
        "load_start": load_start,
        "busy": busy,
        "runs": count,
        "routes": sorted(routes),
        "deploy_s_p50_with": round(statistics.median(t for t, _, _ in with_), 2),
        "deploy_s_p50_without": round(statistics.median(t for t, _, _ in without), 2),
        "prerender_s_p50": round(statistics.median(s for _, s, _ in with_), 2),
        "prerender_s_max": round(max(s for _, s, _ in with_), 2),
    }


def write_docs(r: dict[str, Any]) -> None:
    busy = f"; other work on the machine: {', '.join(r['busy'])}" if r["busy"] else ""
    added = r["deploy_s_p50_with"] - r["deploy_s_p50_without"]
    lines = [
        "## Prerendering at publish (`bench/prerender.py`, issue 44)",
        "",
        f"At {r['commit']}, {r['cpus']} cores, load {r['load_start'][0]} at the start{busy}. "
        f"One Vue app as the offline model first makes it ({r['routes'][0]} routes: home and "
        f"about), deployed {r['runs']} times with prerendering and {r['runs']} without, in "
        "turns, each on a fresh local platform with its box started cold. A deploy is timed "
        "from its request to its site published; the prerender's seconds are its build log's.",
        "",
        "| | median |",
        "|---|---:|",
        f"| deploy, with prerendering | {r['deploy_s_p50_with']} s |",
        f"| deploy, without | {r['deploy_s_p50_without']} s |",
        f"| the prerender itself (log) | {r['prerender_s_p50']} s (max {r['prerender_s_max']} s) |",
        "",
        f"Prerendering adds about {added:.2f} s to a deploy of this app (the difference of the "
        "medians), with the kept browser already running, as it is on a server that checks "
        "previews (a first deploy after a start would add the browser's start; it is "
        "not counted). It is bounded at 30 s and 30 routes a build, whatever the app.",
    ]
    replace_section("prerender", lines)


def main() -> None:
    run(
        __doc__ or "",
        RESULTS,
        measure,
        write_docs,
        count=("runs", "deploys each way", 2, 10),
    )


if __name__ == "__main__":
    main()
