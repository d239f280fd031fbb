"""The build boxes' uid pool (adapters/local/box_uids.py): a uid is handed out only while no
process runs as it, so a killed box's processes still dying never share their process count
with the next build (a CI run once saw a build's bwrap refused with EAGAIN for that)."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from zerocode.adapters.local.box_uids import UidPool, runs_as

FIRST = 1_930_900_000  # not the platform's pool: its own two uids


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_a_uid_still_running_a_process_is_skipped_though_its_lock_is_free(
    tmp_path: Path,
) -> None:
    pool = UidPool(first=FIRST, size=2, locks=tmp_path / "locks")
    ids = [f"--reuid={FIRST}", f"--regid={FIRST}", "--clear-groups"]
    lingering = subprocess.Popen(["setpriv", *ids, "sleep", "30"])
    try:
        deadline = time.monotonic() + 5
        while not runs_as(FIRST) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert runs_as(FIRST) and not runs_as(FIRST + 1)

        async def take() -> int:
            async with pool.uid(wait=1) as uid:
                return uid

        assert asyncio.run(take()) == FIRST + 1  # the first is free by lock, not by process
    finally:
        lingering.kill()
        lingering.wait()
    assert not runs_as(FIRST)

    async def again() -> int:
        async with pool.uid(wait=1) as uid:
            return uid

    assert asyncio.run(again()) == FIRST
