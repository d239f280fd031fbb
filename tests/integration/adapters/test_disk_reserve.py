"""The disk reserve on a real (tmpfs) file system: its blocks are really held, a turn may
start only with it in place and as much again free, a full disk frees it, and it comes
back once there is room (adapters/local/disk_reserve.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.tmpfs import ballast, tmpfs
from zerocode.adapters.local.disk_reserve import DiskReserve

MB = 1 << 20


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    with tmpfs(tmp_path / "disk", "8m") as mounted:
        yield mounted


def test_the_reserve_holds_real_space_and_gives_it_back(disk: Path) -> None:
    reserve = DiskReserve(disk, 2 * MB)
    before = reserve.free()
    assert reserve.ready() and reserve.check().ok
    assert os.stat(reserve.path).st_blocks * 512 >= 2 * MB  # allocated, not sparse
    assert before - reserve.free() >= 2 * MB
    assert not list(disk.glob("*.part"))
    assert reserve.release() and not reserve.path.exists()
    assert not reserve.release()  # nothing left to give
    assert reserve.free() >= before - 64 * 1024


def test_a_turn_may_not_start_without_room_beside_the_reserve(disk: Path) -> None:
    reserve = DiskReserve(disk, 2 * MB)
    assert reserve.ready()
    filler = ballast(disk, leave_mb=1)  # the reserve stays; 1 MB beside it
    assert not reserve.ready()
    problem = reserve.check().reason
    assert problem is not None and "turns and edits are refused" in problem
    assert str(reserve.path) in problem
    reserve.release()  # a full disk took it
    assert not reserve.ready()  # and it cannot be made again without twice its size free
    filler.unlink()
    assert reserve.ready() and reserve.path.exists()  # room again: made again
