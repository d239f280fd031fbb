"""Local builds: a snapshot of the source in, an immutable site directory out.

Vue projects are built in a working directory per app that is kept between builds, so
``node_modules`` survives and the next build of the same dependencies skips the install
(the npm cache is shared by every app as well). A new app whose dependencies were installed
before (generated projects pin the same versions) gets them from a store of installed
trees, ``deps/{digest of package.json and lock}``, hard-linked in instead of installed:
only ``vite build`` is left to run. Store trees are never written after they are made; a
build that wrote into a linked file would change the store, which Vite and npm do not do
(they replace files), and the store is only ever read. The snapshot is synced into it
(changed files written, removed files deleted), the old ``dist/`` cleared, and npm run.
HTML and multi-file apps are not compiled: their files are checked (``index.html`` must
exist) and copied. Either way the result is copied to a temporary directory and renamed
to ``builds/{appId}/{buildId}/``: the output appears whole or not at all, and nothing
writes to it afterwards.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import shutil
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path

from zerocode.adapters.npm_builder import BuildStatus, NpmBuilder
from zerocode.apps import CodeGenType
from zerocode.builds import BuildJob, BuildOutcome
from zerocode.workspace import NON_SOURCE_DIRS, check_app_id, clean_path

DEPS_MARKER = ".zerocode-deps"  # in node_modules: which dependency set it holds


class LocalBuilder:
    def __init__(self, root: Path, npm: NpmBuilder) -> None:
        self.outputs, self.work, self.npm = root / "builds", root / "build-work", npm
        self.deps = root / "deps"
        for directory in (self.outputs, self.work, self.deps):
            directory.mkdir(parents=True, exist_ok=True)
        # One build at a time per app: they share the app's working directory.
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    def output_dir(self, app_id: str, build_id: str) -> Path:
        return self.outputs / check_app_id(app_id) / check_app_id(build_id)

    async def build(self, job: BuildJob) -> BuildOutcome:
        async with self._locks[job.app_id]:
            if "index.html" not in job.source.files and job.kind is not CodeGenType.VUE_PROJECT:
                return BuildOutcome(False, "", None, "the app has no index.html yet")
            if job.kind is CodeGenType.VUE_PROJECT:
                work = self.work / check_app_id(job.app_id)
                await asyncio.to_thread(_sync, work, job.source.files)
                digest = _deps_digest(job.source.files)
                installed = await asyncio.to_thread(self._link_deps, work, digest)
                run = await self.npm.build(work, install=not installed)
                if run.status is not BuildStatus.SUCCEEDED or run.output is None:
                    return BuildOutcome(False, run.log_tail, None, "the project did not build")
                if not installed:
                    await asyncio.to_thread(self._keep_deps, work, digest)
                log_tail = run.log_tail if not installed else \
                    f"dependencies {digest[:12]} reused, npm install skipped\n{run.log_tail}"
                place = await asyncio.to_thread(self._place_tree, job, run.output)
            else:
                log_tail = f"checked {len(job.source.files)} file(s); index.html present"
                place = await asyncio.to_thread(self._place_files, job)
            return BuildOutcome(True, log_tail, str(place))

    def _link_deps(self, work: Path, digest: str) -> bool:
        """True when ``work/node_modules`` holds exactly these dependencies (already, or
        linked in from the store now)."""
        modules = work / "node_modules"
        marker = modules / DEPS_MARKER
        if marker.is_file() and marker.read_text() == digest:
            return True
        stored = self.deps / digest
        if not (stored / DEPS_MARKER).is_file():
            return False
        shutil.rmtree(modules, ignore_errors=True)
        shutil.copytree(stored, modules, symlinks=True, copy_function=os.link)
        return True

    def _keep_deps(self, work: Path, digest: str) -> None:
        """Remember a fresh install for the next app with the same dependencies."""
        modules = work / "node_modules"
        marker = modules / DEPS_MARKER
        marker.unlink(missing_ok=True)  # it may be a link into the store: never write through
        marker.write_text(digest)
        stored = self.deps / digest
        if stored.exists() or not modules.is_dir():
            return
        tmp = self.deps / f".tmp-{digest}-{secrets.token_hex(4)}"
        try:
            shutil.copytree(modules, tmp, symlinks=True, copy_function=os.link)
            os.rename(tmp, stored)
        except OSError:
            pass  # another build stored it first, or links are not possible here: no reuse
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def delete_app(self, app_id: str) -> int:
        removed = 0
        for root in (self.outputs, self.work):
            target = root / check_app_id(app_id)
            if target.exists():
                shutil.rmtree(target)
                removed += 1
        return removed

    def _place_tree(self, job: BuildJob, site: Path) -> Path:
        return self._place(job, lambda tmp: shutil.copytree(site, tmp, symlinks=False))

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
        if final.exists():
            raise FileExistsError(f"build output {final} exists: build ids are never reused")
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.parent / f".tmp-{job.build_id}-{secrets.token_hex(4)}"
        try:
            fill(tmp)  # makes tmp
            if not (tmp / "index.html").is_file():
                raise FileNotFoundError("the build output has no index.html")
            os.rename(tmp, final)  # atomic: the output appears whole
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return final


def _deps_digest(files: Mapping[str, bytes]) -> str:
    h = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        h.update(name.encode() + b"\0" + files.get(name, b"") + b"\0")
    return h.hexdigest()


def _sync(work: Path, files: Mapping[str, bytes]) -> None:
    """Make ``work`` hold exactly the snapshot's source (build products are left alone)."""
    work.mkdir(parents=True, exist_ok=True)
    wanted = {clean_path(p): data for p, data in files.items()}
    for dirpath, dirnames, filenames in os.walk(work):
        rel_dir = Path(dirpath).relative_to(work)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d not in NON_SOURCE_DIRS]
        for name in filenames:
            rel = (rel_dir / name).as_posix()
            if rel not in wanted:
                (Path(dirpath) / name).unlink()
    for rel, data in wanted.items():
        target = work / rel
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    shutil.rmtree(work / "dist", ignore_errors=True)  # a stale dist must never pass as new
