"""Turn benchmark: the platform's own cost per turn, and many concurrent streams.

Prints JSON and rewrites the "turn" section of docs/benchmarks.md.

    .venv/bin/python bench/turn.py            # 100 sequential turns, then 100 and 200 streams
    .venv/bin/python bench/turn.py --quick    # 30 turns, 20 and 40 streams (smoke run)

1. Overhead: `zerocode serve` (SQLite, offline scripted model with no pacing) in a
   subprocess; one html app; sequential change turns over HTTP. Time to first byte
   and whole-turn time are measured by the client. The scripted model's own time for
   the same requests is measured in-process (same openai client and adapter) and
   subtracted: what is left is the platform — lease, transcript writes, window,
   display history, parsing, saving, SSE.
2. Concurrency: N apps, one stream each at the same time, the model pacing every
   chunk by PACE ms. Added inter-chunk latency = gap seen by the client − PACE.
   Server RSS is read from /proc (VmRSS at the end, VmHWM peak).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.docs import replace_section  # noqa: E402
from tests.e2e.conftest import Server  # noqa: E402
from zerocode.adapters.model.openai import build_chat_model  # noqa: E402
from zerocode.engine.model import ModelRole  # noqa: E402
from zerocode.engine.prompts import load  # noqa: E402

PACE_MS = 20
# Observations across runs, kept with the table when the script rewrites it.
NOTES = """\
Since builds and publishing (issue #5) every html turn that saves files ends with a preview
build (the files checked and copied to an immutable build directory, a build record, the
preview pointer flipped): the overhead p50 went from 8.2 to 9.2–9.9 ms, still under target.
The 200-stream p99 is noisy on this 2-core machine, where the client, the server and the
scripted model share the cores: four runs at this commit gave 93, 63, 109 and 92 ms (the
table shows the last), so the 50 ms target is not met now; earlier runs ranged 30–108 ms.
Two runs with the SSE keep-alive pump removed gave the same (97, 105 ms), so the pump is
not the cause. The largest costs per chunk are the `openai` client's own chunk parsing and
the scripted model, which runs inside the server process here (a real model would not).
First-byte time at 200 streams is high because all 200 turns start in the same instant and
queue for SQLite writes; it is not a target, and is reported so it is seen."""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def rss_mb(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    now = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
    peak = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
    return round(now / 1024, 1), round(peak / 1024, 1)


async def timed_turn(
    client: httpx.AsyncClient, app_id: str, message: str
) -> tuple[float, float, list[float], str]:
    """(ttfb s, total s, arrival times of text chunks, done status)."""
    start = time.perf_counter()
    first = 0.0
    arrivals: list[float] = []
    status = "?"
    async with client.stream(
        "POST", f"/api/apps/{app_id}/chat", json={"message": message}
    ) as response:
        if response.status_code != 200:
            raise RuntimeError(
                f"chat answered {response.status_code}: {(await response.aread())!r}"
            )
        event = "message"
        async for line in response.aiter_lines():
            now = time.perf_counter()
            if not first:
                first = now
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                if event == "message":
                    arrivals.append(now)
                elif event == "done":
                    status = json.loads(line[5:])["status"]
            elif not line:
                event = "message"
    return first - start, time.perf_counter() - start, arrivals, status


async def create_app(client: httpx.AsyncClient, prompt: str) -> str:
    response = await client.post("/api/apps", json={"initPrompt": prompt, "codeGenType": "html"})
    response.raise_for_status()
    return str(response.json()["id"])


def token(server: Server) -> dict[str, str]:
    """Register and sign in one benchmark user."""
    account = {"account": "bench-user", "password": "bench password"}
    httpx.post(f"{server.api}/api/users/register", json=account)
    login = httpx.post(f"{server.api}/api/users/login", json=account).json()
    return {"Authorization": f"Bearer {login['token']}"}


async def overhead(server: Server, turns: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=server.api, timeout=60, headers=token(server)) as client:
        app_id = await create_app(client, "A page about lighthouses")
        await timed_turn(client, app_id, "A page about lighthouses")
        ttfb, total, statuses = [], [], []
        for i in range(turns):
            first, whole, _, status = await timed_turn(
                client, app_id, f'Change the title to "Lighthouse {i}"'
            )
            ttfb.append(first * 1000)
            total.append(whole * 1000)
            statuses.append(status)
        context = (await client.get(f"/api/apps/{app_id}/context")).json()
    model_ms = await model_alone(context["messages"], turns)
    return {
        "turns": turns,
        "succeeded": statuses.count("succeeded"),
        "window_tokens_at_end": context["totalTokens"],
        "ttfb_ms": {"p50": round(pct(ttfb, 50), 2), "p99": round(pct(ttfb, 99), 2)},
        "turn_ms": {"p50": round(pct(total, 50), 2), "p99": round(pct(total, 99), 2)},
        "model_alone_ms": {"p50": round(pct(model_ms, 50), 2), "p99": round(pct(model_ms, 99), 2)},
        "overhead_ms": {
            "p50": round(pct(total, 50) - pct(model_ms, 50), 2),
            "p99": round(pct(total, 99) - pct(model_ms, 50), 2),
        },
    }


async def model_alone(window: list[dict[str, Any]], runs: int) -> list[float]:
    """The scripted model answering the final window's request, in-process."""
    from zerocode.memory.messages import UserMessage, from_openai_list

    model = build_chat_model(None, None, {r: "zerocode-offline" for r in ModelRole})
    messages = [*from_openai_list(window), UserMessage('Change the title to "Lighthouse final"')]
    async for _event in model.stream(ModelRole.CODE, messages):
        pass  # warm up: the first call loads the tokenizer, which the server had done already
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        async for _event in model.stream(ModelRole.CODE, messages):
            pass
        times.append((time.perf_counter() - start) * 1000)
    assert load("html")  # the same prompt the server used is packaged
    return times


async def concurrent(server: Server, streams: int) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=streams + 10, max_keepalive_connections=streams + 10)
    async with httpx.AsyncClient(
        base_url=server.api, timeout=120, limits=limits, headers=token(server)
    ) as client:
        apps = [await create_app(client, f"A page about city {i}") for i in range(streams)]
        assert server.proc is not None
        before = rss_mb(server.proc.pid)
        results = await asyncio.gather(
            *(
                timed_turn(client, app_id, f"A page about city {i} [[pace={PACE_MS}]]")
                for i, app_id in enumerate(apps)
            )
        )
        after = rss_mb(server.proc.pid)
    added = [
        (b - a) * 1000 - PACE_MS
        for _, _, arrivals, _ in results
        for a, b in itertools.pairwise(arrivals)
    ]
    ttfb = [r[0] * 1000 for r in results]
    return {
        "streams": streams,
        "pace_ms": PACE_MS,
        "succeeded": sum(r[3] == "succeeded" for r in results),
        "chunks": len(added) + len(results),
        "added_inter_chunk_ms": {"p50": round(pct(added, 50), 2), "p99": round(pct(added, 99), 2)},
        "ttfb_ms": {"p50": round(pct(ttfb, 50), 2), "p99": round(pct(ttfb, 99), 2)},
        "server_rss_mb": {"before": before[0], "after": after[0], "peak": after[1]},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    turns, levels = (30, [20, 40]) if args.quick else (100, [100, 200])
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        # The runtime check loads every preview in Chromium (about a second, at most two
        # browsers at once): a cost of its own, measured by `zerocode eval`. Off here, so
        # these figures stay the platform's own overhead, comparable with earlier runs.
        server.env["ZEROCODE_RUNTIME_CHECK"] = "0"
        server.start()
        try:
            result = {
                "overhead": asyncio.run(overhead(server, turns)),
                "concurrency": [asyncio.run(concurrent(server, n)) for n in levels],
            }
        finally:
            server.stop()
    print(json.dumps(result, indent=2))
    (ROOT / "bench" / "results" / "turn.json").write_text(json.dumps(result, indent=2) + "\n")
    if not args.no_docs:
        write_docs(result)


def write_docs(result: dict[str, Any]) -> None:
    o = result["overhead"]
    lines = [
        "## Turns (`bench/turn.py`)",
        "",
        f"{o['turns']} sequential html change turns over HTTP against `zerocode serve` "
        "(SQLite, offline scripted model without pacing; window at the end: "
        f"{o['window_tokens_at_end']} tokens). The model's own time is measured "
        "in-process for the same request and subtracted.",
        "",
        "| measure | p50 ms | p99 ms |",
        "|---|---:|---:|",
        f"| time to first byte | {o['ttfb_ms']['p50']} | {o['ttfb_ms']['p99']} |",
        f"| whole turn | {o['turn_ms']['p50']} | {o['turn_ms']['p99']} |",
        f"| scripted model alone | {o['model_alone_ms']['p50']} | {o['model_alone_ms']['p99']} |",
        f"| **platform overhead** (turn − model p50) | **{o['overhead_ms']['p50']}** | "
        f"{o['overhead_ms']['p99']} |",
        "",
        "Target: overhead p50 under 15 ms.",
        "",
        f"Concurrent streams, each a new html app, the model pacing every chunk by "
        f"{result['concurrency'][0]['pace_ms']} ms; client and server share the "
        "machine's 2 cores.",
        "",
        "| streams | turns succeeded | chunks | added inter-chunk p50 ms | p99 ms "
        "| first byte p99 ms | server RSS after / peak MB |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in result["concurrency"]:
        lines.append(
            f"| {c['streams']} | {c['succeeded']} | {c['chunks']} | "
            f"{c['added_inter_chunk_ms']['p50']} | {c['added_inter_chunk_ms']['p99']} | "
            f"{c['ttfb_ms']['p99']} | {c['server_rss_mb']['after']} / "
            f"{c['server_rss_mb']['peak']} |"
        )
    lines += [
        "",
        "Targets at 200 streams: added p99 inter-chunk latency under 50 ms, RSS under 400 MB.",
        "",
        NOTES,
    ]
    replace_section("turn", lines)


if __name__ == "__main__":
    main()
