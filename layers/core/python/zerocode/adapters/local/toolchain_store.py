"""The installed toolchain for local Vue builds: one read-only ``node_modules`` per lockfile.

Installed once, from the platform's own package.json and lockfile
(:mod:`zerocode.publishing.toolchain`)
with ``npm ci --ignore-scripts``: npm checks every package against the lockfile's integrity
hashes, and no package's install script runs. Nothing of an app's takes part in the install,
so a build never installs anything: it mounts this tree read-only. The tree is made in a
temporary directory and renamed into place (``toolchain/{digest}/``), so it appears whole
or not at all, and it is never written again; a build cannot change what another will use.
Processes sharing the directory install it once: the install holds an ``flock``.

Beside it, Node's compile cache (``toolchain/{digest}/compile-cache/``), made once by a build
of the platform's own small project (the builder runs it in a box, :meth:`make_compile_cache`)
and read-only afterwards like the toolchain: every build's box mounts it read-only, so Node
loads Vite and the rest without compiling them again, and no build can change what another
loads.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import secrets
import shutil
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path

from zerocode.publishing import toolchain

LOG_LINES = 30


class ToolchainStore:
    def __init__(
        self, root: Path, npm_cache: Path, npm: str | None = None, timeout: float = 600
    ) -> None:
        self.root, self.npm_cache = root.resolve(), npm_cache.resolve()
        self.npm = npm or shutil.which("npm") or "npm"
        self.timeout = timeout
        self._lock = asyncio.Lock()

    @property
    def modules(self) -> Path:
        return self.root / toolchain.digest() / "node_modules"

    @property
    def compile_cache(self) -> Path:
        return self.root / toolchain.digest() / "compile-cache"

    def installed(self) -> bool:
        return (self.modules / "vite" / "bin" / "vite.js").is_file()

    @contextlib.asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        """This process's lock, then the machine's: another process (a second server on the
        same toolchain directory, a test worker) may be doing the same; one does it, the
        others wait and use it."""
        async with self._lock:
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.root / ".install.lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # releases the lock

    async def ensure(self) -> tuple[Path | None, list[str]]:
        """The toolchain's node_modules (installing it the first time), or None and why."""
        if self.installed():
            return self.modules, []
        async with self._locked():
            if self.installed():
                return self.modules, []
            return await self._install()

    async def make_compile_cache(
        self, warm: Callable[[Path], Awaitable[list[str]]], uids: Iterable[int]
    ) -> tuple[bool, list[str]]:
        """Make the toolchain's compile cache once: ``warm(tmp)`` builds the platform's own
        project with ``tmp`` as Node's writable cache; the cache is then shared by the box
        uids ``uids`` (Node names its directory after the uid that reads it), sealed and
        renamed into place. True when it is there."""
        if self.compile_cache.is_dir():
            return True, []
        async with self._locked():
            if self.compile_cache.is_dir():
                return True, []
            tmp = self.compile_cache.with_name(f".tmp-cache-{secrets.token_hex(4)}")
            tmp.mkdir()
            try:
                said = await warm(tmp)
                if not await asyncio.to_thread(share_cache, tmp, list(uids)):
                    return False, [*said, "the warm-up build left no compile cache"]
                with contextlib.suppress(OSError):
                    os.rename(tmp, self.compile_cache)
                return self.compile_cache.is_dir(), said
            except OSError as exc:
                return False, [f"the compile cache could not be made: {exc}"]
            finally:
                if tmp.exists():
                    await asyncio.to_thread(_remove_sealed, tmp)

    async def _install(self) -> tuple[Path | None, list[str]]:
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".tmp-{toolchain.digest()}-{secrets.token_hex(4)}"
        tmp.mkdir()
        log: deque[str] = deque(maxlen=LOG_LINES)
        log.append(
            f"installing the platform's toolchain {toolchain.digest()} "
            "(npm ci --ignore-scripts, once)"
        )
        try:
            for name, data in toolchain.manifest().items():
                (tmp / name).write_bytes(data)
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(tmp),
                "CI": "1",
                "NO_COLOR": "1",
                "npm_config_update_notifier": "false",
            }
            for key in (
                "HTTPS_PROXY",
                "HTTP_PROXY",
                "NO_PROXY",
                "https_proxy",
                "http_proxy",
                "no_proxy",
                "npm_config_registry",
                "NPM_CONFIG_REGISTRY",
            ):
                if key in os.environ:  # how this host reaches the registry; no secrets
                    env[key] = os.environ[key]
            proc = await asyncio.create_subprocess_exec(
                self.npm,
                *toolchain.NPM_CI_ARGS,
                "--cache",
                str(self.npm_cache),
                cwd=tmp,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
            )
            assert proc.stdout is not None
            try:
                async with asyncio.timeout(self.timeout):
                    async for line in proc.stdout:
                        log.append(line.decode(errors="replace").rstrip()[:400])
                    await proc.wait()
            except TimeoutError:
                log.append(f"npm ci took longer than {self.timeout:.0f} s and was stopped")
            finally:
                if proc.returncode is None:
                    proc.kill()
                    await asyncio.shield(proc.wait())
            if proc.returncode != 0 or not (tmp / "node_modules" / "vite").is_dir():
                log.append(f"installing the toolchain failed (npm ci exited {proc.returncode})")
                return None, list(log)
            await asyncio.to_thread(_seal, tmp)
            final = self.modules.parent
            with contextlib.suppress(FileExistsError, OSError):
                os.rename(tmp, final)  # another process may have made it first: same tree
            return (self.modules, list(log)) if self.installed() else (None, list(log))
        except OSError as exc:
            log.append(f"installing the toolchain failed: {exc}")
            return None, list(log)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)


def _seal(tree: Path) -> None:
    """Read-only for everyone, readable by the box's unprivileged user."""
    for dirpath, _dirnames, filenames in os.walk(tree):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, 0o555 if mode & 0o111 else 0o444)
        os.chmod(dirpath, 0o555)
    os.chmod(tree, 0o755)  # the directory itself stays removable by the platform


def share_cache(cache: Path, uids: list[int]) -> bool:
    """Node keeps its entries in ``v{version}-{arch}-{flags}-{uid}/``: the one the warm-up
    wrote becomes ``entries/``, and each box uid gets a relative link to it. Then the whole
    is the platform's and read-only. False when the warm-up wrote none."""
    made = [d for d in cache.iterdir() if d.is_dir() and not d.is_symlink()]
    if len(made) != 1 or not any(made[0].iterdir()):
        return False
    prefix = made[0].name.rsplit("-", 1)[0]
    os.rename(made[0], cache / "entries")
    for uid in dict.fromkeys(uids):
        (cache / f"{prefix}-{uid}").symlink_to("entries")
    me = os.getuid(), os.getgid()
    for dirpath, _dirnames, filenames in os.walk(cache):
        os.chown(dirpath, *me)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), *me, follow_symlinks=False)
    _seal(cache)
    os.chmod(cache, 0o555)
    return True


def _remove_sealed(tree: Path) -> None:
    for dirpath, _dirnames, _filenames in os.walk(tree):
        with contextlib.suppress(OSError):
            os.chmod(dirpath, 0o755)
    shutil.rmtree(tree, ignore_errors=True)
