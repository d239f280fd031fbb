"""A process killed at any moment leaves a transcript whose window is valid (M2, M7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from zerocode.adapters.inprocess.cache import LruWindowCache
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
from zerocode.memory.facade import Memory
from zerocode.memory.transcript import EntryKind, group_units
from zerocode.memory.validation import validate
from zerocode.memory.window import WindowPolicy

WRITER = textwrap.dedent("""
    import json, sys
    from zerocode.adapters.inprocess.cache import LruWindowCache
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
    from zerocode.memory.facade import Memory
    from zerocode.memory.messages import AssistantMessage, ToolCall, ToolResult
    from zerocode.memory.window import WindowPolicy

    memory = Memory(SqliteTranscriptStore(SqliteDatabase(sys.argv[1])), LruWindowCache(),
                    WindowPolicy(max_messages=30))
    payload = "<p>x</p>" * 2000
    for n in range(1, 10_000):
        turn = memory.begin_turn("app", f"request {n}")
        for s in range(4):
            calls = tuple(ToolCall(f"c{n}_{s}_{i}", "write_file",
                                   json.dumps({"path": f"f{i}.vue", "content": payload}))
                          for i in range(3))
            memory.commit_step(turn, AssistantMessage(None, calls),
                               [ToolResult.success(c, "written") for c in calls])
            memory.window("app", "system")
            print("step", flush=True)
        memory.commit_final(turn, "done")
""")


@pytest.mark.parametrize("kill_after", [0.05, 0.2, 0.45, 0.7, 1.1])
def test_kill_at_any_moment_leaves_a_valid_window(tmp_path: Path, kill_after: float) -> None:
    path = tmp_path / "crash.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert child.stdout is not None
    child.stdout.readline()  # it is writing
    time.sleep(kill_after)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)

    store = SqliteTranscriptStore(SqliteDatabase(path))
    entries = store.tail("app", 1_000_000)
    units = group_units("app", entries)
    # Every stored entry belongs to a whole unit: no call without results, no orphan result.
    assert sum(len(u.entries) for u in units) == len(entries)
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    memory = Memory(store, LruWindowCache(), WindowPolicy(max_messages=30))
    validate(memory.window("app", "system").messages)
    was_open = store.head("app").turn_open
    memory.begin_turn("app", "after the crash")
    kinds = [u.kind for u in memory.units("app")]
    assert kinds[-1] is EntryKind.USER
    assert (kinds[-2] is EntryKind.INTERRUPTED) == was_open
    validate(memory.window("app", "system").messages)
