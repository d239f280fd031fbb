"""The admin list over the sharded apps index: its 16 Queries in parallel or in turn (issue 27,
point 3).

No DynamoDB is reachable from this machine, so the client is a stand-in that answers every
call (Query, BatchGetItem) with nothing after ``RTT`` seconds, standing for one round trip
to DynamoDB in the region; moto would measure its own Python, not the network. What this
shows is what the thread pool buys and costs: a page of ``DynamoAppStore.list_all`` (16
Queries in threads, then one BatchGetItem) against the same 16 Queries one after another.

    .venv/bin/python bench/app_shards.py        # JSON to stdout and bench/results/

Medians, in milliseconds, of ``RUNS`` pages for each round trip.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zerocode.adapters.dynamodb.apps import ALL_APPS, ALL_SHARDS, DynamoAppStore

RUNS = 50
RTTS = (0.0, 0.002, 0.005, 0.010)
RESULTS = Path(__file__).parent / "results" / "app_shards.json"


class StandIn:
    """Answers each call with nothing after ``rtt`` seconds."""

    def __init__(self, rtt: float) -> None:
        self.rtt = rtt

    def query(self, **kw: Any) -> dict[str, Any]:
        time.sleep(self.rtt)
        return {"Items": []}

    def batch_get_item(self, **kw: Any) -> dict[str, Any]:
        time.sleep(self.rtt)
        return {"Responses": {}}


def median_ms(run: Callable[[], object]) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 2)


def main() -> None:
    rows = []
    for rtt in RTTS:
        store = DynamoAppStore(StandIn(rtt), "apps")

        def page(store: DynamoAppStore = store) -> None:
            store.list_all(limit=20)

        def in_turn(store: DynamoAppStore = store) -> None:
            for n in range(ALL_SHARDS):
                store._query(ALL_APPS, "all_shard", f"app#{n}", "created_key", None, 20, None)

        rows.append(
            {
                "rtt_ms": rtt * 1000,
                "page_parallel_ms": median_ms(page),
                "queries_in_turn_ms": median_ms(in_turn),
            }
        )
    result = {"shards": ALL_SHARDS, "runs": RUNS, "rows": rows}
    text = json.dumps(result, indent=2)
    RESULTS.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
