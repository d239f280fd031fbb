"""TranscriptStore contract, run against every adapter (SQLite, DynamoDB on moto)."""

from __future__ import annotations

import json
import random
import string

import pytest

from tests.factories import step, turn_entries, user
from tests.integration.backends import Backend
from zerocode.errors import Conflict
from zerocode.memory.messages import AssistantMessage, ToolCall, ToolResult
from zerocode.memory.transcript import EMPTY_HEAD, Entry, EntryKind, head_of

APP = "app-1"


def test_empty_transcript(backend: Backend) -> None:
    store = backend.transcript()
    assert store.head(APP) == EMPTY_HEAD
    assert store.tail(APP, 10) == []
    assert store.get(APP, 1) is None


def test_append_round_trips_entries_exactly(backend: Backend) -> None:
    store = backend.transcript()
    entries = turn_entries(1, 1, steps=2, calls=3)
    store.append(APP, entries, expected_head=0)
    assert store.tail(APP, 100) == entries
    assert store.get(APP, 3) == entries[2]
    assert store.head(APP) == head_of(entries[-1])


def test_query_order_is_append_order_past_digit_boundaries(backend: Backend) -> None:
    store = backend.transcript()
    written: list[Entry] = []
    for turn in range(1, 16):
        entries = turn_entries(len(written) + 1, turn, steps=1, calls=4)
        store.append(APP, entries, expected_head=len(written))
        written += entries
    assert len(written) > 100
    assert [e.seq for e in store.tail(APP, 1000)] == list(range(1, len(written) + 1))
    assert store.tail(APP, 7) == written[-7:]


def test_stale_writer_gets_conflict_and_writes_nothing(backend: Backend) -> None:
    first, second = backend.transcript(), backend.transcript()
    first.append(APP, [user(1, 1)], expected_head=0)
    # Both writers saw head 1; the first to append wins.
    first.append(APP, step(2, 1, 1, calls=2), expected_head=1)
    with pytest.raises(Conflict):
        second.append(APP, step(2, 1, 1, calls=1), expected_head=1)
    assert [e.seq for e in first.tail(APP, 10)] == [1, 2, 3, 4]
    assert first.tail(APP, 10) == second.tail(APP, 10)


def test_writer_behind_by_several_entries_gets_conflict(backend: Backend) -> None:
    store = backend.transcript()
    store.append(APP, turn_entries(1, 1), expected_head=0)
    with pytest.raises(Conflict):
        store.append(APP, [user(2, 2)], expected_head=1)


def test_non_contiguous_entries_are_refused(backend: Backend) -> None:
    store = backend.transcript()
    with pytest.raises(ValueError):
        store.append(APP, [user(2, 1)], expected_head=0)
    assert store.tail(APP, 10) == []


def test_apps_are_isolated_and_delete_removes_one_app(backend: Backend) -> None:
    store = backend.transcript()
    store.append(APP, turn_entries(1, 1, steps=3), expected_head=0)
    other = turn_entries(1, 1)
    store.append("app-2", other, expected_head=0)
    assert store.delete_app(APP) == 11
    assert store.tail(APP, 100) == []
    assert store.head(APP) == EMPTY_HEAD
    assert store.tail("app-2", 100) == other
    # A deleted transcript starts again from seq 1.
    store.append(APP, [user(1, 1)], expected_head=0)


def test_retention_sets_ttl_attribute(backend: Backend) -> None:
    store = backend.transcript(retention_days=30, now=lambda: 1_000_000.0)
    store.append(APP, [user(1, 1)], expected_head=0)
    assert int(backend.raw(APP, 1)["expires_at"]) == 1_000_000 + 30 * 86_400
    keep = backend.transcript(retention_days=0)
    keep.append("app-2", [user(1, 1)], expected_head=0)
    assert backend.raw("app-2", 1).get("expires_at") is None


@pytest.mark.parametrize("size", [300_000, 2_000_000])
def test_payloads_beyond_item_limits_round_trip(backend: Backend, size: int) -> None:
    """Compressible and incompressible payloads both exceed DynamoDB's 400 KB item limit."""
    rng = random.Random(size)
    noise = "".join(rng.choices(string.ascii_letters + string.digits, k=size))
    text = ("<template><div>hello</div></template>\n" * (size // 38)) if size < 1_000_000 else noise
    call = ToolCall("c1", "write_file", json.dumps({"path": "src/App.vue", "content": text}))
    entries = [
        user(1, 1),
        Entry(
            seq=2,
            turn=1,
            unit=2,
            turn_start=1,
            kind=EntryKind.CALL,
            message=AssistantMessage(None, (call,)),
        ),
        Entry(
            seq=3,
            turn=1,
            unit=2,
            turn_start=1,
            kind=EntryKind.RESULT,
            message=ToolResult.success(call, noise[:500_000]),
        ),
    ]
    store = backend.transcript()
    store.append(APP, entries, expected_head=0)
    assert store.tail(APP, 10) == entries
    assert store.get(APP, 2) == entries[1]


def test_unreadable_item_is_reported_not_raised(backend: Backend) -> None:
    store = backend.transcript()
    entries = turn_entries(1, 1, steps=1, calls=2)
    store.append(APP, entries, expected_head=0)
    backend.corrupt(APP, 3)
    tail = store.tail(APP, 10)
    assert [e.seq for e in tail] == [1, 2, 3, 4, 5]
    assert tail[2].message is None and tail[2].error
    assert tail[2].unit == 2  # position attributes survive, so the unit can be left out whole
    assert store.get(APP, 3) == tail[2]
    assert backend.raw(APP, 3)  # and the item stays in storage
