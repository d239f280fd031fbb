"""The ``zerocode`` command as `make run` uses it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def zerocode(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zerocode.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_demo_records_a_session_and_shows_the_window_survives_cache_loss(
        tmp_path: Path) -> None:
    done = zerocode("demo", "--data-dir", str(tmp_path), "--turns", "8")
    assert done.returncode == 0, done.stderr
    assert "identical = True" in done.stdout
    assert "was interrupted (crash or timeout)" in done.stdout
    assert (tmp_path / "zerocode.sqlite3").exists()
    shown = zerocode("window", "demo-app", "--data-dir", str(tmp_path), "--system", "sys")
    assert shown.returncode == 0, shown.stderr
    window = json.loads(shown.stdout)
    roles = [m["role"] for m in window["messages"]]
    assert roles[0] == "system" and "tool" in roles and roles[-1] == "user"
    assert window["totalTokens"] == sum(window["tokens"]) + 3


def test_bad_arguments_get_a_usage_error_not_a_traceback(tmp_path: Path) -> None:
    done = zerocode("demo", "--data-dir", str(tmp_path), "--turns", "0")
    assert done.returncode == 2 and "--turns must be at least 1" in done.stderr
    assert "Traceback" not in done.stderr
