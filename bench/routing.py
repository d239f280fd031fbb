"""Routing benchmark (issue 27): the Lambda@Edge router against a million pointers.

Prints JSON, writes bench/results/routing.json and the "routing" section of
docs/benchmarks.md.

    .venv/bin/python bench/routing.py               # 1,000,000 pointers
    .venv/bin/python bench/routing.py --quick       # 50,000 (smoke)
    .venv/bin/python bench/routing.py --docs-only   # docs/benchmarks.md from the last results

The router is the deployed code itself (``functions/edge_router/router.py``: ``route``,
``PointerLookup``, ``TtlCache``), run in-process. The pointer table is a stand-in with
DynamoDB's ``get_item`` interface over a dict holding every pointer (half sites, half
previews, keys and ids shaped as the platform makes them): a moto table of a million items
takes too long to load, and moto's latency is not DynamoDB's anyway. So the figures are the
router's own work; on AWS a miss adds one GetItem's network time (not measured here). The
real client path is measured apart: a few thousand lookups through boto3 against moto.

- **Latency**: ``route()`` on a cache hit and on a miss (median, p95), time.perf_counter_ns.
- **Traffic**: requests drawn from a Zipf-like law over all pointers (rank r with weight
  1/r^s), at a fixed rate per execution environment on a simulated clock, through one
  router with the configured TTLs and bound: hit rate and table reads per million requests.
- **Publish and rollback**: keys of that traffic flipped to a new build in the table, then
  back; how long after each write (simulated clock) the router serves the new target.
- **Memory**: the cache filled to its bound, measured with tracemalloc (what the entries
  and the OrderedDict take, beyond the interpreter and boto3).
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import random
import statistics
import string
import sys
import time
import tracemalloc
from collections.abc import Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checks import commit, others, pct  # noqa: E402
from bench.docs import replace_section  # noqa: E402
from functions.edge_router.router import PointerLookup, TtlCache, route  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "routing.json"
TABLE = "pointers"
TTL, NEGATIVE_TTL, BOUND = 30.0, 10.0, 100_000  # the deployed defaults (hosting.py)
LOWER = string.ascii_lowercase + string.digits


class DictTable:
    """DynamoDB's ``get_item`` over a dict of pointer → (appId, buildId)."""

    def __init__(self, items: dict[str, tuple[str, str]]) -> None:
        self.items = items
        self.reads = 0

    def get_item(self, **kwargs: Any) -> Mapping[str, Any]:
        self.reads += 1
        found = self.items.get(kwargs["Key"]["pointer"]["S"])
        if found is None:
            return {}
        return {"Item": {"app_id": {"S": found[0]}, "build_id": {"S": found[1]}}}


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def key(rng: random.Random, length: int) -> str:
    return "".join(rng.choices(LOWER, k=length))


def pointers(n: int, rng: random.Random) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """n pointers, half sites (12-character keys) and half previews (26), each naming an
    app (20 characters, as ``new_app_id``) and a build (``b`` + 13 digits + 6 hex)."""
    uris: list[str] = []
    items: dict[str, tuple[str, str]] = {}
    for i in range(n):
        site = i % 2 == 0
        k = key(rng, 12 if site else 26)
        items[("site:" if site else "preview:") + k] = (
            key(rng, 20),
            f"b{1_800_000_000_000 + i}{rng.getrandbits(24):06x}",
        )
        uris.append(f"/_edge/{'site' if site else 'preview'}/{k}/index.html")
    return uris, items


def lookup(table: DictTable | Any, clock: Clock, bound: int = BOUND) -> PointerLookup:
    return PointerLookup(
        table, TABLE, TtlCache(bound, clock), ttl_seconds=TTL, negative_ttl_seconds=NEGATIVE_TTL
    )


def req(uri: str) -> dict[str, Any]:
    return {"uri": uri, "method": "GET", "headers": {}, "querystring": ""}


def summary(ns: list[int]) -> dict[str, float]:
    us = [n / 1000 for n in ns]
    return {"median_us": round(statistics.median(us), 2), "p95_us": round(pct(us, 95), 2)}


def latency(uris: list[str], table: DictTable, samples: int, rng: random.Random) -> dict[str, Any]:
    """Misses: each key asked once (cold). Hits: the same keys again, within the TTL.
    Absent: keys no table holds."""
    clock = Clock()
    edge = lookup(table, clock, bound=samples * 2)
    chosen = rng.sample(uris, samples)
    miss, hit, absent = [], [], []
    for uri in chosen:
        t = time.perf_counter_ns()
        route(req(uri), edge)
        miss.append(time.perf_counter_ns() - t)
    for uri in chosen:
        t = time.perf_counter_ns()
        route(req(uri), edge)
        hit.append(time.perf_counter_ns() - t)
    for _ in range(samples):
        uri = f"/_edge/site/{key(rng, 12)}/index.html"
        t = time.perf_counter_ns()
        route(req(uri), edge)
        absent.append(time.perf_counter_ns() - t)
    return {
        "samples": samples,
        "hit": summary(hit),
        "miss": summary(miss),
        "absent": summary(absent),
    }


def zipf_cumulative(n: int, s: float) -> list[float]:
    return list(itertools.accumulate(1 / (r**s) for r in range(1, n + 1)))


def traffic(
    uris: list[str],
    table: DictTable,
    *,
    requests: int,
    rate: float,
    s: float,
    rng: random.Random,
    bound: int = BOUND,
) -> dict[str, Any]:
    """One execution environment serving ``requests`` drawn Zipf(s) over every pointer,
    ``rate`` per second of simulated time."""
    cumulative = zipf_cumulative(len(uris), s)
    total = cumulative[-1]
    order = uris[:]
    rng.shuffle(order)  # popularity is not the order of creation
    clock = Clock()
    edge = lookup(table, clock, bound)
    before = table.reads
    step = 1 / rate
    distinct = set()
    for _ in range(requests):
        i = bisect.bisect_left(cumulative, rng.random() * total)
        distinct.add(i)
        route(req(order[i]), edge)
        clock.now += step
    reads = table.reads - before
    return {
        "requests": requests,
        "rate_per_s": rate,
        "zipf_s": s,
        "bound": bound,
        "distinct_keys": len(distinct),
        "table_reads": reads,
        "hit_rate": round(1 - reads / requests, 4),
        "reads_per_million": round(reads / requests * 1_000_000),
        "cache_entries_at_end": len(edge.cache),
    }


def visibility(uris: list[str], table: DictTable, flips: int, rng: random.Random) -> dict[str, Any]:
    """Keys served continuously (every key asked every second of simulated time); at t0 each
    key's pointer is written (publish), later written back (rollback). Seconds until the
    router serves the write, per key."""
    clock = Clock()
    edge = lookup(table, clock, bound=flips * 2)
    chosen = rng.sample(uris, flips)
    pointers_of = {u: ("site:" if "/site/" in u else "preview:") + u.split("/")[3] for u in chosen}
    old = {u: table.items[pointers_of[u]] for u in chosen}

    def serve_all() -> dict[str, str]:
        return {u: route(req(u), edge)["uri"] for u in chosen}

    # warm at staggered times, as a real edge would have fetched them
    for u in chosen:
        route(req(u), edge)
        clock.now += 30 / flips
    lags: dict[str, Any] = {}
    for phase, new in (
        ("publish", {u: (old[u][0], old[u][1] + "n") for u in chosen}),
        ("rollback", old),
    ):
        for u in chosen:
            table.items[pointers_of[u]] = new[u]
        t0, seen = clock.now, dict[str, float]()
        while len(seen) < flips and clock.now - t0 < 10 * TTL:
            for u, served in serve_all().items():
                if u not in seen and served.endswith(f"/{new[u][1]}/index.html"):
                    seen[u] = clock.now - t0
            clock.now += 1
        lags[phase] = {
            "keys": flips,
            "visible": len(seen),
            "median_s": round(statistics.median(seen.values()), 1),
            "max_s": round(max(seen.values()), 1),
        }
    # a first deploy: a key absent (and so remembered absent) that appears
    fresh = f"site:{key(rng, 12)}"
    uri = f"/_edge/site/{fresh[5:]}/index.html"
    route(req(uri), edge)
    table.items[fresh] = ("a" * 20, "b1")
    t0 = clock.now
    while route(req(uri), edge).get("status") == "404":
        clock.now += 1
    lags["first_deploy_s"] = round(clock.now - t0, 1)
    return lags


def memory(uris: list[str], table: DictTable, bounds: list[int]) -> list[dict[str, Any]]:
    out = []
    for bound in bounds:
        clock = Clock()
        edge = lookup(table, clock, bound)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        for uri in uris[:bound]:
            route(req(uri), edge)
        used = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        assert len(edge.cache) == bound
        out.append(
            {
                "entries": bound,
                "mib": round(used / 2**20, 1),
                "bytes_per_entry": round(used / bound),
            }
        )
    return out


def moto_path(lookups: int, items: int, rng: random.Random) -> dict[str, Any]:
    """The router's real client path: boto3's GetItem against moto (in-process)."""
    os.environ.update(
        {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    import boto3
    from moto import mock_aws

    from zerocode.adapters.dynamodb.pointers import DynamoPointerStore, create_pointers_table
    from zerocode.publishing.pointers import SiteTarget

    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_pointers_table(client, TABLE)
        store = DynamoPointerStore(client, TABLE)
        keys = [key(rng, 12) for _ in range(items)]
        t = time.perf_counter()
        for k in keys:
            store.point(f"site:{k}", SiteTarget(key(rng, 20), "b1"))
        load_s = time.perf_counter() - t
        clock = Clock()
        edge = lookup(client, clock)
        chosen = rng.sample(keys, min(lookups, items))
        miss, hit = [], []
        for k in chosen:
            t0 = time.perf_counter_ns()
            route(req(f"/_edge/site/{k}/index.html"), edge)
            miss.append(time.perf_counter_ns() - t0)
        for k in chosen:
            t0 = time.perf_counter_ns()
            route(req(f"/_edge/site/{k}/index.html"), edge)
            hit.append(time.perf_counter_ns() - t0)
    return {
        "items": items,
        "lookups": len(chosen),
        "load_seconds": round(load_s, 1),
        "miss": summary(miss),
        "hit": summary(hit),
    }


def measure(n: int, *, quick: bool) -> dict[str, Any]:
    rng = random.Random(27)
    load = [round(x, 2) for x in os.getloadavg()]
    busy = others()
    t = time.perf_counter()
    uris, items = pointers(n, rng)
    table = DictTable(items)
    built = time.perf_counter() - t
    requests = 200_000 if quick else 2_000_000
    return {
        "commit": commit(),
        "pointers": n,
        "build_seconds": round(built, 1),
        "config": {"ttl_s": TTL, "negative_ttl_s": NEGATIVE_TTL, "bound": BOUND},
        "latency": latency(uris, table, 2_000 if quick else 20_000, rng),
        "traffic": [
            traffic(uris, table, requests=requests, rate=rate, s=s, rng=rng)
            for s, rate in ((1.0, 100.0), (1.0, 1000.0), (0.8, 1000.0))
        ],
        "visibility": visibility(uris, table, 200 if quick else 1_000, rng),
        "memory": memory(uris, table, [10_000, 40_000] if quick else [10_000, 100_000, 500_000]),
        "moto": moto_path(500 if quick else 2_000, 500 if quick else 2_000, rng),
        "load_before": load,
        "other_work": busy,
    }


def docs(r: dict[str, Any]) -> None:
    lat, vis = r["latency"], r["visibility"]
    lines = [
        "## Routing a million sites (`bench/routing.py`)",
        "",
        f"The Lambda@Edge router (`functions/edge_router/router.py`, its own `route`, cache "
        f"and lookup, run in-process) against a stand-in pointer table of "
        f"**{r['pointers']:,} pointers** (half sites, half previews; DynamoDB's `get_item` "
        "interface over a dict, since a moto table of a million items takes too long to "
        "load). The times are the router's own work: on AWS a miss adds one GetItem's "
        'network time, which nothing here measures (docs/operations.md, "Routing a million '
        f'sites"). TTL {r["config"]["ttl_s"]:g} s, absent keys {r["config"]["negative_ttl_s"]:g} '
        f"s, at most {r['config']['bound']:,} entries (the deployed defaults), at {r['commit']}.",
        "",
        "| lookup | median µs | p95 µs |",
        "|---|---:|---:|",
        f"| hit (cached, within the TTL) | {lat['hit']['median_us']} | {lat['hit']['p95_us']} |",
        f"| miss (the table read) | {lat['miss']['median_us']} | {lat['miss']['p95_us']} |",
        f"| absent key (read, then 404) | {lat['absent']['median_us']} | "
        f"{lat['absent']['p95_us']} |",
        f"| miss through boto3 on moto ({r['moto']['items']:,} items) | "
        f"{r['moto']['miss']['median_us']} | {r['moto']['miss']['p95_us']} |",
        f"| hit, same router, after those misses | {r['moto']['hit']['median_us']} | "
        f"{r['moto']['hit']['p95_us']} |",
        "",
        f"{lat['samples']:,} lookups of each kind. The moto row is botocore's serialisation and "
        "moto's in-process answer: an upper bound on the client's own work, not DynamoDB's "
        f"latency. Writing its {r['moto']['items']:,} pointers through the adapter took "
        f"{r['moto']['load_seconds']} s, which is why the million live in the stand-in.",
        "",
        "One execution environment under Zipf-like traffic over every pointer (rank r weighs "
        "1/r^s), simulated clock:",
        "",
        "| s | requests/s per environment | requests | distinct keys | hit rate | table reads "
        "per million requests | cache entries at the end |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in r["traffic"]:
        lines.append(
            f"| {t['zipf_s']} | {t['rate_per_s']:g} | {t['requests']:,} | "
            f"{t['distinct_keys']:,} | {t['hit_rate'] * 100:.1f} % | "
            f"{t['reads_per_million']:,} | {t['cache_entries_at_end']:,} |"
        )
    lines += [
        "",
        "These requests are the ones that reach the function: CloudFront's own cache answers "
        "the rest before it, so the DynamoDB reads per million *page views* are these times "
        "CloudFront's miss rate.",
        "",
        f"Publish and rollback, {vis['publish']['keys']:,} keys served every second: the "
        f"router served the new build after a median {vis['publish']['median_s']} s, at most "
        f"{vis['publish']['max_s']} s (TTL {r['config']['ttl_s']:g} s); the rollback after "
        f"{vis['rollback']['median_s']} s, at most {vis['rollback']['max_s']} s; a first "
        f"deploy of a key remembered absent after {vis['first_deploy_s']} s. "
        + (
            "Every key saw both writes within the TTL."
            if max(vis["publish"]["max_s"], vis["rollback"]["max_s"]) <= r["config"]["ttl_s"]
            and vis["publish"]["visible"] == vis["publish"]["keys"]
            and vis["rollback"]["visible"] == vis["rollback"]["keys"]
            else "**Some key did not see a write within the TTL.**"
        ),
        "",
        "Memory of the cache at its bound (tracemalloc: entries, keys, tuples and the "
        "OrderedDict):",
        "",
        "| entries | MiB | bytes per entry |",
        "|---:|---:|---:|",
        *[f"| {m['entries']:,} | {m['mib']} | {m['bytes_per_entry']} |" for m in r["memory"]],
        "",
        f"Load before the run: {r['load_before']}; other work on the machine: "
        f"{', '.join(r['other_work']) or 'none'}.",
    ]
    replace_section("routing", lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pointers", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--docs-only", action="store_true")
    parser.add_argument("--no-docs", action="store_true")
    args = parser.parse_args()
    if args.docs_only:
        docs(json.loads(RESULTS.read_text()))
        return
    n = 50_000 if args.quick else args.pointers
    result = measure(n, quick=args.quick)
    print(json.dumps(result, indent=2))
    if not args.quick:
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
        if not args.no_docs:
            docs(result)


if __name__ == "__main__":
    main()
