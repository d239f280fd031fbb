"""The development override's box (the host itself, loudly named) and what every box shares:
the environment a build sees and the ``tar`` that hands its output over."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

from zerocode.adapters.local.supervisor import Job, Limits, Run, confined, supervise
from zerocode.publishing import toolchain
from zerocode.publishing.output_archive import Readable

BOX_ENV = {"HOME": "/tmp", "CI": "1", "NO_COLOR": "1"}


def _tar() -> str:
    return shutil.which("tar") or "/usr/bin/tar"


def tar_argv(root: str) -> list[str]:
    # ``root`` itself is archived, not entered: a root the build replaced by a link is a link
    # member (refused), never followed. No -h: links stay links (refused by the host).
    return [_tar(), "--create", "--file=-", "--format=posix", "--sort=name", "--", root]


class _HostBox:
    """The development override's box: the host itself (loudly named)."""

    def __init__(self, owner: Unsandboxed, project: Path, limits: Limits, modules: Path) -> None:
        self.owner, self.project, self.limits = owner, project, limits
        own = toolchain.node_binary()  # the toolchain's Node 22 when it has one, as in a box
        self.node = str(modules / own) if own and (modules / own).is_file() else owner.node

    def _job(self, argv: list[str], consume: Callable[[Readable], object] | None) -> Job:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            **BOX_ENV,
            "HOME": str(self.project),
        }
        boxed = confined(argv, self.limits, nproc=False, procs=[])
        return Job(boxed, str(self.project), env, self.limits, consume)

    async def run(self, argv: Sequence[str]) -> Run:
        argv = [self.node, *argv[1:]] if argv[0] == "node" else list(argv)
        return await supervise(self._job(argv, None))

    async def export(self, root: str, consume: Callable[[Readable], object]) -> Run:
        return await supervise(self._job(tar_argv(root), consume))


class Unsandboxed:
    """The development override: the build runs as the platform, with a clean environment
    and the same limits, but nothing stops code from reading the host. Loudly named."""

    sandboxed = False
    refusal: str | None = None
    description = "UNSANDBOXED (ZEROCODE_DANGEROUSLY_UNSANDBOXED_BUILDS is set)"

    def __init__(self, node: str) -> None:
        self.node = node

    @contextlib.asynccontextmanager
    async def open(
        self, project: Path, modules: Path, limits: Limits, *, cache: Path | None = None
    ) -> AsyncIterator[_HostBox]:
        await asyncio.to_thread(_link_modules, project, modules)
        yield _HostBox(self, project, limits, modules)


def _link_modules(project: Path, modules: Path) -> None:
    """The override's node_modules: a link to the toolchain (no box to mount it in)."""
    link = project / "node_modules"
    if link.is_symlink() or link.exists():
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        else:
            link.unlink()
    link.symlink_to(modules.resolve(), target_is_directory=True)
