"""`zerocode serve` on a data directory that is full or read-only (issue 29): it refuses to
start in one line, and while it runs its health follows the free space. Real mounts (a
small tmpfs), the real server in a subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.tmpfs import ballast, tmpfs

PASSWORD = "correct horse"
CLI = (sys.executable, "-m", "zerocode.entrypoints.cli")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZEROCODE_")}
    return {**env, "ZEROCODE_COVERS": "0", **extra}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ports(port: int) -> list[str]:
    return ["--port", str(port), "--sites-port", str(_port())]


def _serve(data: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, "serve", "--data-dir", str(data), *_ports(_port())],
        capture_output=True,
        text=True,
        timeout=60,
        env=_env(**env),
    )


def _refused(done: subprocess.CompletedProcess[str]) -> str:
    """The one line on stderr of a server that did not start."""
    assert done.returncode == 1 and done.stdout == "", done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    return line


def test_too_little_space_stops_the_server_in_one_line_before_it_writes(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "small", "2m") as data:
        line = _refused(_serve(data))  # the default minimum, 64 MB
        assert line == (
            f"zerocode: the data directory {data} has 2.0 MB free, below the minimum of 64 MB "
            "(ZEROCODE_MIN_FREE_MB): not starting"
        )
        assert list(data.iterdir()) == []  # no database, no log, no probe file left
        done = _serve(data, ZEROCODE_MIN_FREE_MB="3")
        assert "has 2.0 MB free, below the minimum of 3 MB" in _refused(done)


def test_a_read_only_data_directory_stops_the_server_in_one_line(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "ro", "1m", read_only=True) as data:
        line = _refused(_serve(data, ZEROCODE_MIN_FREE_MB="0"))
        assert line == (
            f"zerocode: the data directory {data} cannot be written (Read-only file system): "
            "not starting"
        )
        line = _refused(_serve(data / "inner", ZEROCODE_MIN_FREE_MB="0"))
        assert line == (
            f"zerocode: the data directory {data / 'inner'} cannot be created (Read-only file "
            "system): not starting"
        )


@pytest.fixture
def small_server(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """The real server on a 24 MB tmpfs that must keep 4 MB free, probing every 0.2 s; its
    log outside the tmpfs. Yields the data directory and the API's base URL."""
    with tmpfs(tmp_path / "data", "24m") as data:
        env = _env(ZEROCODE_MIN_FREE_MB="4", ZEROCODE_HEALTH_PROBE_SECONDS="0.2")
        admin = subprocess.run(
            [*CLI, "admin", "create", "root-1", "--password-stdin", "--data-dir", str(data)],
            input=PASSWORD + "\n",
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert admin.returncode == 0, admin.stderr
        port = _port()
        log = tmp_path / "server.log"
        proc = subprocess.Popen(
            [*CLI, "serve", "--data-dir", str(data), *_ports(port)],
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            env=env,
        )
        api = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    httpx.get(f"{api}/api/health", timeout=1)
                    break
                except httpx.HTTPError:
                    assert proc.poll() is None, log.read_text()
                    time.sleep(0.1)
            yield data, api
        finally:
            proc.terminate()
            proc.wait(timeout=15)


def _bearer(api: str, account: str, *, register: bool) -> dict[str, str]:
    body = {"account": account, "password": PASSWORD}
    if register:
        assert httpx.post(f"{api}/api/users/register", json=body).status_code == 201
    token = httpx.post(f"{api}/api/users/login", json=body).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def _health_until(api: str, headers: dict[str, str], status: str) -> dict[str, object]:
    deadline = time.monotonic() + 5
    while True:
        health = dict(httpx.get(f"{api}/api/health", headers=headers).json())
        if health["status"] == status or time.monotonic() > deadline:
            return health
        time.sleep(0.05)


def test_health_is_degraded_while_space_is_short_and_ok_once_it_returns(
    small_server: tuple[Path, str],
) -> None:
    data, api = small_server
    admin = _bearer(api, "root-1", register=False)
    user = _bearer(api, "user-1", register=True)
    assert _health_until(api, admin, "ok")["status"] == "ok"
    weight = ballast(data, leave_mb=2)
    told = _health_until(api, admin, "degraded")
    assert told["status"] == "degraded"
    low, reserve = str(told["reason"]).split("; ")  # one sentence per problem
    assert low.startswith(f"the data directory {data} has ")
    assert low.endswith("MB free, below the minimum of 4 MB (ZEROCODE_MIN_FREE_MB)")
    assert reserve.endswith("turns and edits are refused until space is freed")  # 8 MB reserve
    seen = dict(httpx.get(f"{api}/api/health", headers=user).json())
    assert seen["status"] == "degraded" and "reason" not in seen  # the status, not the path
    assert httpx.get(f"{api}/api/health").json() == seen
    weight.unlink()
    again = _health_until(api, admin, "ok")
    assert again["status"] == "ok" and "reason" not in again
