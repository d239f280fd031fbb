"""Memory benchmark: restore cost vs history length, and window tokens per policy.

Prints JSON and rewrites the "memory" section of docs/benchmarks.md.

    .venv/bin/python bench/memory.py            # full run (10 … 100k messages)
    .venv/bin/python bench/memory.py --quick    # 10 … 10k, for a smoke run

Restore = a cold window on a new container: the requests the store receives
and the items it returns, counted at the store boundary (SQLite statements and
rows through a counting connection; DynamoDB requests and items through
botocore event hooks, on moto, so its wall time is moto's, not AWS's).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.docs import replace_section  # noqa: E402
from tests.factories import turn_entries  # noqa: E402
from tests.integration.memory.test_restore_cost import CountingConnection, seed_dynamo  # noqa: E402
from zerocode.adapters.inprocess.cache import LruWindowCache  # noqa: E402
from zerocode.adapters.sqlite.database import SqliteDatabase  # noqa: E402
from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore  # noqa: E402
from zerocode.entrypoints.sample_session import vue_editing_session  # noqa: E402
from zerocode.memory.facade import Memory  # noqa: E402
from zerocode.memory.messages import AssistantMessage, Message, SystemMessage, UserMessage  # noqa: E402
from zerocode.memory.tokens import REPLY_PRIMING, message_tokens  # noqa: E402
from zerocode.memory.transcript import Entry, TranscriptStore  # noqa: E402
from zerocode.memory.validation import is_valid  # noqa: E402
from zerocode.memory.window import WindowPolicy  # noqa: E402

POLICY = WindowPolicy()  # the defaults ZEROCODE_WINDOW_* start from
# Restore is measured under the default window and under a 10-message window, the
# smallest history measured, so "flat" can be read straight off the 100k / 10 ratio.
RESTORE_POLICIES = {"60 (default)": POLICY, "10": WindowPolicy(max_messages=10)}
SYSTEM = (
    "You are zerocode's Vue agent. You change the user's Vue 3 + Vite project only "
    "through the tools read_dir, read_file, write_file, modify_file, delete_file and "
    "exit. Paths are relative to the project root. Read a file before you modify it; "
    "modify_file replaces an exact, unique old text with new text. "
) * 4
RUNS = 5


def history(messages: int) -> list[Entry]:
    """Exactly ``messages`` entries: whole turns of 6, then a last, open turn."""
    out: list[Entry] = []
    while len(out) + 6 <= messages:
        out += turn_entries(
            len(out) + 1, len(out) // 6 + 1, steps=1, calls=3, payload="<li>task</li>" * 20
        )
    rest = messages - len(out)
    if rest:
        turn = out[-1].turn + 1 if out else 1
        last = turn_entries(len(out) + 1, turn, steps=1, calls=max(rest - 2, 1))
        out += last[:rest]
    return out


def seed(store: TranscriptStore, entries: list[Entry], batch: int) -> None:
    for start in range(0, len(entries), batch):
        store.append("app", entries[start : start + batch], expected_head=start)


def sqlite_restore(directory: Path, messages: int) -> list[dict[str, Any]]:
    path = directory / f"bench-{messages}.sqlite3"
    entries = history(messages)
    seed(SqliteTranscriptStore(SqliteDatabase(path)), entries, batch=5_000)
    db = SqliteDatabase(
        path,
        connect=lambda p: sqlite3.connect(
            p, factory=CountingConnection, isolation_level=None, check_same_thread=False
        ),
    )
    conn: Any = db.conn
    rows = []
    for window, policy in RESTORE_POLICIES.items():
        times, counts = [], []
        for _ in range(RUNS):
            conn.statements = conn.rows = 0
            memory = Memory(SqliteTranscriptStore(db), LruWindowCache(), policy)
            start = time.perf_counter()
            memory.window("app", SYSTEM)
            times.append(time.perf_counter() - start)
            counts.append((conn.statements, conn.rows))
        assert len(set(counts)) == 1
        rows.append(
            {
                "store": "sqlite",
                "window": window,
                "messages": len(entries),
                "requests": counts[0][0],
                "items_read": counts[0][1],
                "ms": round(statistics.median(times) * 1000, 2),
            }
        )
    return rows


def dynamo_restore(messages: int) -> list[dict[str, Any]]:
    import boto3

    from zerocode.adapters.dynamodb.transcript import DynamoTranscriptStore, create_transcript_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    table = f"bench-{messages}"
    create_transcript_table(client, table)
    entries = history(messages)
    seed_dynamo(client, table, "app", entries)
    requests: Counter[str] = Counter()
    items = [0]
    client.meta.events.register(
        "provide-client-params.dynamodb.*", lambda model, **_: requests.update([model.name])
    )
    client.meta.events.register(
        "after-call.dynamodb.*",
        lambda parsed, **_: items.__setitem__(
            0, items[0] + len(parsed.get("Items", ())) + ("Item" in parsed)
        ),
    )
    rows = []
    for window, policy in RESTORE_POLICIES.items():
        times, counts = [], []
        for _ in range(RUNS):
            requests.clear()
            items[0] = 0
            memory = Memory(DynamoTranscriptStore(client, table), LruWindowCache(), policy)
            start = time.perf_counter()
            memory.window("app", SYSTEM)
            times.append(time.perf_counter() - start)
            counts.append((sum(requests.values()), items[0], tuple(sorted(requests))))
        assert len(set(counts)) == 1
        rows.append(
            {
                "store": "dynamodb (moto)",
                "window": window,
                "messages": len(entries),
                "requests": counts[0][0],
                "operations": list(counts[0][2]),
                "items_read": counts[0][1],
                "ms": round(statistics.median(times) * 1000, 2),
            }
        )
    return rows


def policy_tokens(turns: int = 40) -> dict[str, Any]:
    """Prompt tokens per window over a Vue editing session, under three policies."""
    store = SqliteTranscriptStore(SqliteDatabase(":memory:"))
    ours = Memory(store, LruWindowCache(), POLICY)
    no_elision = Memory(
        store, LruWindowCache(), WindowPolicy(max_messages=60, max_tokens=10**9, full_turns=10**6)
    )
    display: list[Message] = []
    rows, invalid = [], 0
    for turn in vue_editing_session(turns):
        handle = ours.begin_turn("app", turn.request)
        for step in turn.steps:
            ours.commit_step(handle, step.call, step.results)
        ours.commit_final(handle, turn.reply)
        display += [UserMessage(turn.request), AssistantMessage(turn.display)]
        shown = [SystemMessage(SYSTEM), *display[-59:]]
        w_ours, w_full = ours.window("app", SYSTEM), no_elision.window("app", SYSTEM)
        invalid += (not is_valid(w_ours.messages)) + (not is_valid(w_full.messages))
        rows.append(
            {
                "turn": turn.number,
                "display_only": REPLY_PRIMING + sum(message_tokens(m) for m in shown),
                "display_only_tool_calls": 0,
                "full_60": w_full.total_tokens,
                "ours": w_ours.total_tokens,
                "ours_tool_calls": sum(
                    len(m.tool_calls) for m in w_ours.messages if isinstance(m, AssistantMessage)
                ),
            }
        )
    last = rows[-1]
    return {
        "turns": rows,
        "invalid_windows": invalid,
        "ours_vs_full_at_last_turn": round(last["ours"] / last["full_60"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="stop at 10k messages")
    parser.add_argument("--no-docs", action="store_true", help="do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    sizes = [10, 1_000, 10_000] + ([] if args.quick else [100_000])
    restore: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            restore += sqlite_restore(Path(tmp), n)
    os.environ.update(
        AWS_ACCESS_KEY_ID="bench", AWS_SECRET_ACCESS_KEY="bench", AWS_DEFAULT_REGION="us-east-1"
    )
    from moto import mock_aws

    with mock_aws():
        for n in sizes:
            restore += dynamo_restore(n)
    flat = {}
    for store in ("sqlite", "dynamodb (moto)"):
        for window in RESTORE_POLICIES:
            runs = [r for r in restore if r["store"] == store and r["window"] == window]
            flat[f"{store}, window {window}"] = round(
                runs[-1]["items_read"] / runs[0]["items_read"], 3
            )
    result = {
        "restore": restore,
        "items_read_ratio_largest_vs_10": flat,
        "tokens": policy_tokens(),
        "policy": POLICY.__dict__,
    }
    print(json.dumps(result, indent=2))
    if not args.no_docs:
        write_docs(result)


def write_docs(result: dict[str, Any]) -> None:
    lines = [
        "## Memory (`bench/memory.py`)",
        "",
        "Restore = a cold window on a new container: requests to the store and items it "
        "returned. DynamoDB runs on moto, whose query time grows with the table size (an "
        "artefact of the emulator); the request and item counts are what AWS would see.",
        "",
        "| store | window (messages) | history (messages) | requests | items read "
        "| ms (median of 5) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in result["restore"]:
        lines.append(
            f"| {r['store']} | {r['window']} | {r['messages']:,} | {r['requests']} | "
            f"{r['items_read']} | {r['ms']} |"
        )
    lines += [
        "",
        "Items read at 100k ÷ at 10 messages (target 1.0): "
        + "; ".join(f"{k}: {v}" for k, v in result["items_read_ratio_largest_vs_10"].items())
        + ". "
        "A 10-message history is smaller than the default 60-message window, so it reads "
        "all 10; from 1k messages on, the default window reads 60 items at every size, and a "
        "10-message window reads 10 at every size.",
        "",
        "Prompt tokens per window, 40-turn Vue editing session "
        "(`zerocode.entrypoints.sample_session`, files ~3 KB):",
        "",
        "| turn | display text only (old failure) | full transcript, 60 msgs, no elision "
        "| ours | tool calls in ours |",
        "|---:|---:|---:|---:|---:|",
    ]
    tok = result["tokens"]
    for row in tok["turns"]:
        if row["turn"] in (1, 2, 5, 10, 20, 30, 40):
            lines.append(
                f"| {row['turn']} | {row['display_only']} (0 tool calls) | "
                f"{row['full_60']} | {row['ours']} | {row['ours_tool_calls']} |"
            )
    lines += [
        "",
        f"Ours ÷ no-elision at turn 40: **{tok['ours_vs_full_at_last_turn']}** "
        f"(target ≤ 0.40); invalid windows: **{tok['invalid_windows']}**.",
        "The display-only window is small because it has lost every tool call — the "
        "failure zerocode exists to prevent.",
    ]
    replace_section("memory", lines)


if __name__ == "__main__":
    main()
