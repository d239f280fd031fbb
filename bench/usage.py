"""Usage accounting benchmark (issue 43): what keeping each model request in the usage ledger
costs a turn and an app's creation.

Prints JSON, writes bench/results/usage.json and the "usage" section of docs/benchmarks.md.

    .venv/bin/python bench/usage.py               # 150 turns and 60 creations per configuration
    .venv/bin/python bench/usage.py --quick       # 20 and 10 (smoke)
    .venv/bin/python bench/usage.py --docs-only   # docs/benchmarks.md from the last results

In-process, over the local platform (SQLite, offline scripted model, no runtime check, no
covers): the engine's turn as ``bench/turn.py``'s overhead part runs it, without HTTP and
SSE around it, so what differs between the configurations is not lost in their noise. Three
configurations, each its own data directory and html app:

- ``off``: no ledger (``EngineParts(usage=None)``): the turn counts its tokens for ``done``
  only; no budget is read, nothing is written.
- ``ledger``: the SQLite ledger, as `zerocode serve` wires it: each request recorded (its row,
  its app's, account's and model's day, one transaction) and the account's budget read before each
  request; no prices.
- ``ledger+prices``: the same with ``ZEROCODE_MODEL_PRICES`` set for every model the offline
  model answers as, so each request is priced too.

Turns are change turns of one request each (the page's heading), the configurations taking
turns one after another so that drift on the machine falls on all three alike; each turn is
timed from ``Engine.start`` to its ``done``. App creations (routing and naming: two requests,
both kept under turn 0) are timed the same way. A few of each first, not counted, warm up.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checks import commit, others, pct  # noqa: E402
from bench.docs import replace_section, run  # noqa: E402
from zerocode.bootstrap import wiring  # noqa: E402
from zerocode.bootstrap.platform import Platform  # noqa: E402
from zerocode.bootstrap.settings import Settings  # noqa: E402
from zerocode.engine.events import DoneEvent  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "usage.json"
CONFIGS = ("off", "ledger", "ledger+prices")
PRICE = {"input": 2.5, "output": 10.0, "cached": 1.25}
WARM = 5


def platform(data_dir: Path, config: str) -> Platform:
    prices = {m: PRICE for m in ("gpt-4o", "gpt-4o-mini")} if config == "ledger+prices" else {}
    p = wiring.platform(
        Settings(data_dir=data_dir, runtime_check=False, covers=False, model_prices=prices)
    )
    if config == "off":
        p.engine.usage = None  # the namer's meter is built from it: nothing kept there either
    return p


def ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 2),
        "p95": round(pct(values, 95), 2),
        "mean": round(statistics.fmean(values), 2),
    }


async def turn(p: Platform, app: Any, n: int) -> float:
    start = time.perf_counter()
    events = [
        e async for e in p.engine.start(app, f'Change the heading to "Title {n}"', None).events()
    ]
    took = (time.perf_counter() - start) * 1000
    (done,) = [e for e in events if isinstance(e, DoneEvent)]
    assert done.status == "succeeded", done
    return took


async def creation(p: Platform, n: int) -> float:
    start = time.perf_counter()
    await p.create_app("bench", f"A page about otters number {n}", None)
    return (time.perf_counter() - start) * 1000


def measure(count: int) -> dict[str, Any]:
    load_start, busy = [round(x, 2) for x in os.getloadavg()], others()
    creations = max(10, count * 2 // 5)
    with tempfile.TemporaryDirectory(prefix="zerocode-usage-bench-") as tmp:
        ps = {c: platform(Path(tmp) / c.replace("+", "-"), c) for c in CONFIGS}
        apps = {
            c: asyncio.run(p.create_app("bench", "A page about otters", None))
            for c, p in ps.items()
        }
        turns: dict[str, list[float]] = {c: [] for c in CONFIGS}
        made: dict[str, list[float]] = {c: [] for c in CONFIGS}
        began = time.perf_counter()
        for n in range(WARM + count):
            for c in CONFIGS:
                took = asyncio.run(turn(ps[c], apps[c], n))
                if n >= WARM:
                    turns[c].append(took)
        for n in range(WARM + creations):
            for c in CONFIGS:
                took = asyncio.run(creation(ps[c], n))
                if n >= WARM:
                    made[c].append(took)
        seconds = round(time.perf_counter() - began, 1)
        kept = {}  # what the ledger holds of each configuration's first app: every request
        for c, p in ps.items():
            ledger, last = p.engine.usage, p.memory.head(apps[c].id).turn
            kept[c] = (
                0
                if ledger is None
                else sum(len(ledger.of_turn(apps[c].id, t)) for t in range(last + 1))
            )
    base = ms(turns["off"])
    return {
        "commit": commit(),
        "cpus": os.cpu_count(),
        "load_start": load_start,
        "load_end": [round(x, 2) for x in os.getloadavg()],
        "busy": busy,
        "seconds": seconds,
        "turns": count,
        "creations": creations,
        "turn_ms": {c: ms(v) for c, v in turns.items()},
        "creation_ms": {c: ms(v) for c, v in made.items()},
        "turn_p50_delta_ms": {c: round(ms(turns[c])["p50"] - base["p50"], 2) for c in CONFIGS},
        "requests_kept_of_first_app": kept,  # its 2 at creation + 1 per turn
    }


def write_docs(r: dict[str, Any]) -> None:
    t, c = r["turn_ms"], r["creation_ms"]
    rows = [
        f"| {name} | {t[name]['p50']} | {t[name]['p95']} | {c[name]['p50']} | {c[name]['p95']} |"
        for name in CONFIGS
    ]
    busy = f"; other work on the machine: {', '.join(r['busy'])}" if r["busy"] else ""
    lines = [
        "## Usage accounting: what keeping each request costs (`bench/usage.py`, issue 43)",
        "",
        f"At {r['commit']}, {r['cpus']} cores, load {r['load_start'][0]} at the start{busy}. "
        f"In-process (no HTTP): {r['turns']} one-request html change turns and "
        f"{r['creations']} app creations (routing + naming: two requests) per configuration, "
        "the configurations interleaved; ms from start to done. (Issue 43 asked for this in "
        "`bench/turn.py`; that bench measures the server over HTTP, ledger on as served, and "
        "its spread is far larger than the effect, so it is measured here, in-process.)",
        "",
        "| configuration | turn p50 | turn p95 | creation p50 | creation p95 |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
        "`off`: no ledger (`EngineParts(usage=None)`); `ledger`: the SQLite ledger, each request "
        "recorded in one transaction (its row, its app's, account's and model's day) and the "
        "account's budget read before each request; `+prices`: each request priced as well. "
        + verdict(r)
        + " An earlier run at 493d841 (load 3.6 at its start) measured +0.19 ms and +0.27 ms: "
        "the difference is a fraction of a millisecond, a few per cent of a turn's own time, "
        "and moves by about as much from run to run.",
    ]
    replace_section("usage", lines)


def verdict(r: dict[str, Any]) -> str:
    t, c = r["turn_ms"], r["creation_ms"]
    d = {k: round(t[k]["p50"] - t["off"]["p50"], 2) for k in CONFIGS}
    made = {k: round(c[k]["p50"] - c["off"]["p50"], 2) for k in CONFIGS}
    return (
        f"Turn p50 against `off`: {d['ledger']:+.2f} ms with the ledger, "
        f"{d['ledger+prices']:+.2f} ms with prices too: {noise(t)}. A creation, whose two model "
        f"requests are answered in a few ms by the offline model, shows the writes: "
        f"{made['ledger']:+.2f} ms ({made['ledger+prices']:+.2f} ms priced) at p50 for its two "
        "ledger transactions."
    )


def noise(t: dict[str, dict[str, float]]) -> str:
    """Whether the turn's p50 moved beyond what the runs' own spread (p95 − p50) allows."""
    spread = min(t[k]["p95"] - t[k]["p50"] for k in CONFIGS)
    moved = max(abs(t[k]["p50"] - t["off"]["p50"]) for k in CONFIGS)
    if moved <= 0.1 * spread:
        return f"p50 unchanged within noise (p95 − p50 is {spread:.1f} ms or more)"
    return f"a change beyond a tenth of the runs' spread (p95 − p50 {spread:.1f} ms)"


def main() -> None:
    run(
        __doc__ or "",
        RESULTS,
        measure,
        write_docs,
        count=("turns", "turns per configuration", 20, 150),
    )


if __name__ == "__main__":
    main()
