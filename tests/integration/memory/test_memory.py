"""The memory facade over SQLite with in-process, real Redis and broken Redis caches."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.conftest import redis_client_or_skip
from tests.integration.memory_support import CountingStore, tool_step
from zerocode.adapters.inprocess.cache import LruWindowCache
from zerocode.adapters.redis.cache import RedisWindowCache
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
from zerocode.errors import Conflict
from zerocode.memory.cache import WindowCache
from zerocode.memory.facade import Memory
from zerocode.memory.messages import AssistantMessage, SystemMessage, ToolResult, UserMessage
from zerocode.memory.transcript import EntryKind, Unit
from zerocode.memory.validation import validate
from zerocode.memory.window import WindowPolicy

APP = "app-1"
SYSTEM = "You build Vue apps."


def make(
    tmp_path: Path, cache: WindowCache | None = None, policy: WindowPolicy | None = None
) -> tuple[Memory, CountingStore]:
    store = CountingStore(SqliteTranscriptStore(SqliteDatabase(tmp_path / "m.sqlite3")))
    cache = LruWindowCache() if cache is None else cache
    return Memory(store, cache, policy or WindowPolicy()), store


def test_a_turn_keeps_every_tool_call_and_result(tmp_path: Path) -> None:
    memory, _ = make(tmp_path)
    turn = memory.begin_turn(
        APP,
        "make the title red",
        element={"pagePath": "/", "tag": "h1", "selector": "h1", "text": "Hi"},
    )
    tool_step(memory, turn, 1, calls=3, failed=[1])
    memory.commit_final(turn, "Changed the title.")
    w = memory.window(APP, SYSTEM)
    roles = [m.role for m in w.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "tool", "assistant"]
    user = w.messages[1]
    assert (
        isinstance(user, UserMessage)
        and "[Selected element]" in user.content
        and "'h1'" in user.content
    )
    results = [m for m in w.messages if isinstance(m, ToolResult)]
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].content.startswith("ERROR: ")
    assert w.total_tokens == sum(w.tokens) + 3 and all(t > 0 for t in w.tokens)
    validate(w.messages)


def test_a_step_must_answer_every_call(tmp_path: Path) -> None:
    memory, store = make(tmp_path)
    turn = memory.begin_turn(APP, "go")
    from zerocode.memory.messages import ToolCall

    a, b = ToolCall("a", "read_dir", "{}"), ToolCall("b", "read_dir", "{}")
    with pytest.raises(ValueError):
        memory.commit_step(turn, AssistantMessage(None, (a, b)), [ToolResult.success(a, "x")])
    with pytest.raises(ValueError):
        memory.commit_step(turn, AssistantMessage("no calls"), [])
    assert store.inner.head(APP).seq == 1


def test_warm_window_costs_one_head_read(tmp_path: Path) -> None:
    memory, store = make(tmp_path)
    turn = memory.begin_turn(APP, "go")
    tool_step(memory, turn, 1)
    memory.commit_final(turn, "ok")
    first = memory.window(APP, SYSTEM)  # write-through kept the cache warm
    store.reset()
    second = memory.window(APP, SYSTEM)
    assert second == first
    assert store.calls == {"head": 1} and store.entries_read == 0


def test_cache_loss_rebuilds_the_same_window(tmp_path: Path) -> None:
    cache = LruWindowCache()
    memory, store = make(tmp_path, cache)
    for n in range(5):
        turn = memory.begin_turn(APP, f"change {n}")
        tool_step(memory, turn, 1, payload="y" * 3000)
        memory.commit_final(turn, f"did {n}")
    warm = memory.window(APP, SYSTEM)
    cache.delete(APP)
    store.reset()
    cold = memory.window(APP, SYSTEM)
    assert cold == warm
    assert store.calls["tail"] == 1
    restarted = Memory(
        SqliteTranscriptStore(SqliteDatabase(tmp_path / "m.sqlite3")),
        LruWindowCache(),
        WindowPolicy(),
    )
    assert restarted.window(APP, SYSTEM) == warm


def test_another_writer_makes_the_cache_stale_and_it_is_rebuilt(tmp_path: Path) -> None:
    a, _ = make(tmp_path)
    b, _ = make(tmp_path)  # a second container: same database, its own cache
    turn = a.begin_turn(APP, "first")
    a.commit_final(turn, "one")
    assert len(a.window(APP, SYSTEM).messages) == 3
    turn = b.begin_turn(APP, "second")
    b.commit_final(turn, "two")
    assert a.window(APP, SYSTEM) == b.window(APP, SYSTEM)
    assert len(a.window(APP, SYSTEM).messages) == 5


def test_interleaving_writer_gets_conflict(tmp_path: Path) -> None:
    a, _ = make(tmp_path)
    b, _ = make(tmp_path)
    turn_a = a.begin_turn(APP, "first")
    turn_b = b.begin_turn(APP, "second")  # closes turn 1 as interrupted, starts turn 2
    with pytest.raises(Conflict):
        tool_step(a, turn_a, 1)
    tool_step(b, turn_b, 1)
    b.commit_final(turn_b, "done")
    w = a.window(APP, SYSTEM)
    validate(w.messages)
    assert [m.role for m in w.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]


def test_interrupted_turn_is_closed_and_not_rerun(tmp_path: Path) -> None:
    memory, _ = make(tmp_path)
    turn = memory.begin_turn(APP, "build a shop")
    tool_step(memory, turn, 1)
    memory.mark_interrupted(turn, "client disconnected")
    assert not memory.head(APP).turn_open
    w = memory.window(APP, SYSTEM)
    note = w.messages[-1]
    assert (
        isinstance(note, AssistantMessage)
        and "interrupted (client disconnected)" in (note.content or "")
        and "not pending" in (note.content or "")
    )
    with pytest.raises(ValueError, match="already closed"):
        memory.commit_final(turn, "late text")
    turn2 = memory.begin_turn(APP, "now add a cart")
    assert turn2.number == 2
    kinds = [u.kind for u in memory.units(APP)]
    assert kinds == [EntryKind.USER, EntryKind.CALL, EntryKind.INTERRUPTED, EntryKind.USER]


def test_turn_left_open_by_a_crash_is_closed_by_the_next_turn(tmp_path: Path) -> None:
    memory, store = make(tmp_path)
    turn = memory.begin_turn(APP, "build a shop")
    tool_step(memory, turn, 1)
    del turn  # the process died here
    restarted, _ = make(tmp_path)
    store.reset()
    restarted.begin_turn(APP, "hello again")
    kinds = [u.kind for u in restarted.units(APP)]
    assert kinds == [EntryKind.USER, EntryKind.CALL, EntryKind.INTERRUPTED, EntryKind.USER]
    validate(restarted.window(APP, SYSTEM).messages)


def test_delete_forgets_everything_and_a_reused_seq_is_not_served_from_cache(
    tmp_path: Path,
) -> None:
    cache = LruWindowCache()
    memory, _ = make(tmp_path, cache)
    turn = memory.begin_turn(APP, "old request")
    memory.commit_final(turn, "old answer")
    memory.window(APP, SYSTEM)
    stale = cache.get(APP)
    assert stale is not None
    assert memory.delete(APP) == 2
    assert memory.window(APP, SYSTEM).messages == (SystemMessage(SYSTEM),)
    cache.put(APP, stale)  # as if a cache delete had been lost
    turn = memory.begin_turn(APP, "new request")
    memory.commit_final(turn, "new answer")
    assert memory.head(APP).seq == stale.head
    texts = [m.content for m in memory.window(APP, SYSTEM).messages]
    assert texts == [SYSTEM, "new request", "new answer"]


def test_real_redis_cache_serves_the_same_windows(tmp_path: Path) -> None:
    import secrets

    client = redis_client_or_skip()
    prefix = f"zc-test-{secrets.token_hex(4)}:"
    memory, store = make(tmp_path, RedisWindowCache(client, prefix=prefix))
    lru, _ = make(tmp_path)
    for n in range(3):
        turn = memory.begin_turn(APP, f"change {n}")
        tool_step(memory, turn, 1, calls=2, payload="z" * 1000)
        memory.commit_final(turn, "ok")
        memory.window(APP, SYSTEM)  # the engine reads the window between writes
    store.reset()
    assert memory.window(APP, SYSTEM) == lru.window(APP, SYSTEM)
    assert store.calls == {"head": 1}
    assert client.exists(prefix + APP)
    for key in client.scan_iter(prefix + "*"):
        client.delete(key)


def test_broken_redis_falls_back_to_the_store(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dead = RedisWindowCache.from_url("redis://127.0.0.1:1/0", timeout=0.2)
    memory, _ = make(tmp_path, dead)
    reference, _ = make(tmp_path)
    with caplog.at_level(logging.WARNING):
        turn = memory.begin_turn(APP, "go")
        tool_step(memory, turn, 1)
        memory.commit_final(turn, "ok")
        assert memory.window(APP, SYSTEM) == reference.window(APP, SYSTEM)
    assert "window cache" in caplog.text


def test_running_summary_is_stored_in_the_transcript(tmp_path: Path) -> None:
    seen: list[list[int]] = []

    def summarize(previous: str | None, evicted: Sequence[Unit]) -> str:
        seen.append([u.seq for u in evicted])
        return (previous or "") + f"[{len(evicted)} units]"

    policy = WindowPolicy(max_messages=12, summary=True)
    store = SqliteTranscriptStore(SqliteDatabase(tmp_path / "s.sqlite3"))
    memory = Memory(store, LruWindowCache(), policy, summarizer=summarize)
    for n in range(6):
        turn = memory.begin_turn(APP, f"change {n}", system=SYSTEM)
        tool_step(memory, turn, 1)
        memory.commit_final(turn, "ok")
    summaries = [e for e in store.tail(APP, 1000) if e.kind is EntryKind.SUMMARY]
    assert summaries and seen
    covered = [s for batch in seen for s in batch]
    assert covered == sorted(set(covered))  # each evicted unit summarised once, in order
    w = memory.window(APP, SYSTEM)
    assert w.summary_included and w.messages[1] == summaries[-1].message
    validate(w.messages)
