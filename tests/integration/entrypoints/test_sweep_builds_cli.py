"""``zerocode sweep-builds``: the server's build sweep, run now from the command line (with
the server stopped too, e.g. when its data directory is too full for it to start)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.entrypoints.test_cli import zerocode
from tests.integration.publishing.test_output_sweep import OK, PREVIEW, Disk


def test_sweep_builds_removes_what_the_server_would_and_says_so(tmp_path: Path) -> None:
    disk = Disk(tmp_path)
    disk.build("a1", PREVIEW, OK, 10)
    disk.build("a1", PREVIEW, OK, 9)
    newest = disk.build("a1", PREVIEW, OK, 0.2)
    done = zerocode("sweep-builds", "--data-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["seen"], report["removed"], report["kept"], report["failed"]) == (3, 2, 1, 0)
    assert report["bytesFreed"] > 2000
    assert disk.on_disk("a1") == {newest}
    again = zerocode("sweep-builds", "--data-dir", str(tmp_path), "--keep-seconds", "0")
    assert again.returncode == 0 and json.loads(again.stdout)["removed"] == 0


def test_sweep_builds_without_a_data_directory_says_so(tmp_path: Path) -> None:
    done = zerocode("sweep-builds", "--data-dir", str(tmp_path / "none"))
    assert done.returncode == 1 and "no data in" in done.stderr
    assert not (tmp_path / "none").exists()
