from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from tests.factories import final, step, turn_entries, user
from zerocode.memory.transcript import EntryKind, group_units


def test_whole_turn_groups_into_units() -> None:
    entries = turn_entries(1, 1, steps=2, calls=3)
    units = group_units("a", entries)
    assert [u.kind for u in units] == [
        EntryKind.USER,
        EntryKind.CALL,
        EntryKind.CALL,
        EntryKind.FINAL,
    ]
    assert [len(u.entries) for u in units] == [1, 4, 4, 1]


def test_unit_cut_off_by_the_start_of_a_read_is_dropped_silently(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entries = turn_entries(1, 1, steps=1, calls=3)[2:]  # starts inside the step
    assert [u.kind for u in group_units("a", entries)] == [EntryKind.FINAL]
    assert not caplog.records


def test_unreadable_entry_drops_its_unit_and_logs_its_keys(
    caplog: pytest.LogCaptureFixture,
) -> None:
    entries = [user(1, 1), *step(2, 1, 1, calls=2), final(5, 1, 1)]
    entries[2] = replace(entries[2], message=None, error="bad json")
    with caplog.at_level(logging.ERROR):
        units = group_units("app-9", entries)
    assert [u.kind for u in units] == [EntryKind.USER, EntryKind.FINAL]
    assert "app-9" in caplog.text and "[2, 3, 4]" in caplog.text


def test_step_with_a_missing_result_is_dropped() -> None:
    entries = [user(1, 1), *step(2, 1, 1, calls=2)[:2], final(4, 1, 1)]
    assert [u.kind for u in group_units("a", entries)] == [EntryKind.USER, EntryKind.FINAL]


def test_unreadable_unit_start_orphans_its_results() -> None:
    entries = [user(1, 1), *step(2, 1, 1, calls=2), final(5, 1, 1)]
    entries[1] = replace(entries[1], message=None, unit=-1, error="garbled")
    assert [u.kind for u in group_units("a", entries)] == [EntryKind.USER, EntryKind.FINAL]
