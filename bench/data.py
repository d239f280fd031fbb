"""The apps' data API benchmark (issue 39): list and create, p50/p99 and requests per second,
through the sites server of a real ``zerocode serve`` on this machine.

Prints JSON, writes bench/results/data.json and the "data" section of docs/benchmarks.md.

    .venv/bin/python bench/data.py               # 2,000 requests of each kind
    .venv/bin/python bench/data.py --quick       # 200 (smoke)
    .venv/bin/python bench/data.py --docs-only   # docs/benchmarks.md from the last results

A fresh ``zerocode serve`` (SQLite, offline scripted model, a temporary data directory) in a
subprocess, with the data API's rate limits raised out of the way. One html app gets a data
model by hand (the offline model's public guestbook, a message of up to 500 characters),
then, on its preview's origin (the Host header, as a visitor's browser sends it):

- **create**: ``POST /_api/data/entries`` with a 60-character message, one client at a time;
- **list**: ``GET /_api/data/entries?limit=20&sort=-createdAt`` over the collection the
  creates filled, one client at a time, then the first page and a page further in;
- **throughput**: lists and creates from 8 clients at once for the same count, requests per
  second over the whole run.

Each figure is the client's wall time per request, connection kept alive (httpx). Then the
same requests to the data function as AWS runs it, on moto (``bench/data_moto.py``).
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checks import commit, others  # noqa: E402
from bench.data_moto import data_function  # noqa: E402
from bench.docs import replace_section, run  # noqa: E402
from tests.e2e.conftest import (  # noqa: E402
    Server,
    _localhost_is_loopback,
    chat,
    create,
    signed_in,
)
from zerocode.adapters.model.offline.data_apps import MODEL  # noqa: E402 (the guestbook's)

RESULTS = ROOT / "bench" / "results" / "data.json"
CLIENTS = 8
SEEDS = len(MODEL["collections"]["entries"]["seed"])


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def figures(ms: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(ms), 2),
        "p99": round(pct(ms, 99), 2),
        "max": round(max(ms), 2),
    }


def timed(call: Any) -> float:
    start = time.perf_counter()
    answer = call()
    took = (time.perf_counter() - start) * 1000
    if answer.status_code >= 400:
        raise SystemExit(f"the data API answered {answer.status_code}: {answer.text[:200]}")
    return took


def measure(count: int) -> dict[str, Any]:
    socket.getaddrinfo = _localhost_is_loopback  # *.localhost is loopback, as in browsers
    load_start, busy = [round(x, 2) for x in os.getloadavg()], others()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp))
        server.env.update(
            {"ZEROCODE_DATA_RATE_VISITOR": "1000000", "ZEROCODE_DATA_RATE_SITE": "1000000"}
        )
        server.start()
        try:
            local = _measure(server, count, load_start, busy)
        finally:
            server.stop()
    return {**local, "moto": measure_moto(count)}


def _measure(server: Server, count: int, load: list[float], busy: list[str]) -> dict[str, Any]:
    owner = signed_in(server)
    app = create(owner, "A guestbook for a bakery called Crumbs", "html")
    chat(owner, app["id"], app["initPrompt"])
    saved = owner.put(
        f"/api/apps/{app['id']}/files/zerocode.data.json", json={"content": json.dumps(MODEL)}
    )
    assert saved.status_code == 200, saved.text
    origin = owner.get(f"/api/apps/{app['id']}").json()["previewUrl"].rstrip("/")

    def visitor() -> httpx.Client:
        return httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=30)

    return {
        "commit": commit(),
        "requests": count,
        "clients": CLIENTS,
        "load_before": load,
        "others_running": busy,
        **requests(visitor, count),
        "records_at_end": 2 * count + SEEDS,
    }


def requests(visitor: Callable[[], httpx.Client], count: int) -> dict[str, Any]:
    """Creates, then lists (the first page, a page further in), one client at a time; then
    lists and creates from CLIENTS clients at once."""
    entry = {"message": "x" * 60}
    one = visitor()
    creates = [timed(lambda: one.post("/_api/data/entries", json=entry)) for _ in range(count)]
    first = [
        timed(lambda: one.get("/_api/data/entries?limit=20&sort=-createdAt")) for _ in range(count)
    ]
    cursor = one.get("/_api/data/entries?limit=100&sort=-createdAt").json()["cursor"]
    further = [
        timed(lambda: one.get(f"/_api/data/entries?limit=20&sort=-createdAt&cursor={cursor}"))
        for _ in range(count)
    ]
    throughput = {}
    for kind in ("list", "create"):
        clients = [visitor() for _ in range(CLIENTS)]

        def work(n: int, kind: str = kind, clients: list[httpx.Client] = clients) -> float:
            client = clients[n % CLIENTS]
            if kind == "list":
                return timed(lambda: client.get("/_api/data/entries?limit=20"))
            return timed(lambda: client.post("/_api/data/entries", json=entry))

        start = time.perf_counter()
        with ThreadPoolExecutor(CLIENTS) as pool:
            took = list(pool.map(work, range(count)))
        seconds = time.perf_counter() - start
        throughput[kind] = {"rps": round(count / seconds), **figures(took)}
    return {
        "create_ms": figures(creates),
        "list_first_page_ms": figures(first),
        "list_further_page_ms": figures(further),
        "throughput": throughput,
    }


def measure_moto(count: int) -> dict[str, Any]:
    """The same requests to the data function on moto (bench/data_moto.py says what that
    measures)."""
    with data_function(MODEL) as visitor:
        return requests(visitor, count)


def write_docs(r: dict[str, Any]) -> None:
    t = r["throughput"]
    lines = [
        "",
        "## The apps' data API (`bench/data.py`)",
        "",
        f"Commit `{r['commit']}`, {r['requests']:,} requests of each kind through the local "
        "sites server (`zerocode serve`, SQLite) on an app's preview origin; one client at a "
        f"time, then {r['clients']} at once. Load before: {r['load_before']}"
        + (f"; also running: {', '.join(r['others_running'])}" if r["others_running"] else "")
        + ".",
        "",
        "| request | p50 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | {f['p50']} | {f['p99']} | {f['max']} |"
            for name, f in (
                ("create (`POST /_api/data/entries`)", r["create_ms"]),
                ("list, first page of 20", r["list_first_page_ms"]),
                ("list, a page 100 records in", r["list_further_page_ms"]),
            )
        ),
        "",
        f"| {r['clients']} clients at once | requests/s | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
        *(
            f"| {kind} | {t[kind]['rps']:,} | {t[kind]['p50']} | {t[kind]['p99']} |"
            for kind in ("list", "create")
        ),
        "",
        *_moto_lines(r),
    ]
    replace_section("data", lines)


def _moto_lines(r: dict[str, Any]) -> list[str]:
    m = r.get("moto")
    if m is None:
        return ["On AWS: not measured in this run.", ""]
    t = m["throughput"]
    return [
        "The data function as AWS runs it, on moto (`bench/data_moto.py`): the same requests "
        "through `zerocode.entrypoints.lambda_data_api` (uvicorn, as Lambda Web Adapter starts "
        "it) with CloudFront's headers, its DynamoDB stores and rate limiter on moto's server. "
        "moto answers from memory in Python: these figures are the function's own path plus "
        "moto's, not DynamoDB's latency.",
        "",
        "| request (moto) | p50 ms | p99 ms | max ms |",
        "|---|---:|---:|---:|",
        *(
            f"| {name} | {f['p50']} | {f['p99']} | {f['max']} |"
            for name, f in (
                ("create", m["create_ms"]),
                ("list, first page of 20", m["list_first_page_ms"]),
                ("list, a page 100 records in", m["list_further_page_ms"]),
            )
        ),
        "",
        f"| {r['clients']} clients at once (moto) | requests/s | p50 ms | p99 ms |",
        "|---|---:|---:|---:|",
        *(
            f"| {kind} | {t[kind]['rps']:,} | {t[kind]['p50']} | {t[kind]['p99']} |"
            for kind in ("list", "create")
        ),
        "",
    ]


def main() -> None:
    run(
        __doc__,
        RESULTS,
        measure,
        write_docs,
        count=("requests", "requests of each kind", 200, 2000),
    )


if __name__ == "__main__":
    main()
