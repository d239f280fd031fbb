"""Records' own parts (zerocode/data/records.py): ids, timestamps, cursors."""

from __future__ import annotations

from zerocode.data.records import after_cursor, cursor_of, is_record_id, new_record, timestamp


def test_a_new_record_has_a_random_id_and_sortable_times() -> None:
    first, second = new_record(None, {"a": 1}), new_record("u1", {})
    assert is_record_id(first.id) and is_record_id(second.id) and first.id != second.id
    assert first.created_at == first.updated_at and first.created_at.endswith("Z")
    assert first.created_at <= second.created_at <= timestamp()
    assert not is_record_id("../../etc") and not is_record_id("A" * 16)


def test_a_cursor_says_where_the_page_ended() -> None:
    record = new_record(None, {})
    assert after_cursor(cursor_of(record)) == (record.created_at, record.id)
