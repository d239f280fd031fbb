"""Test servers forked from one process per test worker that has imported the platform
already (issue 40, point 2: docs/benchmarks.md, "The test suite").

A ``zerocode serve`` started with ``python -m`` spent about 1.2 CPU-s before it answered:
importing FastAPI, pydantic, the ``openai`` package (its types alone ~0.3 s) and the
platform, and building the o200k tokenizer (~0.25 s). The e2e tier starts over a hundred
servers per run on two cores. Here one process (the *zygote*) pays that once; each server is
a ``fork()`` of it that then runs exactly what ``python -m zerocode.entrypoints.cli serve``
runs, with the environment, working directory and output the test asked for. Nothing the
zygote did reads the environment: settings, wiring and every probe run in the child, after
its environment is set. Tests that need a process of their own kind (a process group of its
own, a server outside the zygote's cgroup) start it with ``subprocess`` as before
(:attr:`tests.e2e.conftest.Server.forked`).

The zygote is single-threaded (a fork from a threaded process could copy a held lock): one
loop over its socket, its connections and a SIGCHLD pipe. Each connection asks for one
server and then carries its exit status, so :class:`Forked` answers like a ``Popen``
(``poll``, ``wait``, ``terminate``, ``kill``, ``returncode`` as ``Popen`` gives it, ``-9``
for SIGKILL). The zygote ends, its servers with it, when the test worker goes (its stdin
closes).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

STOP_SECONDS = 10.0  # the zygote's servers, when the worker has gone: SIGTERM, then SIGKILL


class Forked:
    """A server forked by the zygote, answering as :class:`subprocess.Popen` does."""

    def __init__(self, conn: socket.socket, pid: int, args: list[str]) -> None:
        self.conn, self.pid, self.args = conn, pid, args
        self.returncode: int | None = None
        self._said = b""

    def poll(self) -> int | None:
        if self.returncode is None:
            self._read(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self._read(timeout)
        if self.returncode is None:
            raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _read(self, timeout: float | None) -> None:
        """The exit status, if the zygote sends it within ``timeout`` (None: until it does)."""
        ready, _, _ = select.select([self.conn], [], [], timeout)
        while ready and b"\n" not in self._said:
            chunk = self.conn.recv(4096)
            if not chunk:  # the zygote went away: its servers went with it
                self._said += b'{"exit": -9}\n'
                break
            self._said += chunk
        if b"\n" in self._said:
            self.returncode = int(json.loads(self._said.split(b"\n")[0])["exit"])
            self.conn.close()


class Zygote:
    """The test worker's side: starts the zygote on first use and asks it for servers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._path = Path(tempfile.mkdtemp(prefix="zerocode-zygote-")) / "sock"

    def spawn(self, args: list[str], env: dict[str, str], output: Path) -> Forked:
        """``python -m zerocode.entrypoints.cli`` with ``args`` (its argv after the module),
        ``env`` as its whole environment, stdout and stderr to ``output``."""
        self._started()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(self._path))
        ask = {"args": args, "env": env, "cwd": os.getcwd(), "output": str(output)}
        conn.sendall(json.dumps(ask).encode() + b"\n")
        said = b""
        while b"\n" not in said:
            chunk = conn.recv(4096)
            if not chunk:
                raise RuntimeError("the test zygote went away")
            said += chunk
        first, rest = said.split(b"\n", 1)
        forked = Forked(conn, int(json.loads(first)["pid"]), [sys.executable, "-m", *args])
        forked._said = rest
        return forked

    def _started(self) -> None:
        with self._lock:
            if self._proc is not None and self._proc.poll() is None:
                return
            self._path.unlink(missing_ok=True)
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "tests.e2e.forked", str(self._path)],
                stdin=subprocess.PIPE,
                cwd=Path(__file__).resolve().parents[2],
            )
            while not self._path.exists():  # it listens once it has imported everything
                if self._proc.poll() is not None:
                    raise RuntimeError("the test zygote did not start")
                select.select([], [], [], 0.02)


ZYGOTE = Zygote()


# The zygote's side.


def _prepare() -> None:
    """What every server pays before it answers, paid once (see the module)."""
    import zerocode.adapters.model.openai
    import zerocode.bootstrap.parts
    import zerocode.bootstrap.wiring
    import zerocode.entrypoints.cli
    import zerocode.entrypoints.server  # noqa: F401
    from zerocode.memory.tokens import o200k

    o200k()
    gc.freeze()  # what the servers share stays shared: no collection writes to its pages


def _child(ask: dict[str, Any], keep: list[int]) -> None:
    """In the forked child: become ``python -m zerocode.entrypoints.cli <args>``; never
    returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)  # before its pipe is closed: a signal meanwhile writes there
        for fd in keep:
            os.close(fd)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as a fresh interpreter
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # Python ignores it at start-up
        out = os.open(ask["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        os.close(out)
        os.close(null)
        os.chdir(ask["cwd"])
        os.environ.clear()
        os.environ.update(ask["env"])
        from zerocode.entrypoints import cli

        sys.argv = [cli.__file__, *ask["args"]]
        try:
            code = cli.main(ask["args"]) or 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def serve(path: str) -> None:
    """The zygote's loop (see the module)."""
    _prepare()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".new")
    listener.listen(64)
    os.rename(path + ".new", path)  # the worker waits for the path: now it answers
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    servers: dict[int, socket.socket] = {}
    pending: dict[socket.socket, bytes] = {}
    while True:
        try:
            ready, _, _ = select.select([listener, wake_r, sys.stdin, *pending], [], [])
        except InterruptedError:
            continue
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 4096):
            break  # the test worker went away
        if wake_r in ready:
            os.read(wake_r, 4096)
            _reap(servers)
        if listener in ready:
            conn, _ = listener.accept()
            pending[conn] = b""
        for conn in [c for c in ready if c in pending]:
            chunk = conn.recv(65536)
            if not chunk:
                del pending[conn]
                conn.close()
                continue
            pending[conn] += chunk
            if b"\n" not in pending[conn]:
                continue
            ask = json.loads(pending.pop(conn).split(b"\n")[0])
            keep = [listener.fileno(), wake_r, wake_w, conn.fileno()]
            keep += [c.fileno() for c in (*pending, *servers.values())]
            pid = os.fork()
            if pid == 0:
                _child(ask, keep)
            servers[pid] = conn
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        _reap(servers)
    _end(servers)


def _reap(servers: dict[int, socket.socket]) -> None:
    """Each server that ended: its status to its connection, as ``Popen`` would give it."""
    for pid in list(servers):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if done == 0:
            continue
        conn = servers.pop(pid)
        try:
            code = os.waitstatus_to_exitcode(status)
            conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
        except OSError:
            pass
        conn.close()


def _end(servers: dict[int, socket.socket]) -> None:
    """The worker went away: its servers stop as a terminated ``Popen``'s would."""
    for pid in servers:
        os.kill(pid, signal.SIGTERM)
    deadline = _now() + STOP_SECONDS
    while servers and _now() < deadline:
        _reap(servers)
        select.select([], [], [], 0.05)
    for pid in servers:
        os.kill(pid, signal.SIGKILL)


def _now() -> float:
    import time

    return time.monotonic()


if __name__ == "__main__":
    serve(sys.argv[1])
