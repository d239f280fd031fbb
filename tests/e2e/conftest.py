"""The real local server in a subprocess, and an SSE client for its chat stream."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.forked import ZYGOTE, Forked
from zerocode.adapters.local.browser_box import QUIET_FEATURES


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PortTaken(RuntimeError):
    """The server's port was taken between choosing it and binding it."""


@dataclass
class Server:
    data_dir: Path
    port: int = field(default_factory=free_port)
    sites_port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | Forked | None = None
    log: Path | None = None
    log_dir: Path | None = None  # where the server's log goes (default: its data dir)
    # The shared e2e server lets one user chat often; quotas have their own tests. The
    # runtime check (a browser per previewed turn) is on only where a test is about it
    # (tests/e2e/test_repair.py), to keep the suite's time down; so are preview covers.
    env: dict[str, str] = field(
        default_factory=lambda: {
            "ZEROCODE_RATE_CHAT": "10000",
            "ZEROCODE_RATE_CREATE": "10000",
            "ZEROCODE_RATE_DEPLOY": "10000",  # deploys, restores and edits build
            # Every test signs in from 127.0.0.1; the front door has its own tests
            # (test_front_door.py), on servers with the default limits.
            "ZEROCODE_RATE_LOGIN_ADDRESS": "10000",
            "ZEROCODE_RUNTIME_CHECK": "0",
            # A browser per app's preview: tests/e2e/test_preview_covers.py turns it on.
            "ZEROCODE_PREVIEW_COVERS": "0",
            "ZEROCODE_ACCESS_LOG": "1",  # test_observability reads the request lines
        }
    )
    # Forked from the worker's zygote (tests/e2e/forked.py: ~1 CPU-s less per start); False
    # for a test about the process itself (its own group, the cgroup it starts in).
    forked: bool = True

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start and wait for health. Ports are free when chosen, but another test worker may
        take one before the server binds it: then new ports are chosen and it starts again."""
        for attempt in range(3):
            try:
                self._start()
                return
            except PortTaken:
                if attempt == 2:
                    raise
                self.port, self.sites_port = free_port(), free_port()

    def _start(self) -> None:
        self.log = (self.log_dir or self.data_dir) / f"server-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if k != "ZEROCODE_MODEL_BASE_URL"}
        env.update({"ZEROCODE_DATA_DIR": str(self.data_dir), **self.env})
        args = ["serve", "--port", str(self.port), "--sites-port", str(self.sites_port)]
        if self.forked:
            self.proc = ZYGOTE.spawn(args, env, self.log)
        else:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "zerocode.entrypoints.cli", *args],
                stdout=self.log.open("wb"),
                stderr=subprocess.STDOUT,
                env=env,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if _health().get(f"{self.api}/api/health").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        said = self.log.read_text()
        if "already in use" in said:
            raise PortTaken(said)
        raise RuntimeError(f"server did not start:\n{said}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def restart(self) -> None:
        self.stop()
        self.start()


@functools.cache
def tls() -> ssl.SSLContext:
    """The default TLS context, made once per test process (the CA bundle loaded once):
    what every client here would make for itself (the servers speak plain HTTP anyway)."""
    return ssl.create_default_context()


@functools.cache
def _health() -> httpx.Client:
    """The client that asks a starting server for its health, one per test process: a
    client made per poll loaded the CA bundle each time (``httpx.get``), about a sixth of
    the test processes' CPU in a ``make test`` run (docs/benchmarks.md, "The test suite")."""
    return httpx.Client(timeout=1, verify=tls())


_getaddrinfo = socket.getaddrinfo


def _localhost_is_loopback(host: Any, *args: Any, **kwargs: Any) -> Any:
    """``*.localhost`` is loopback (RFC 6761), as browsers resolve it; this machine's
    resolver does not, so the tests' own clients connect to 127.0.0.1 and send the app's
    name as the Host header, as the docs tell other clients to do."""
    name = host.decode() if isinstance(host, bytes) else host
    if isinstance(name, str) and name.lower().rstrip(".").endswith(".localhost"):
        host = "127.0.0.1"
    return _getaddrinfo(host, *args, **kwargs)


@pytest.fixture(scope="session", autouse=True)
def _app_origins_resolve() -> Iterator[None]:
    socket.getaddrinfo = _localhost_is_loopback
    yield
    socket.getaddrinfo = _getaddrinfo


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One default server per test process (per xdist worker), shared by every module that
    needs no server of its own: each test signs up its own accounts, so modules do not see
    each other's apps except where an admin lists everything."""
    srv = Server(tmp_path_factory.mktemp("zerocode-e2e"))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="session")
def checking_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One default server with the runtime check on (and so the acceptance checks, in its kept
    Chromium) per test process, shared by the modules about the checks (their ``server``
    fixture returns it, started again if a module left it stopped): one server and one
    browser start-up per worker instead of one per module."""
    srv = Server(tmp_path_factory.mktemp("zerocode-e2e-checking"))
    srv.env["ZEROCODE_RUNTIME_CHECK"] = "1"
    srv.start()
    yield srv
    srv.stop()


def running(server: Server) -> Server:
    """``server``, started again if it is not running (a module may have stopped it)."""
    if server.proc is None or server.proc.poll() is not None:
        server.start()
    return server


@pytest.fixture(scope="module")
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A default server for one module alone, for a module that reads what is global (the
    featured apps), which then defines its ``server`` fixture as this one."""
    srv = Server(tmp_path_factory.mktemp("zerocode-e2e"))
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def server(shared_server: Server) -> Iterator[Server]:
    """The shared server, running (a module may have restarted or stopped it); a module
    that needs other settings or a data directory of its own defines its own ``server``."""
    yield running(shared_server)


def signed_in(server: Server, role_hint: str = "user") -> httpx.Client:
    """A client for a new account, with its bearer token set."""
    account = f"{role_hint}-{secrets.token_hex(4)}"
    c = httpx.Client(base_url=server.api, timeout=httpx.Timeout(300, connect=5), verify=tls())
    assert (
        c.post(
            "/api/users/register", json={"account": account, "password": "correct horse"}
        ).status_code
        == 201
    )
    token = c.post(
        "/api/users/login", json={"account": account, "password": "correct horse"}
    ).json()["token"]
    c.headers["Authorization"] = f"Bearer {token}"
    c.cookies.clear()  # bearer only: cookie auth is tested on its own
    return c


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    c = signed_in(server)
    yield c
    c.close()


@dataclass
class Turn:
    """A chat stream, parsed: text, tool events, build events, errors, and done."""

    text: str = ""
    tools: list[dict[str, Any]] = field(default_factory=list)
    builds: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    checks: list[dict[str, Any]] = field(default_factory=list)  # acceptance check verdicts
    repairs: list[dict[str, Any]] = field(default_factory=list)
    done: dict[str, Any] | None = None
    order: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # each event's SSE id, in order

    @property
    def results(self) -> list[dict[str, Any]]:
        return [t for t in self.tools if t["phase"] == "result"]

    @property
    def ended(self) -> tuple[str, int] | None:
        """How the turn ended: its done's status and number (the checks' tally apart)."""
        return (self.done["status"], self.done["turn"]) if self.done is not None else None


def parse_sse(lines: Iterator[str]) -> Turn:
    turn, event, data, ident = Turn(), "message", [], ""
    for line in lines:
        if line.startswith("id:"):
            ident = line[3:].strip()
        elif line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif line == "" and data:
            payload = json.loads("\n".join(data))
            turn.order.append(event)
            turn.ids.append(ident)
            lists = {
                "tool": turn.tools,
                "build": turn.builds,
                "error": turn.errors,
                "check": turn.checks,
                "repair": turn.repairs,
            }
            if event == "message":
                turn.text += payload["d"]
            elif event in lists:
                lists[event].append(payload)
            elif event == "done":
                turn.done = payload
            event, data, ident = "message", [], ""
    return turn


def chat(
    client: httpx.Client, app_id: str, message: str, element: dict[str, Any] | None = None
) -> Turn:
    body: dict[str, Any] = {"message": message}
    if element:
        body["element"] = element
    with client.stream("POST", f"/api/apps/{app_id}/chat", json=body) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return parse_sse(response.iter_lines())


def shown_build(client: httpx.Client, app_id: str) -> str:
    """The preview build the app shows now: what an element picked in it names
    (``element.buildId``; a chat or text edit naming another build is refused, 409)."""
    shown = client.get(f"/api/apps/{app_id}/preview")
    assert shown.status_code == 200 and shown.json()["buildId"], shown.text
    return str(shown.json()["buildId"])


def create(client: httpx.Client, prompt: str, mode: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"initPrompt": prompt}
    if mode:
        body["codeGenType"] = mode
    response = client.post("/api/apps", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


def wait_for_build(
    client: httpx.Client, app_id: str, build_id: str, timeout: float = 300
) -> dict[str, Any]:
    """Poll a build until it finished (deploys run in the background)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        build = client.get(f"/api/apps/{app_id}/builds/{build_id}")
        assert build.status_code == 200, build.text
        if build.json()["state"] in ("succeeded", "failed"):
            return dict(build.json())
        time.sleep(0.1)
    raise AssertionError(f"build {build_id} did not finish in {timeout} s")


def running_turn(client: httpx.Client, app_id: str, timeout: float = 60) -> int:
    """The number of the turn running on the app, as soon as one runs: from then on it holds
    the app's lease (engine/turns.py takes the lease, then lists the turn as current), so
    another turn or a restore is refused. Asked every 50 ms instead of waiting a fixed time."""
    deadline = time.monotonic() + timeout
    while True:
        current = client.get(f"/api/apps/{app_id}/turns/current")
        if current.status_code == 200:
            return int(current.json()["turn"])
        assert current.status_code == 204, current.text
        if time.monotonic() >= deadline:
            raise AssertionError(f"no turn of app {app_id} ran within {timeout} s")
        time.sleep(0.05)


def stop_turn(client: httpx.Client, app_id: str, turn: int) -> None:
    """Ask the app's running turn to stop (a ``[[slow]]`` turn that served as the one holding
    the lease need not spend its remaining seconds)."""
    stopped = client.post(f"/api/apps/{app_id}/turns/{turn}/cancel")
    assert stopped.status_code in (202, 409), stopped.text  # 409: it had ended already


# How the tests' own Chromium (the console's, a visitor's) is started. Without the quiet
# features each context also loaded the omnibox popup's WebUI in a renderer of its own,
# beside the page (adapters/local/browser_box.py, QUIET_FEATURES): CPU nobody asked for.
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    f"--disable-features={QUIET_FEATURES}",
]


@contextlib.contextmanager
def chromium_browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (skips the test when it is not installed,
    unless ZEROCODE_REQUIRE_CHROMIUM is set)."""
    executable = shutil.which("chromium")
    if executable is None:
        if os.environ.get("ZEROCODE_REQUIRE_CHROMIUM"):
            raise RuntimeError("ZEROCODE_REQUIRE_CHROMIUM is set but chromium is not installed")
        pytest.skip("chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=executable,
            args=BROWSER_ARGS,
        )
        yield chromium
        chromium.close()
