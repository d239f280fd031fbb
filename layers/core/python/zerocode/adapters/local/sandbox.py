"""Where a local build's commands run: in bubblewrap, never with the platform's privileges.

A Vue build runs the platform's toolchain over the model's code (docs/security.md). Inside
the box the build sees only its own directory (writable, at ``/build``), the toolchain's
``node_modules`` (read-only, at ``/build/node_modules``) and the system's ``/usr`` (read-only);
no network, no other process, a clean environment (bubblewrap itself is started with only
``PATH``, so even the box's ``/proc/1/environ`` holds nothing of the platform's), an
unprivileged uid of its own (when the platform runs as root: one of a pool, see
``box_uids.py``, so process limits are per build), its own cgroup (``cgroups.py``) inside
the server's builds' cgroup (``build_slice.py``), a work directory that is a size-bounded
tmpfs (``build_quota.py``), and limits on time, memory, processes, file size and output.

A build is a :class:`Box` session: its commands run one after another, then its output
leaves as one tar stream written by ``tar`` in a second, read-only box (nothing the build
started is alive by then: its pid namespace died with it), which the host unpacks by strict
rules (:mod:`zerocode.publishing.output_archive`). The host never walks the box's tree.

Without bubblewrap, Vue builds are refused with one message naming the package, unless the
loudly named development override ``ZEROCODE_DANGEROUSLY_UNSANDBOXED_BUILDS=1`` is set; the
banner and ``/api/health`` then say that builds are unsandboxed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from importlib import resources
from pathlib import Path
from typing import Protocol

from zerocode.adapters.local import build_quota, cgroups
from zerocode.adapters.local.box_uids import NoUidFree, UidPool
from zerocode.adapters.local.build_slice import builds_cgroup
from zerocode.adapters.local.host_box import BOX_ENV, Unsandboxed, tar_argv
from zerocode.adapters.local.sandbox_probe import (
    OWN_USERNS,
    own_userns_works,
    probe,
    sizes_tmpfs,
)
from zerocode.adapters.local.supervisor import (
    Job,
    Limits,
    Refused,
    Run,
    Standby,
    confined,
    supervise,
)
from zerocode.publishing import toolchain
from zerocode.publishing.output_archive import Readable

__all__ = [
    "Box",
    "Limits",
    "PreparedBox",
    "Readable",
    "Refused",
    "Run",
    "Sandbox",
    "Unsandboxed",
    "sandbox",
]

MISSING = (
    "builds need bubblewrap, the sandbox untrusted code is built in, and `bwrap` is "
    "not installed: install the package `bubblewrap` (apt-get install bubblewrap), or "
    "for development only set ZEROCODE_DANGEROUSLY_UNSANDBOXED_BUILDS=1"
)
# Where the platform's own read-only files are in a box: Node's compile cache (made once per
# toolchain, docs/builds.md) and the prepared box's runner.
PLATFORM = "/zerocode"
COMPILE_CACHE = f"{PLATFORM}/compile-cache"
RUNNER = f"{PLATFORM}/{toolchain.RUNNER}"
MODULES = "/build/node_modules"


class BoxUnavailable(Exception):
    """No box could be made for this build (its cgroup, or every uid busy): refused."""


class Box(Protocol):
    """One build's box: its commands, then its output handed over."""

    async def run(self, argv: Sequence[str]) -> Run: ...

    async def export(self, root: str, consume: Callable[[Readable], object]) -> Run:
        """``tar`` of ``root`` (relative to the project) to ``consume``, in the box."""
        ...


class Sandbox(Protocol):
    description: str  # for the banner and /api/health
    sandboxed: bool
    refusal: str | None  # why no build may run at all (no sandbox, no override)

    def open(
        self, project: Path, modules: Path, limits: Limits, *, cache: Path | None = None
    ) -> AbstractAsyncContextManager[Box]:
        """A box for building ``project`` with ``modules`` as its node_modules (and
        ``cache``, Node's compile cache, read-only); raises :class:`BoxUnavailable`."""
        ...


async def run_once(
    box: Sandbox, argv: Sequence[str], project: Path, modules: Path, limits: Limits
) -> Run:
    """One command in a fresh box (tests and probes)."""
    async with box.open(project, modules, limits) as session:
        return await session.run(argv)


class Refusing:
    """No sandbox and no override: every build that would run code fails, saying why."""

    sandboxed = False

    def __init__(self, why: str = MISSING) -> None:
        self.refusal: str | None = why
        self.description = f"refused: {why}"

    @contextlib.asynccontextmanager
    async def open(
        self, project: Path, modules: Path, limits: Limits, *, cache: Path | None = None
    ) -> AsyncIterator[Box]:
        raise BoxUnavailable(self.refusal or MISSING)
        yield  # pragma: no cover


class _BubblewrapBox:
    def __init__(
        self,
        owner: Bubblewrap,
        project: Path,
        modules: Path,
        limits: Limits,
        uid: int | None,
        group: cgroups.BuildCgroup | None,
        cache: Path | None = None,
        quota: Path | None = None,
    ) -> None:
        self.owner, self.project, self.modules, self.limits = owner, project, modules, limits
        self.uid, self.group, self.cache, self.quota = uid, group, cache, quota

    def _job(
        self,
        argv: list[str],
        consume: Callable[[Readable], object] | None,
        *,
        writable: bool,
        runner: bool = False,
        cache_writable: bool = False,
    ) -> Job:
        box = self.owner.argv(
            argv,
            self.project,
            self.modules,
            self.limits,
            self.uid,
            writable=writable,
            cache=self.cache if writable else None,
            cache_writable=cache_writable,
            runner=runner,
        )
        group = self.group
        procs = group.procs if group else []
        return Job(
            confined(box, self.limits, nproc=self.uid is not None, procs=procs),
            "/",
            {"PATH": "/usr/bin:/bin"},
            self.limits,
            consume,
            functools.partial(
                build_quota.exit_reason,
                group=group,
                quota=self.quota,
                quota_bytes=self.limits.disk_bytes,
            ),
        )

    async def run(self, argv: Sequence[str]) -> Run:
        return await supervise(self._job(list(argv), None, writable=True))

    async def export(self, root: str, consume: Callable[[Readable], object]) -> Run:
        return await supervise(self._job(tar_argv(root), consume, writable=False))


class PreparedBox:
    """A build box started ahead of its build (docs/builds.md, "Builds start warm").

    Made by :meth:`Bubblewrap.prepare` over an empty work directory: bwrap, the box's uid and
    cgroup, and Node running the platform's runner, which loads the toolchain's modules and
    waits. It holds nothing of any app: the build tree is written into :attr:`project` only
    when its one build starts (:meth:`run`), and the box then runs ``vite build`` and nothing
    else. It is used once: a second :meth:`run` or :meth:`take` is refused. Not taken within
    its ``ttl``, its process is killed; :meth:`close` releases its uid, cgroup and directory
    hold (the caller removes the directory)."""

    def __init__(
        self,
        box: _BubblewrapBox,
        standby: Standby,
        stack: contextlib.AsyncExitStack,
    ) -> None:
        self._box, self._standby, self._stack = box, standby, stack
        self.project = box.project
        self._ran = False
        self._closed = False
        self.claimed = False  # taken for its build

    @property
    def uid(self) -> int | None:
        return self._box.uid

    @property
    def started_at(self) -> float:
        """When its start began (``time.monotonic()``)."""
        return self._standby.started_at

    @property
    def ready(self) -> bool:
        """Still waiting for its build (not taken, not expired, its process alive)."""
        return self._standby.alive

    @property
    def pid(self) -> int | None:
        proc = self._standby.job.proc
        return proc.pid if proc is not None else None

    def take(self) -> bool:
        """Claim the box for its one build; False if it is gone or was taken."""
        self.claimed = self._standby.take()
        return self.claimed

    def kill(self) -> None:
        """Kill its process now (unused); :meth:`close` still lets its uid and cgroup go."""
        self._standby.discard()

    async def run(self, argv: Sequence[str]) -> Run:
        """The one build: the tree is in :attr:`project` by now. Only ``vite build``."""
        if not self.claimed or self._ran or tuple(argv) != ("node", *toolchain.VITE_ARGS):
            raise BoxUnavailable("a prepared box runs one `vite build` and nothing else")
        self._ran = True
        await asyncio.to_thread(_prepare, self.project, self._box.uid)
        return await self._standby.go()

    async def export(self, root: str, consume: Callable[[Readable], object]) -> Run:
        return await self._box.export(root, consume)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._standby.discard()
        with contextlib.suppress(BaseException):
            await asyncio.wrap_future(self._standby.result)
        await self._stack.aclose()


class Bubblewrap:
    """The real box (bubblewrap from Debian's package ``bubblewrap``)."""

    sandboxed = True
    refusal: str | None = None

    def __init__(
        self,
        bwrap: str,
        node: str,
        cgroups_parents: list[Path] | None = None,
        pool: UidPool | None = None,
        *,
        quota: str | None = "no disk quota per build",
        cgroups_said: str = "",
    ) -> None:
        """``cgroups_parents``: the builds' cgroup (``build_slice.py``) each build's goes
        under; ``quota``: None when a disk quota per build can be mounted, else why not."""
        self.bwrap, self.node, self.cgroups = bwrap, node, cgroups_parents
        self.quota = quota is None
        self.as_root = os.geteuid() == 0
        self.pool = (pool or UidPool()) if self.as_root else None
        self.own_userns = self.as_root and own_userns_works(bwrap, self.pool)
        self.sized_tmp = sizes_tmpfs(bwrap)
        parts = ["bubblewrap"]
        if self.as_root:
            parts.append("a uid of its own per build")
        parts.append("its own user namespace" if self.own_userns or not self.as_root else
                     "no user namespace (the kernel refuses one)")  # fmt: skip
        parts.append("cgroup per build" if cgroups_parents else "rlimits only (no cgroups)")
        parts += [cgroups_said] if cgroups_said else []
        parts.append("a tmpfs disk quota per build" if quota is None else quota)
        self.description = "sandboxed (" + ", ".join(parts) + ")"

    @contextlib.asynccontextmanager
    async def open(
        self, project: Path, modules: Path, limits: Limits, *, cache: Path | None = None
    ) -> AsyncIterator[Box]:
        async with contextlib.AsyncExitStack() as stack:
            yield await self._enter(stack, project, modules, limits, cache, wait=limits.seconds)

    async def _enter(
        self,
        stack: contextlib.AsyncExitStack,
        project: Path,
        modules: Path,
        limits: Limits,
        cache: Path | None,
        *,
        wait: float,
        quota: bool = False,
    ) -> _BubblewrapBox:
        """The box's uid (waiting ``wait`` at most), cgroup and, with ``quota`` (``project``
        is empty then), its disk quota mounted over ``project``, all held by ``stack``."""
        uid: int | None = None
        if self.pool is not None:
            try:
                uid = await stack.enter_async_context(self.pool.uid(wait))
            except NoUidFree as exc:
                raise BoxUnavailable(str(exc)) from None
        group: cgroups.BuildCgroup | None = None
        if self.cgroups is not None:
            try:
                group = await asyncio.to_thread(
                    cgroups.BuildCgroup.make,
                    list(self.cgroups),
                    limits.memory_bytes,
                    limits.processes,
                )
            except cgroups.CgroupUnavailable as exc:
                raise BoxUnavailable(str(exc)) from None
            # Removal may wait (and sleep) for the group to empty: never on the loop.
            stack.push_async_callback(asyncio.to_thread, group.remove)
        mounted: Path | None = None
        if quota and self.quota:
            try:
                await asyncio.to_thread(build_quota.mount, project, limits.disk_bytes)
            except build_quota.QuotaUnavailable as exc:
                raise BoxUnavailable(str(exc)) from None
            mounted = project  # unmounted before the cgroup goes: its pages are freed first
            stack.push_async_callback(asyncio.to_thread, build_quota.unmount, project)
        await asyncio.to_thread(_prepare, project, uid)
        return _BubblewrapBox(self, project, modules, limits, uid, group, cache, mounted)

    async def prepare(
        self,
        project: Path,
        modules: Path,
        limits: Limits,
        *,
        cache: Path | None = None,
        ttl: float = 120,
        wait: float = 0,
        cache_writable: bool = False,
    ) -> PreparedBox:
        """A box for one ``vite build`` of ``project``, started now, before the tree is
        there (``project`` must be empty: the caller writes the tree when the build starts).
        Waits ``wait`` seconds at most for a uid, then raises :class:`BoxUnavailable`."""
        if await asyncio.to_thread(_holds_anything, project):
            raise BoxUnavailable("a prepared box starts with an empty work directory")
        stack = contextlib.AsyncExitStack()
        standby: Standby | None = None
        try:
            box = await self._enter(stack, project, modules, limits, cache, wait=wait, quota=True)
            job = box._job(
                ["node", RUNNER], None, writable=True, runner=True, cache_writable=cache_writable
            )
            standby = Standby(job, ttl)
            await asyncio.to_thread(standby.started.wait, 30)
        except BaseException:
            if standby is not None:
                standby.discard()
            await stack.aclose()
            raise
        return PreparedBox(box, standby, stack)

    def argv(
        self,
        argv: Sequence[str],
        project: Path,
        modules: Path,
        limits: Limits,
        uid: int | None,
        *,
        writable: bool = True,
        cache: Path | None = None,
        cache_writable: bool = False,
        runner: bool = False,
    ) -> list[str]:
        """bwrap's command line. As root, bwrap makes the box (it can reach any path, e.g. a
        data directory only root may enter) and ``setpriv`` then drops the command to ``uid``
        with no capabilities and no_new_privs; otherwise bwrap runs as the platform's user in
        a user namespace."""
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
        if uid is not None:
            unshare = [
                "--unshare-pid",
                "--unshare-net",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-cgroup-try",
            ]
            drop = [
                "setpriv",
                f"--reuid={uid}",
                f"--regid={uid}",
                "--clear-groups",
                "--inh-caps=-all",
                "--bounding-set=-all",
                "--no-new-privs",
                "--",
            ]
            if self.own_userns:  # then, unprivileged, a user namespace of its own
                drop += [self.bwrap, *OWN_USERNS, "--chdir", "/build", "--"]
        else:
            unshare, drop = ["--unshare-all", "--cap-drop", "ALL"], []
        node_dir = str(Path(self.node).resolve().parent)
        own = toolchain.node_binary()  # the toolchain's Node 22, inside the mounted toolchain
        if writable and own and (modules / own).is_file():
            node_dir = f"{MODULES}/{own.rsplit('/', 1)[0]}"
        path = ":".join(dict.fromkeys([node_dir, "/usr/bin", "/bin"]))
        env = ["--setenv", "PATH", path, "--setenv", "NODE_OPTIONS", f"--max-old-space-size={heap}"]
        for key, value in BOX_ENV.items():
            env += ["--setenv", key, value]
        platform: list[str] = []
        if cache is not None or runner:  # the directory bwrap makes would be root's, 0700
            platform += ["--perms", "0755", "--dir", PLATFORM]
        if cache is not None:  # read-only, except in the box that makes it at install
            env += ["--setenv", "NODE_COMPILE_CACHE", COMPILE_CACHE]
            platform += ["--bind" if cache_writable else "--ro-bind", str(cache), COMPILE_CACHE]
        tmp = ["--size", str(limits.disk_bytes)] if self.sized_tmp else []  # /tmp is no escape
        if runner:
            with resources.as_file(resources.files(toolchain).joinpath(toolchain.RUNNER)) as f:
                platform += ["--ro-bind", str(f), RUNNER]
        return [
            self.bwrap, *unshare, "--die-with-parent", "--new-session", "--clearenv", *env,
            *binds, "--proc", "/proc", "--dev", "/dev", *tmp, "--tmpfs", "/tmp",
            "--bind" if writable else "--ro-bind", str(project.resolve()), "/build",
            *(["--ro-bind", str(modules.resolve()), MODULES] if writable else []),
            *platform, "--chdir", "/build", "--", *drop, *argv,
        ]  # fmt: skip


def _holds_anything(project: Path) -> bool:
    return any(p.name != "node_modules" for p in project.iterdir())


def _prepare(project: Path, uid: int | None) -> None:
    """Make the build directory the box's user's: the only place it can write. Runs before
    anything ran in the box, over a tree the platform just wrote."""
    (project / "node_modules").mkdir(exist_ok=True)  # the toolchain's mount point
    if uid is None:
        return
    for dirpath, _dirnames, filenames in os.walk(project):
        os.chown(dirpath, uid, uid)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)
    project.chmod(0o700)


def sandbox(*, override: bool, use_cgroups: bool = True) -> Sandbox:
    """Bubblewrap when it is installed and works; the override, loudly; otherwise refusal
    (also when, as root, the builds' cgroup cannot be made: never builds without limits)."""
    node = shutil.which("node") or "node"
    bwrap = shutil.which("bwrap")
    broken = probe(bwrap) if bwrap is not None else MISSING
    if bwrap is not None and broken is None:
        try:
            parents, said = builds_cgroup(use=use_cgroups)
        except cgroups.CgroupUnavailable as exc:
            return Refusing(str(exc))
        return Bubblewrap(bwrap, node, parents, quota=build_quota.works(), cgroups_said=said)
    if override:
        return Unsandboxed(node)
    return Refusing(broken or MISSING)
