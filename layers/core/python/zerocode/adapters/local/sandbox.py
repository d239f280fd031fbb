"""Where a local build's commands run: in bubblewrap, never with the platform's privileges.

A Vue build runs the platform's toolchain over the model's code (docs/security.md). Inside
the box the build sees only its own directory (writable, at ``/build``), the toolchain's
``node_modules`` (read-only, at ``/build/node_modules``) and the system's ``/usr`` (read-only);
no network, no other process, a clean environment, an unprivileged uid (when the platform
runs as root the box itself is started as ``nobody``), and limits on time, memory,
processes, file size and output. Nothing else of the host exists in there: not the
platform's data directory, its environment, nor another app's build.

Without bubblewrap, Vue builds are refused with one message naming the package, unless the
loudly named development override ``ZEROCODE_DANGEROUSLY_UNSANDBOXED_BUILDS=1`` is set; the
banner and ``/api/health`` then say that builds are unsandboxed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import re
import secrets
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from zerocode import faults

NOBODY = 65534
MISSING = (
    "builds need bubblewrap, the sandbox untrusted code is built in, and `bwrap` is "
    "not installed: install the package `bubblewrap` (apt-get install bubblewrap), or "
    "for development only set ZEROCODE_DANGEROUSLY_UNSANDBOXED_BUILDS=1"
)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FRAME = re.compile(r"^\s+at \S")


@dataclass(frozen=True)
class Limits:
    seconds: float = 180
    memory_bytes: int = 2 << 30
    processes: int = 256
    file_bytes: int = 64 << 20  # the largest file a build may write
    output_bytes: int = 1 << 20  # what a build may print before it is stopped
    log_lines: int = 40
    line_chars: int = 400


@dataclass(frozen=True)
class Run:
    ok: bool
    log: list[str]  # the last lines, bounded (stack frames left out)
    reason: str | None = None  # why it failed, for people
    notices: tuple[str, ...] = ()  # the platform's own messages from the build ("zerocode: ")


class Sandbox(Protocol):
    """Runs one command of a build in ``project`` with ``modules`` as its node_modules."""

    description: str  # for the banner and /api/health
    sandboxed: bool
    refusal: str | None  # why no build may run at all (no sandbox, no override)

    async def run(
        self, argv: Sequence[str], project: Path, modules: Path, limits: Limits
    ) -> Run: ...


class Refusing:
    """No sandbox and no override: every build that would run code fails, saying why."""

    sandboxed = False

    def __init__(self, why: str = MISSING) -> None:
        self.refusal: str | None = why
        self.description = f"refused: {why}"

    async def run(self, argv: Sequence[str], project: Path, modules: Path, limits: Limits) -> Run:
        why = self.refusal or MISSING
        return Run(False, [why], why)


class Bubblewrap:
    """The real box (bubblewrap from Debian's package ``bubblewrap``)."""

    sandboxed = True
    refusal: str | None = None

    def __init__(self, bwrap: str, node: str, cgroups: Path | None = None) -> None:
        self.bwrap, self.node, self.cgroups = bwrap, node, cgroups
        self.drop_to_nobody = os.geteuid() == 0
        self.description = (
            "sandboxed (bubblewrap" + (", uid nobody" if self.drop_to_nobody else "") + ")"
        )

    def prepare(self, project: Path) -> None:
        """Make the build directory the box's user's: the only place it can write."""
        (project / "node_modules").mkdir(exist_ok=True)  # the toolchain's mount point
        if self.drop_to_nobody:
            for dirpath, _dirnames, filenames in os.walk(project):
                os.chown(dirpath, NOBODY, NOBODY)
                for name in filenames:
                    os.chown(os.path.join(dirpath, name), NOBODY, NOBODY, follow_symlinks=False)
            project.chmod(0o700)

    def argv(self, argv: Sequence[str], project: Path, modules: Path, limits: Limits) -> list[str]:
        """bwrap's command line. As root, bwrap makes the box (it can reach any path, e.g. a
        data directory only root may enter) and ``setpriv`` then drops the command to uid
        nobody with no capabilities and no_new_privs; otherwise bwrap runs as the platform's
        user in a user namespace."""
        node_prefix = Path(self.node).resolve().parent.parent
        binds = ["--ro-bind", "/usr", "/usr"]
        if not node_prefix.is_relative_to("/usr"):
            binds += ["--ro-bind", str(node_prefix), str(node_prefix)]
        for name in ("lib", "lib64", "bin", "sbin"):
            target = Path("/") / name
            if target.is_symlink():
                binds += ["--symlink", os.readlink(target), str(target)]
            elif target.is_dir():
                binds += ["--ro-bind", str(target), str(target)]
        heap = max(256, limits.memory_bytes // (1 << 20) * 3 // 4)
        if self.drop_to_nobody:
            unshare = [
                "--unshare-pid",
                "--unshare-net",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
            ]
            drop = [
                "setpriv",
                f"--reuid={NOBODY}",
                f"--regid={NOBODY}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
        else:
            unshare, drop = ["--unshare-all", "--cap-drop", "ALL"], []
        return [
            self.bwrap,
            *unshare,
            "--die-with-parent",
            "--new-session",
            "--clearenv",
            "--setenv",
            "PATH",
            ":".join(dict.fromkeys([str(Path(self.node).resolve().parent), "/usr/bin", "/bin"])),
            "--setenv",
            "HOME",
            "/tmp",
            "--setenv",
            "CI",
            "1",
            "--setenv",
            "NO_COLOR",
            "1",
            "--setenv",
            "NODE_OPTIONS",
            f"--max-old-space-size={heap}",
            *binds,
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
            "--bind",
            str(project.resolve()),
            "/build",
            "--ro-bind",
            str(modules.resolve()),
            "/build/node_modules",
            "--chdir",
            "/build",
            "--",
            *drop,
            *argv,
        ]

    async def run(self, argv: Sequence[str], project: Path, modules: Path, limits: Limits) -> Run:
        await asyncio.to_thread(self.prepare, project)
        cgroup = _Cgroup.make(self.cgroups, limits)
        try:
            return await _supervise(
                self.argv(argv, project, modules, limits),
                Path("/"),
                limits,
                user=NOBODY if self.drop_to_nobody else None,
                cgroup=cgroup,
            )
        finally:
            if cgroup is not None:
                cgroup.remove()


class Unsandboxed:
    """The development override: the build runs as the platform, with a clean environment
    and the same limits, but nothing stops code from reading the host. Loudly named."""

    sandboxed = False
    refusal: str | None = None
    description = "UNSANDBOXED (ZEROCODE_DANGEROUSLY_UNSANDBOXED_BUILDS is set)"

    def __init__(self, node: str) -> None:
        self.node = node

    async def run(self, argv: Sequence[str], project: Path, modules: Path, limits: Limits) -> Run:
        link = project / "node_modules"
        if link.is_symlink() or link.exists():
            if link.is_dir() and not link.is_symlink():
                shutil.rmtree(link)
            else:
                link.unlink()
        link.symlink_to(modules.resolve(), target_is_directory=True)
        return await _supervise(
            [self.node, *argv[1:]] if argv[0] == "node" else list(argv),
            project,
            limits,
            user=None,
            cgroup=None,
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(project),
                "CI": "1",
                "NO_COLOR": "1",
            },
        )


def sandbox(override: bool, cgroups: bool = True) -> Sandbox:
    """Bubblewrap when it is installed and works; the override, loudly; otherwise refusal."""
    node = shutil.which("node") or "node"
    bwrap = shutil.which("bwrap")
    broken = _probe(bwrap) if bwrap is not None else MISSING
    if bwrap is not None and broken is None:
        return Bubblewrap(bwrap, node, _Cgroup.root() if cgroups else None)
    if override:
        return Unsandboxed(node)
    return Refusing(broken or MISSING)


@functools.cache
def _probe(bwrap: str) -> str | None:
    """None when bwrap can make a box here (as the box's user), else why not."""
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is needed to set a build's limits"
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            return "setpriv (util-linux) is needed to drop builds to an unprivileged uid"
        argv = [
            bwrap,
            "--unshare-pid",
            "--unshare-net",
            "--ro-bind",
            "/",
            "/",
            "--",
            "setpriv",
            f"--reuid={NOBODY}",
            f"--regid={NOBODY}",
            "--clear-groups",
            "--no-new-privs",
            "--",
            "true",
        ]
    else:
        argv = [bwrap, "--unshare-all", "--ro-bind", "/", "/", "--", "true"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap is installed but cannot run: {exc}"
    if done.returncode != 0:
        return (
            "bubblewrap is installed but cannot create a sandbox here: "
            + done.stderr.decode(errors="replace").strip()[:300]
        )
    return None


_ENTER = (  # sh: write its own pid into each cgroup.procs given before --, then exec the rest
    'for f; do [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; shift; done; shift; exec "$@"'
)


# Closes every descriptor but stdin/out/err, then execs the rest: an event loop's subprocesses
# (uvloop's) keep the parent's inheritable descriptors whatever close_fds says, and a build
# must hold nothing of the platform's (a listening socket, a database file).
_CLOSE_FDS = "import os,sys; os.closerange(3, 1 << 20); os.execv(sys.argv[1], sys.argv[1:])"


def _confined(argv: list[str], limits: Limits, nproc: bool, cgroup: _Cgroup | None) -> list[str]:
    """The command behind its limits, set by small programs rather than by Python code
    between fork and exec (``preexec_fn`` is unsafe while the platform runs threads: a child
    can deadlock on a lock another thread held at the fork)."""
    limited = [
        shutil.which("prlimit") or "/usr/bin/prlimit",
        "--core=0",
        f"--fsize={limits.file_bytes}",
        *([f"--nproc={limits.processes}"] if nproc else []),  # per uid: binds once nobody
        "--",
        *argv,
    ]
    closed = [sys.executable, "-I", "-S", "-c", _CLOSE_FDS]
    if cgroup is None:
        return [*closed, *limited]
    procs = [str(group / "cgroup.procs") for group in cgroup.dirs]
    return [*closed, "/bin/sh", "-c", _ENTER, "sh", *procs, "--", *limited]


async def _supervise(
    argv: list[str],
    cwd: Path,
    limits: Limits,
    *,
    user: int | None,
    cgroup: _Cgroup | None,
    env: dict[str, str] | None = None,
) -> Run:
    """Run with rlimits (and the cgroup), a deadline and a bounded log.

    The deadline is a timer of its own that kills the process group whatever the reader is
    doing; output is read in chunks, so a build that prints without newlines, or without
    end, only ever fills a bounded buffer; and the wait after a kill is bounded too."""
    log = _Log(limits)
    try:
        proc = await asyncio.create_subprocess_exec(
            *_confined(argv, limits, user is not None, cgroup),
            cwd=cwd,
            env=env if env is not None else {"PATH": "/usr/bin:/bin"},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return Run(False, [f"cannot start the build: {exc}"], f"cannot start the build: {exc}")
    faults.point("during_build")
    assert proc.stdout is not None
    stdout = proc.stdout
    reason: str | None = None
    late = False

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, 9)

    def deadline() -> None:
        nonlocal late
        late = True
        kill()

    timer = asyncio.get_running_loop().call_later(limits.seconds, deadline)
    try:
        # The timer kills; this bound also ends the wait if something outside the process
        # group (none can, in bubblewrap's pid namespace) kept the pipe open.
        async with asyncio.timeout(limits.seconds + 5):
            printed = 0
            while chunk := await stdout.read(1 << 16):
                printed += len(chunk)
                if printed > limits.output_bytes:
                    reason = (
                        f"the build printed more than {limits.output_bytes // 1024} KiB "
                        "and was stopped"
                    )
                    break
                log.feed(chunk)
            log.feed(b"\n")
            if reason is None and not late:
                await proc.wait()  # the timer ends this too
    except TimeoutError:
        late = True
    finally:
        timer.cancel()
        if proc.returncode is None:
            kill()
        await asyncio.shield(_reap(proc))
    if late and reason is None:
        reason = f"the build took longer than {limits.seconds:.0f} s and was stopped"
    if reason is None and proc.returncode != 0:
        reason = _exit_reason(proc.returncode, cgroup)
    if reason is not None:
        log.lines.append(reason)
    return Run(reason is None, list(log.lines), reason, tuple(log.notices))


class _Log:
    """The last lines a build printed, each bounded, without ANSI colours or JS stack
    frames, and the platform's own ``zerocode: `` notices among them."""

    def __init__(self, limits: Limits) -> None:
        self.lines: deque[str] = deque(maxlen=limits.log_lines)
        self.notices: list[str] = []
        self._limit = limits.line_chars
        self._partial = b""

    def feed(self, chunk: bytes) -> None:
        *complete, rest = (self._partial + chunk).split(b"\n")
        self._partial = rest[: self._limit * 4 + 4]  # utf-8: at most 4 bytes a character
        for line in complete:
            self._line(line)

    def _line(self, raw: bytes) -> None:
        text = _ANSI.sub("", raw.decode(errors="replace")).rstrip()
        if not text:
            return
        text = text if len(text) <= self._limit else text[: self._limit] + "…"
        if "zerocode: " in text and len(self.notices) < 3:
            self.notices.append(text[text.index("zerocode: ") :])
        if not _FRAME.match(text):  # a JavaScript stack frame: noise in a build log for people
            self.lines.append(text)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait for a build to be gone. Its output is discarded to the end first: a build
    stopped for printing too much leaves the reader paused on a full buffer, and asyncio
    only counts the process as ended once the pipe is seen closed. Both waits are bounded."""
    assert proc.stdout is not None
    with contextlib.suppress(TimeoutError, OSError):
        async with asyncio.timeout(10):
            while await proc.stdout.read(1 << 16):
                pass
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(10):
            await proc.wait()


def _exit_reason(code: int | None, cgroup: _Cgroup | None) -> str:
    if cgroup is not None and cgroup.out_of_memory():
        return "the build ran out of memory (the sandbox's limit) and was stopped"
    if code is not None and code < 0:
        return f"the build was killed by signal {-code}"
    return f"the build exited with code {code}"


class _Cgroup:
    """Memory and process limits for one build, in cgroup v2 or v1 when the platform may
    make cgroups (root); otherwise the rlimits and V8's heap limit are all there is."""

    def __init__(self, dirs: list[Path]) -> None:
        self.dirs = dirs

    @staticmethod
    def root() -> Path | None:
        base = Path("/sys/fs/cgroup")
        if os.geteuid() != 0:
            return None
        if (base / "cgroup.controllers").is_file():
            return base
        if (base / "memory").is_dir() and (base / "pids").is_dir():
            return base
        return None

    @classmethod
    def make(cls, root: Path | None, limits: Limits) -> _Cgroup | None:
        if root is None:
            return None
        name = f"zerocode-build-{secrets.token_hex(6)}"
        made: list[Path] = []
        try:
            if (root / "cgroup.controllers").is_file():  # v2
                group = root / name
                group.mkdir()
                made.append(group)
                (group / "memory.max").write_text(str(limits.memory_bytes))
                (group / "memory.swap.max").write_text("0")
                (group / "pids.max").write_text(str(limits.processes))
            else:  # v1
                memory, pids = root / "memory" / name, root / "pids" / name
                memory.mkdir()
                made.append(memory)
                (memory / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                pids.mkdir()
                made.append(pids)
                (pids / "pids.max").write_text(str(limits.processes))
        except OSError:
            cls(made).remove()
            return None
        return cls(made)

    def out_of_memory(self) -> bool:
        for group in self.dirs:
            for name, key in (("memory.events", "oom_kill "), ("memory.failcnt", "")):
                with contextlib.suppress(OSError):
                    text = (group / name).read_text()
                    if key and any(
                        line.startswith(key) and line.split()[1] != "0"
                        for line in text.splitlines()
                    ):
                        return True
                    if not key and text.strip() not in ("", "0"):
                        return True
        return False

    def remove(self) -> None:
        for group in self.dirs:
            with contextlib.suppress(OSError):
                group.rmdir()
