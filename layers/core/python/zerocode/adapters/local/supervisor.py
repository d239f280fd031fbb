"""One command of a build, run behind its limits and watched from a thread of its own.

The event loop never reads or parses a build's output: a build that prints without end once
cost the loop 1.7 s per MiB, and ``/api/health`` waited with it. Each run gets a dedicated
thread (not the default executor, which the platform's store calls share) that reads the
pipe with ``select`` against a hard deadline, keeps only a bounded tail of the log (parsed
into lines once, at the end) and scans for the platform's ``zerocode: `` notices with
``bytes.find``. A timer thread kills the process group at the deadline whatever the reader
is doing; an asyncio cancellation kills it too.

Limits are set by small programs, not by Python code between fork and exec (``preexec_fn``
is unsafe while the platform runs threads): ``prlimit`` for rlimits, an ``sh`` line that
enters the build's cgroups, and a Python one-liner that closes every descriptor but
stdin/out/err first (an event loop's subprocesses keep inheritable descriptors whatever
close_fds says; a build must hold nothing of the platform's).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import re
import select
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, TypeVar

from zerocode import faults
from zerocode.publishing.output_archive import Readable

T = TypeVar("T")

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FRAME = re.compile(r"^\s+at \S")
_NOTICE = b"zerocode: "


@dataclass(frozen=True)
class Limits:
    seconds: float = 180
    memory_bytes: int = 2 << 30
    processes: int = 256
    file_bytes: int = 64 << 20  # the largest file a build may write
    disk_bytes: int = 512 << 20  # all it may write (its work directory's tmpfs; build_quota.py)
    output_bytes: int = 1 << 20  # what a build may print before it is stopped
    log_lines: int = 40
    line_chars: int = 400


@dataclass(frozen=True)
class Run:
    ok: bool
    log: list[str]  # the last lines, bounded (stack frames left out)
    reason: str | None = None  # why it failed, for people
    notices: tuple[str, ...] = ()  # the platform's own messages from the build ("zerocode: ")


class Refused(Exception):
    """What a run's stdout consumer raises when the output breaks a rule: the run fails with
    this message as its reason."""


class Log:
    """The tail of what a build printed, and the platform's notices in all of it.

    Feeding is O(chunk) in C (concatenation, ``rfind``, ``find``); lines are split, cleaned
    of ANSI colours and JavaScript stack frames, and bounded only in :meth:`lines`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._tail = bytearray()
        self._keep = max(64 << 10, limits.log_lines * limits.line_chars * 8)
        self._partial = b""
        self.notices: list[str] = []

    def feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        end = data.rfind(b"\n")
        if end < 0:
            self._partial = data[: self.limits.line_chars * 4 + 4]  # a line's start is enough
            return
        complete, self._partial = data[:end], data[end + 1 :][: self.limits.line_chars * 4 + 4]
        if len(self.notices) < 3 and _NOTICE in complete:
            for raw in complete.split(b"\n"):
                if _NOTICE in raw and len(self.notices) < 3:
                    text = self._clean(raw)
                    if "zerocode: " in text:
                        self.notices.append(text[text.index("zerocode: ") :])
        self._tail += complete + b"\n"
        if len(self._tail) > 2 * self._keep:
            del self._tail[: len(self._tail) - self._keep]

    def _clean(self, raw: bytes) -> str:
        text = _ANSI.sub("", raw.decode(errors="replace")).rstrip()
        limit = self.limits.line_chars
        return text if len(text) <= limit else text[:limit] + "…"

    def lines(self) -> list[str]:
        raw = bytes(self._tail[-self._keep :]) + self._partial
        kept = [self._clean(line) for line in raw.split(b"\n")]
        kept = [t for t in kept if t and not _FRAME.match(t)]  # a stack frame: noise for people
        return kept[-self.limits.log_lines :]


class _Pipe:
    """A blocking read end read with ``select``, so no read outlives the hard deadline."""

    def __init__(self, stream: IO[bytes], hard_deadline: float) -> None:
        self.fd, self.deadline = stream.fileno(), hard_deadline
        os.set_blocking(self.fd, False)

    def read(self, size: int = -1) -> bytes:
        size = 1 << 16 if size is None or size < 0 else min(size, 1 << 20)
        while True:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                try:
                    return os.read(self.fd, size)
                except BlockingIOError:
                    continue


# Closes every descriptor but stdin/out/err, then execs the rest.
_CLOSE_FDS = "import os,sys; os.closerange(3, 1 << 20); os.execv(sys.argv[1], sys.argv[1:])"
_ENTER = (  # sh: write its own pid into each cgroup.procs given before --, then exec the rest
    'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; exec "$@"'
)


def confined(
    argv: Sequence[str], limits: Limits, *, nproc: bool, procs: Sequence[str]
) -> list[str]:
    """``argv`` behind its rlimits, in the cgroups whose ``cgroup.procs`` files are given."""
    limited = [
        shutil.which("prlimit") or "/usr/bin/prlimit",
        "--core=0",
        f"--fsize={limits.file_bytes}",
        *([f"--nproc={limits.processes}"] if nproc else []),  # per uid: binds once dropped
        "--",
        *argv,
    ]
    closed = [sys.executable, "-I", "-S", "-c", _CLOSE_FDS]
    if not procs:
        return [*closed, *limited]
    return [*closed, "/bin/sh", "-c", _ENTER, "sh", *procs, "--", *limited]


@dataclass
class Job:
    """One run: the command (already confined), and who reads its stdout."""

    argv: list[str]
    cwd: str
    env: dict[str, str]
    limits: Limits
    consume: Callable[[Readable], object] | None = None  # stdout's reader; else it is log
    exit_reason: Callable[[int | None], str] | None = None
    proc: subprocess.Popen[bytes] | None = None
    killed: bool = False

    def kill(self) -> None:
        self.killed = True
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, 9)


def _drain(pipe: _Pipe, log: Log, limits: Limits) -> str | None:
    printed = 0
    while chunk := pipe.read(1 << 16):
        printed += len(chunk)
        if printed > limits.output_bytes:
            return f"the build printed more than {limits.output_bytes // 1024} KiB and was stopped"
        log.feed(chunk)
    return None


def _start(job: Job, *, stdin: bool = False) -> subprocess.Popen[bytes] | Run:
    try:
        proc = subprocess.Popen(
            job.argv,
            cwd=job.cwd,
            env=job.env,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if job.consume else subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return Run(
            ok=False,
            log=[f"cannot start the build: {exc}"],
            reason=f"cannot start the build: {exc}",
        )
    job.proc = proc
    if job.killed:
        job.kill()
    return proc


def run_blocking(job: Job) -> Run:
    """Run ``job`` to its end in this (non-loop) thread."""
    proc = _start(job)
    return proc if isinstance(proc, Run) else _follow(job, proc)


def _follow(job: Job, proc: subprocess.Popen[bytes]) -> Run:
    """Watch a started run to its end, behind its deadline (counted from now)."""
    limits, log = job.limits, Log(job.limits)
    faults.point("during_build")
    late = threading.Event()

    def deadline() -> None:
        late.set()
        job.kill()

    timer = threading.Timer(limits.seconds, deadline)
    timer.daemon = True
    timer.start()
    hard = time.monotonic() + limits.seconds + 5  # past it no read waits any longer
    reason: str | None = None
    try:
        reason = _watch(job, proc, log, hard)
        if reason is None and not late.is_set():
            proc.wait(max(0.1, hard - time.monotonic()))
    except (TimeoutError, subprocess.TimeoutExpired):
        late.set()
    finally:
        timer.cancel()
        _reap(job, proc)
    if reason is None:
        reason = _ended_badly(job, proc, late=late.is_set())
    lines = log.lines()
    if reason is not None:
        lines.append(reason)
    return Run(reason is None, lines, reason, tuple(log.notices))


def _watch(job: Job, proc: subprocess.Popen[bytes], log: Log, hard: float) -> str | None:
    """Read what the run writes until it closes its pipes: why its output was refused, or
    None. Raises TimeoutError past ``hard``."""
    assert proc.stdout is not None
    if job.consume is None:
        return _drain(_Pipe(proc.stdout, hard), log, job.limits)
    assert proc.stderr is not None
    errors = _Pipe(proc.stderr, hard)
    said: list[str | None] = [None]
    side = threading.Thread(
        target=lambda: said.__setitem__(0, _drain(errors, log, job.limits)), daemon=True
    )
    side.start()
    out = _Pipe(proc.stdout, hard)
    reason: str | None = None
    try:
        job.consume(out)
        _read_past_the_end(out)
    except Refused as exc:
        reason = str(exc)
        job.kill()  # else it blocks on a full pipe while stderr is waited for
    side.join(max(0.0, hard - time.monotonic()))
    return reason or said[0]


def _read_past_the_end(out: _Pipe) -> None:
    """Read what follows the archive (tar's padding; a writer never blocks on it), refusing
    more than 1 MiB of it."""
    trailing = 0
    while chunk := out.read(1 << 16):
        trailing += len(chunk)
        if trailing > 1 << 20:
            raise Refused("the build's output went on past its archive's end")


def _reap(job: Job, proc: subprocess.Popen[bytes]) -> None:
    """However the run ended: its process group killed if it still runs, waited for, and
    its pipes closed."""
    if proc.poll() is None:
        job.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _ended_badly(job: Job, proc: subprocess.Popen[bytes], *, late: bool) -> str | None:
    """Why a run whose output was not refused failed (the deadline, a cancel, its exit
    code), or None when it worked."""
    if late:
        return f"the build took longer than {job.limits.seconds:.0f} s and was stopped"
    if job.killed:
        return "the build was cancelled"
    if proc.returncode != 0:
        code = proc.returncode
        return job.exit_reason(code) if job.exit_reason else f"the build exited with code {code}"
    return None


async def in_thread(fn: Callable[[], T], on_cancel: Callable[[], object]) -> T:
    """``fn()`` in a dedicated thread; if the awaiting task is cancelled, ``on_cancel()``
    (which must make ``fn`` return soon) and wait for it before re-raising."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def work() -> None:
        try:
            result = fn()
        except BaseException as exc:  # handed to the awaiting task, not lost in the thread
            loop.call_soon_threadsafe(_settle, done, None, exc)
        else:
            loop.call_soon_threadsafe(_settle, done, result, None)

    threading.Thread(target=work, name="zerocode-build", daemon=True).start()
    try:
        return await asyncio.shield(done)
    except asyncio.CancelledError:
        on_cancel()
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(15):
                await done
        raise


def _settle(future: asyncio.Future[T], result: T | None, exc: BaseException | None) -> None:
    if future.done():
        return
    if exc is not None:
        future.set_exception(exc)
    else:
        future.set_result(result)  # type: ignore[arg-type]


async def supervise(job: Job) -> Run:
    return await in_thread(lambda: run_blocking(job), job.kill)


class Standby:
    """A run started ahead of need, used at most once (a prepared build box).

    Its process starts now and waits, reading its stdin, until :meth:`go` writes one line;
    its deadline (``job.limits.seconds``) counts from then. Unused after ``ttl`` seconds, or
    on :meth:`discard`, its process group is killed. The process is started and followed
    by one thread of its own that lives as long as it does: bwrap's ``--die-with-parent``
    follows the thread that started it, and the server's death kills it too."""

    GO = b"go\n"

    def __init__(self, job: Job, ttl: float) -> None:
        self.job, self.ttl = job, ttl
        self.started_at = time.monotonic()
        self._go = threading.Event()
        self.started = threading.Event()  # its process was started (or could not be)
        self._taken = False
        self._lock = threading.Lock()
        self.result: concurrent.futures.Future[Run] = concurrent.futures.Future()
        threading.Thread(target=self._main, name="zerocode-prepared-box", daemon=True).start()

    @property
    def alive(self) -> bool:
        proc = self.job.proc
        return (
            not self._taken
            and not self.job.killed
            and not self.result.done()
            and (proc is None or proc.poll() is None)
            and time.monotonic() - self.started_at < self.ttl
        )

    def take(self) -> bool:
        """Claim the run for its one use; False if it was used, discarded or is gone."""
        with self._lock:
            if not self.alive:
                return False
            self._taken = True
            return True

    def discard(self) -> None:
        with self._lock:
            self._taken = True
        self.job.kill()
        self._go.set()

    async def go(self) -> Run:
        """Start the claimed run's work and follow it to its end."""
        assert self._taken, "take() first"
        self._go.set()
        try:
            return await asyncio.shield(asyncio.wrap_future(self.result))
        except asyncio.CancelledError:
            self.job.kill()
            with contextlib.suppress(BaseException):
                async with asyncio.timeout(15):
                    await asyncio.wrap_future(self.result)
            raise

    def _main(self) -> None:
        try:
            run = self._body()
        except BaseException as exc:  # handed to the awaiting task, not lost in the thread
            self.result.set_exception(exc)
        else:
            self.result.set_result(run)

    def _body(self) -> Run:
        try:
            proc = _start(self.job, stdin=True)
        finally:
            self.started.set()
        if isinstance(proc, Run):
            return proc
        self._go.wait(self.ttl)
        with self._lock:
            used = self._taken and not self.job.killed
            self._taken = True  # past its time: never taken any more
        if not used:
            self.job.kill()
            _reap(self.job, proc)
            return Run(ok=False, log=[], reason="the prepared box was not used in time")
        assert proc.stdin is not None
        with contextlib.suppress(OSError):  # a box that died is found by the watch below
            proc.stdin.write(self.GO)
            proc.stdin.close()
        return _follow(self.job, proc)
