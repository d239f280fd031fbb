"""The ``zerocode`` command as `make run` uses it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def zerocode(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zerocode.entrypoints.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_demo_records_a_session_and_shows_the_window_survives_cache_loss(tmp_path: Path) -> None:
    done = zerocode("demo", "--data-dir", str(tmp_path), "--turns", "8")
    assert done.returncode == 0, done.stderr
    assert "identical = True" in done.stdout
    assert "was interrupted (the server stopped before it finished)" in done.stdout
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


def test_serve_refuses_a_window_budget_below_its_minimum_in_one_line(tmp_path: Path) -> None:
    """ZEROCODE_WINDOW_MAX_TOKENS=256 is below the Vue system prompt alone: the platform
    would build windows over their budget, so it does not start."""
    done = subprocess.run(
        [sys.executable, "-m", "zerocode.entrypoints.cli", "serve", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ZEROCODE_WINDOW_MAX_TOKENS": "256"},
    )
    assert done.returncode == 2 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("zerocode: ZEROCODE_WINDOW_MAX_TOKENS=256 is below the minimum window")
    assert "system prompt" in line and "set it to" in line


def test_the_lambda_entry_script_serves_the_api(tmp_path: Path) -> None:
    """functions/api/run.sh as Lambda Web Adapter starts it: the API answers on its port."""
    import os
    import socket
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = Path(__file__).parents[3]
    env = {
        **os.environ,
        "AWS_LWA_PORT": str(port),
        "ZEROCODE_DATA_DIR": str(tmp_path),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    proc = subprocess.Popen(
        ["sh", str(root / "functions" / "api" / "run.sh")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=1)
                break
            except httpx.HTTPError:
                assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
                time.sleep(0.2)
        else:
            raise AssertionError("the API did not start")
        assert health.status_code == 200 and health.json()["status"] == "ok"
    finally:
        proc.terminate()
        proc.wait(timeout=15)
