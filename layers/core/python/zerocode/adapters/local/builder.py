"""Local builds: a snapshot of the source in, an immutable site directory out.

A Vue project is untrusted code, built in a sandbox (:mod:`zerocode.adapters.local.sandbox`):
each build gets a fresh directory of its own, ``build-work/{appId}/{buildId}/``, holding the
app's sources with the platform's package.json and vite.config.js in place of its own
(:func:`zerocode.publishing.toolchain.build_tree`); the platform's toolchain, installed
once from its lockfile (:mod:`zerocode.adapters.local.toolchain_store`), is mounted read-only as
its node_modules, and ``vite build`` is the only command that runs. No npm install, no script of
the app's. HTML and multi-file apps are not compiled: their files are checked
(``index.html`` must exist) and copied from the snapshot.

A Vue build's output is untrusted data: it leaves the box as one tar stream made by ``tar``
in a second, read-only box, and is unpacked here by strict rules
(:mod:`zerocode.publishing.output_archive`: regular files and directories only, names
checked, at most 5,000 entries and 100 MiB). The host never walks or copies the box's tree by
name (a ``dist`` the build replaced by a link once published another user's workspace).
Either way the result is written to a temporary directory and renamed to
``builds/{appId}/{buildId}/``: the output appears whole or not at all, and nothing writes to
it afterwards.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

from zerocode.adapters.local.private import private_dir
from zerocode.adapters.local.sandbox import BoxUnavailable, Limits, Readable, Refused, Sandbox
from zerocode.adapters.local.toolchain_store import ToolchainStore
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import check_app_id, clean_path
from zerocode.publishing import output_archive, toolchain
from zerocode.publishing.builds import BuildJob, BuildOutcome


class LocalBuilder:
    def __init__(
        self, root: Path, sandbox: Sandbox, store: ToolchainStore, limits: Limits | None = None
    ) -> None:
        root = root.resolve()  # the sandbox binds absolute paths; data_dir may be relative
        self.outputs, self.work = root / "builds", root / "build-work"
        self.sandbox, self.store, self.limits = sandbox, store, limits or Limits()
        for directory in (self.outputs, self.work):
            private_dir(directory)

    def output_dir(self, app_id: str, build_id: str) -> Path:
        return self.outputs / check_app_id(app_id) / check_app_id(build_id)

    async def build(self, job: BuildJob) -> BuildOutcome:
        if "index.html" not in job.source.files and job.kind is not CodeGenType.VUE_PROJECT:
            return BuildOutcome(
                ok=False, log_tail="", output=None, error="the app has no index.html yet"
            )
        if job.kind is not CodeGenType.VUE_PROJECT:
            log_tail = f"checked {len(job.source.files)} file(s); index.html present"
            place = await asyncio.to_thread(self._place_files, job)
            return BuildOutcome(ok=True, log_tail=log_tail, output=str(place))
        if self.sandbox.refusal is not None:
            return BuildOutcome(
                ok=False, log_tail=self.sandbox.refusal, output=None, error=self.sandbox.refusal
            )
        modules, install_log = await self.store.ensure()
        if modules is None:
            return BuildOutcome(
                ok=False,
                log_tail="\n".join(install_log),
                output=None,
                error="the platform's build toolchain could not be installed",
            )
        work = self.work / check_app_id(job.app_id) / check_app_id(job.build_id)
        try:
            await asyncio.to_thread(_write_tree, work, toolchain.build_tree(job.source.files))
            return await self._build_in_box(job, work, modules, install_log)
        except BoxUnavailable as exc:
            why = f"the build was refused: {exc}"
            return BuildOutcome(
                ok=False, log_tail="\n".join([*install_log, why]), output=None, error=why
            )
        finally:
            await asyncio.to_thread(
                shutil.rmtree, work, ignore_errors=True
            )  # rmtree never follows links

    async def _build_in_box(
        self, job: BuildJob, work: Path, modules: Path, install_log: list[str]
    ) -> BuildOutcome:
        final = self.output_dir(job.app_id, job.build_id)
        tmp = await asyncio.to_thread(self._tmp_for, final)
        async with self.sandbox.open(work, modules, self.limits) as box:
            run = await box.run(["node", *toolchain.VITE_ARGS])
            log = [*install_log, f"$ vite build ({self.sandbox.description})", *run.log]
            if not run.ok:
                return BuildOutcome(
                    ok=False,
                    log_tail="\n".join(log),
                    output=None,
                    error=_failure(run.reason, run.notices),
                )
            handed = await box.export("dist", lambda stream: _unpack(stream, tmp))
        try:
            if not handed.ok:
                why = handed.reason or "the build's output could not be handed over"
                log.append(why)
                return BuildOutcome(
                    ok=False,
                    log_tail="\n".join(log),
                    output=None,
                    error=f"the project did not build: {why}",
                )
            if not await asyncio.to_thread(_publish, tmp, final):
                log.append("build finished but dist/index.html is missing")
                return BuildOutcome(
                    ok=False,
                    log_tail="\n".join(log),
                    output=None,
                    error="the project did not build",
                )
        finally:
            if tmp.exists():
                await asyncio.to_thread(shutil.rmtree, tmp, ignore_errors=True)
        return BuildOutcome(ok=True, log_tail="\n".join(log), output=str(final))

    def _tmp_for(self, final: Path) -> Path:
        if final.exists():
            raise FileExistsError(f"build output {final} exists: build ids are never reused")
        final.parent.mkdir(parents=True, exist_ok=True)
        return final.parent / f".tmp-{final.name}-{secrets.token_hex(4)}"

    def delete_app(self, app_id: str) -> int:
        removed = 0
        for root in (self.outputs, self.work):
            target = root / check_app_id(app_id)
            if target.exists():
                shutil.rmtree(target)
                removed += 1
        return removed

    def _place_files(self, job: BuildJob) -> Path:
        def write(tmp: Path) -> None:
            tmp.mkdir()
            for path, data in job.source.files.items():
                target = tmp / clean_path(path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)

        return self._place(job, write)

    def _place(self, job: BuildJob, fill: Callable[[Path], object]) -> Path:
        final = self.output_dir(job.app_id, job.build_id)
        tmp = self._tmp_for(final)
        try:
            fill(tmp)  # makes tmp
            if not (tmp / "index.html").is_file():
                raise FileNotFoundError("the build output has no index.html")
            os.rename(tmp, final)  # atomic: the output appears whole
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return final


def _failure(reason: str | None, notices: tuple[str, ...]) -> str:
    """The build's error for people: the confinement message when that is what stopped it."""
    if notices:
        return notices[0][:480]
    if reason is None or reason.startswith("the build exited"):
        return "the project did not build"
    return f"the project did not build: {reason}"


def _write_tree(work: Path, files: dict[str, bytes]) -> None:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    for path, data in files.items():
        target = work / clean_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _publish(tmp: Path, final: Path) -> bool:
    """Rename the unpacked output into place (atomic: it appears whole), if it has a page."""
    index = tmp / "index.html"
    if not index.is_file() or index.is_symlink():
        return False
    os.rename(tmp, final)
    return True


def _unpack(stream: Readable, tmp: Path) -> None:
    """The box's archive into ``tmp``; a broken rule becomes the run's reason."""
    try:
        output_archive.unpack(stream, tmp)
    except output_archive.OutputRefused as exc:
        raise Refused(str(exc)) from None
