"""`zerocode serve` as a first start meets it: a port already taken is one line on stderr,
and the log is quiet (a line per turn, none per request) unless ZEROCODE_ACCESS_LOG=1."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def occupied() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield int(s.getsockname()[1])


def serve(
    data_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zerocode.entrypoints.cli", "serve", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ZEROCODE_DATA_DIR": str(data_dir), **(env or {})},
    )


def test_the_api_port_in_use_is_one_line_and_a_failure(tmp_path: Path, occupied: int) -> None:
    done = serve(tmp_path, "--port", str(occupied), "--sites-port", str(free_port()))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line == (
        f"zerocode: port {occupied} on 127.0.0.1 is already in use "
        "(ZEROCODE_PORT or --port to change it)"
    )
    assert done.stdout == ""  # nothing started: no banner


def test_the_sites_port_in_use_is_one_line_and_a_failure(tmp_path: Path, occupied: int) -> None:
    done = serve(
        tmp_path,
        "--port",
        str(free_port()),
        env={"ZEROCODE_SITES_PORT": str(occupied)},
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert f"port {occupied} on 127.0.0.1 is already in use" in line
    assert "ZEROCODE_SITES_PORT or --sites-port" in line


def test_one_port_for_both_servers_is_refused_the_same_way(tmp_path: Path) -> None:
    port = free_port()
    done = serve(tmp_path, "--port", str(port), "--sites-port", str(port))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert f"port {port} on 127.0.0.1 is already in use (ZEROCODE_SITES_PORT" in line


def run_a_session(data_dir: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """Starts the server, makes a few requests and one turn, stops it: its JSON log lines."""
    port, sites = free_port(), free_port()
    log = data_dir / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "zerocode.entrypoints.cli", "serve"],
            stdout=out,
            stderr=subprocess.STDOUT,
            env={
                **os.environ,
                "ZEROCODE_DATA_DIR": str(data_dir / "data"),
                "ZEROCODE_PORT": str(port),
                "ZEROCODE_SITES_PORT": str(sites),
                "ZEROCODE_COVERS": "0",
                "ZEROCODE_RUNTIME_CHECK": "0",
                **env,
            },
        )
        try:
            base = f"http://127.0.0.1:{port}"
            with httpx.Client(base_url=base, timeout=30) as client:
                for _ in range(240):
                    try:
                        if client.get("/api/health").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    time.sleep(0.25)
                else:
                    raise AssertionError("the server did not answer /api/health")
                for _ in range(3):
                    assert client.get("/api/health").status_code == 200
                account = {"account": "quiet-log", "password": "a long password"}
                assert client.post("/api/users/register", json=account).status_code == 201
                token = client.post("/api/users/login", json=account).json()["token"]
                auth = {"Authorization": f"Bearer {token}"}
                app = client.post(
                    "/api/apps",
                    headers=auth,
                    json={"initPrompt": "A page about newts", "codeGenType": "html"},
                ).json()
                with client.stream(
                    "POST",
                    f"/api/apps/{app['id']}/chat",
                    headers=auth,
                    json={"message": "A page about newts"},
                ) as stream:
                    assert stream.status_code == 200
                    "".join(stream.iter_text())
                assert client.get(f"/api/apps/{app['id']}", headers=auth).status_code == 200
        finally:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    lines = []
    text = log.read_text()
    assert "Traceback" not in text  # Ctrl-C stops it quietly
    for raw in text.splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue  # the banner
    return lines


def is_access(line: dict[str, Any]) -> bool:
    return "path" in line and "status" in line and "duration_ms" in line


def is_turn(line: dict[str, Any]) -> bool:
    return str(line.get("message", "")).startswith("turn ")


def test_the_log_has_a_line_per_turn_and_none_per_request(tmp_path: Path) -> None:
    lines = run_a_session(tmp_path, {})
    assert not [line for line in lines if is_access(line)]
    # nor one per request the model client makes (httpx's own INFO lines)
    assert not [line for line in lines if "HTTP Request" in str(line.get("message"))]
    turns = [line for line in lines if is_turn(line)]
    assert len(turns) == 1 and "status=succeeded" in turns[0]["message"], turns


def test_zerocode_access_log_turns_the_request_lines_on(tmp_path: Path) -> None:
    lines = run_a_session(tmp_path, {"ZEROCODE_ACCESS_LOG": "1"})
    access = [line for line in lines if is_access(line)]
    assert len(access) >= 7  # the health checks, register, login, create, chat, get
    assert {"/api/health", "/api/users/register"} <= {line["path"] for line in access}
    assert len([line for line in lines if is_turn(line)]) == 1


def test_the_listening_sockets_are_not_inherited_by_builds() -> None:
    """A build (untrusted code) is a child process: under uvloop it would keep an inheritable
    descriptor, and could hold or accept on the platform's port (seen: Vite in the sandbox
    holding the API port after the server was killed)."""
    from zerocode.entrypoints.server import listen

    sock = listen("127.0.0.1", 0, "ZEROCODE_PORT", "--port")
    try:
        assert sock.get_inheritable() is False
    finally:
        sock.close()
