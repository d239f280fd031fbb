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
import contextlib
import logging
import os
import secrets
import shutil
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path

from zerocode import faults
from zerocode.adapters.local import build_quota, build_slice, cgroups
from zerocode.adapters.local.build_shares import BuildShares, NoBuildSlot
from zerocode.adapters.local.private import private_dir
from zerocode.adapters.local.sandbox import (
    Box,
    BoxUnavailable,
    Bubblewrap,
    Limits,
    PreparedBox,
    Readable,
    Refused,
    Sandbox,
)
from zerocode.adapters.local.toolchain_store import ToolchainStore
from zerocode.adapters.local.vue_output import finish
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import check_app_id, clean_path
from zerocode.publishing import output_archive, toolchain
from zerocode.publishing.builds import REFUSED, BuildJob, BuildOutcome, served_files
from zerocode.publishing.encodings import Compressed, precompress
from zerocode.publishing.prerender import Prerenderer
from zerocode.publishing.site_head import complete

log = logging.getLogger(__name__)
BOX_SAID = "zerocode: vite build in the box took"
PREPARED, COLD = "prepared ahead", "started for this build"
PREPARING_WAIT = 3.0  # a build waits this long at most for its app's box being prepared


class LocalBuilder:
    """Builds locally; Vue builds in a box of their own, which may be prepared ahead.

    :meth:`prepare` starts a box for an app's next Vue build while the model is still
    working (bwrap, the box's uid and cgroup, Node 22 with the toolchain's modules loaded
    from the compile cache), over an empty work directory: nothing of any app is in it until
    that build starts. :meth:`build` takes the app's prepared box when one is ready, writes
    the build tree into it and runs its one ``vite build``; otherwise it starts a box then
    and there (the same runner, told to go at once). Either way a box runs one build and is
    thrown away. At most ``prepared_max`` boxes wait at a time, each for at most
    ``prepared_seconds``, one per app."""

    def __init__(
        self,
        root: Path,
        sandbox: Sandbox,
        store: ToolchainStore,
        limits: Limits | None = None,
        *,
        prepared_max: int = 2,
        prepared_seconds: float = 120.0,
        shares: BuildShares | None = None,
        prerender: Prerenderer | None = None,
    ) -> None:
        self.prerender = prerender  # a site's Vue routes as HTML (adapters/local/vue_output.py)
        root = root.resolve()  # the sandbox binds absolute paths; data_dir may be relative
        self.outputs, self.work = root / "builds", root / "build-work"
        self.sandbox, self.store, self.limits = sandbox, store, limits or Limits()
        self.shares = shares or BuildShares(default_slots(self.limits), 2, 120.0)
        self.prepared_max, self.prepared_seconds = prepared_max, prepared_seconds
        self._prepared: dict[str, PreparedBox] = {}  # app id → its box, waiting
        # Apps whose box is being prepared, each set once that preparation ended.
        self._preparing: dict[str, asyncio.Event] = {}
        self._tasks: set[asyncio.Task[object]] = set()
        self._cache_tried = False
        for directory in (self.outputs, self.work):
            private_dir(directory)
        build_quota.release_under(self.work)  # a crashed server's quotas (no build runs yet)

    # -- boxes prepared ahead ---------------------------------------------------------------

    def prepare(self, app_id: str) -> None:
        """Start a box for ``app_id``'s next Vue build, in the background (call it from the
        event loop when a turn of a Vue app starts; it returns at once and never fails)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the loop: nothing is prepared, the build starts cold
            return

        async def quietly() -> None:
            try:
                await self.prepare_box(app_id)
            except Exception:  # a box not prepared costs only time: the build starts one
                log.exception("preparing a build box for %s failed", app_id)

        task = loop.create_task(quietly())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def prepare_box(self, app_id: str) -> PreparedBox | None:
        """The box prepared for ``app_id`` (started now unless one is waiting), or None when
        none can be: no bubblewrap, ``prepared_max`` boxes already waiting, the toolchain not
        installable, no uid free. Never raises for those."""
        check_app_id(app_id)
        await self._drop_stale()
        waiting = self._prepared.get(app_id)
        if waiting is not None:
            return waiting
        if (
            not isinstance(self.sandbox, Bubblewrap)
            or app_id in self._preparing
            or len(self._prepared) + len(self._preparing) >= self.prepared_max
        ):
            return None
        self._preparing[app_id] = asyncio.Event()
        try:
            modules, _log = await self.store.ensure()
            if modules is None:
                return None
            cache = await self._compile_cache(modules)
            work = self.work / app_id / f"p{time.time_ns()}{secrets.token_hex(3)}"
            await asyncio.to_thread(_empty_dir, work)
            try:
                box = await self.sandbox.prepare(
                    work, modules, self.limits, cache=cache, ttl=self.prepared_seconds
                )
            except BoxUnavailable as exc:
                log.info("no box prepared for %s: %s", app_id, exc)
                await asyncio.to_thread(shutil.rmtree, work, ignore_errors=True)
                return None
            self._prepared[app_id] = box
            self._reap_later(app_id, box)
            return box
        finally:
            self._preparing.pop(app_id).set()

    def _reap_later(self, app_id: str, box: PreparedBox) -> None:
        """An unused box's process is killed at its bound by its own thread; then its uid,
        cgroup and directory go too (a box taken by a build is closed by that build)."""

        async def reap() -> None:
            await asyncio.sleep(self.prepared_seconds + 0.2)
            if box.claimed:
                return
            if self._prepared.get(app_id) is box:
                del self._prepared[app_id]
            await self._discard(box)

        task = asyncio.get_running_loop().create_task(reap())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drop_stale(self) -> None:
        for app_id, box in list(self._prepared.items()):
            if not box.ready:
                del self._prepared[app_id]
                await self._discard(box)

    async def _discard(self, box: PreparedBox) -> None:
        await box.close()
        await asyncio.to_thread(shutil.rmtree, box.project, ignore_errors=True)

    async def _take(self, app_id: str) -> PreparedBox | None:
        """The app's prepared box, claimed for one build (no longer anyone else's); one that
        expired or died is thrown away. A box still being prepared for the app (asked for a
        moment ago: it started before a box for this build would) is waited for, at most
        ``PREPARING_WAIT`` seconds."""
        preparing = self._preparing.get(app_id)
        if preparing is not None and app_id not in self._prepared:
            with contextlib.suppress(TimeoutError, RuntimeError):  # RuntimeError: another loop's
                async with asyncio.timeout(PREPARING_WAIT):
                    await preparing.wait()
        box = self._prepared.pop(app_id, None)
        if box is None:
            return None
        if box.take():
            return box
        await self._discard(box)
        return None

    async def discard_prepared(self, app_id: str | None = None) -> int:
        """Kill the boxes waiting (for ``app_id``, or all): at shutdown, on deletion."""
        boxes = [
            self._prepared.pop(a) for a in list(self._prepared) if app_id is None or a == app_id
        ]
        for box in boxes:
            await self._discard(box)
        return len(boxes)

    async def _compile_cache(self, modules: Path) -> Path | None:
        """Node's compile cache for this toolchain, made the first time by a build of the
        platform's own small project in a box (nothing of an app's is in it); read-only
        afterwards. None if it could not be made (builds then run without it)."""
        cache = self.store.compile_cache
        if cache.is_dir() or self._cache_tried or not isinstance(self.sandbox, Bubblewrap):
            return cache if cache.is_dir() else None
        self._cache_tried = True
        sandbox = self.sandbox

        async def warm(tmp: Path) -> list[str]:
            work = self.work / "_toolchain" / f"w{secrets.token_hex(4)}"
            await asyncio.to_thread(_empty_dir, work)
            try:
                box = await sandbox.prepare(
                    work, modules, self.limits, cache=tmp, cache_writable=True, ttl=60
                )
                try:
                    if box.uid is not None:  # the box's uid writes the cache
                        await asyncio.to_thread(os.chown, tmp, box.uid, box.uid)
                    await asyncio.to_thread(
                        _write_tree, work, toolchain.build_tree(toolchain.WARM_UP_APP)
                    )
                    box.take()
                    run = await box.run(["node", *toolchain.VITE_ARGS])
                finally:
                    await box.close()
                return [*run.log, *([] if run.ok else [run.reason or "failed"])]
            finally:
                await asyncio.to_thread(shutil.rmtree, work, ignore_errors=True)

        try:
            made, said = await self.store.make_compile_cache(warm, self._box_uids())
        except Exception as exc:  # builds go on without a cache; the next process tries again
            made, said = False, [f"{type(exc).__name__}: {exc}"]
        if not made:
            log.warning("no compile cache for the toolchain: %s", " / ".join(said[-5:]))
        return cache if made else None

    def _box_uids(self) -> list[int]:
        pool = getattr(self.sandbox, "pool", None)
        uids = [os.getuid()]
        if pool is not None:
            uids += list(range(pool.first, pool.first + pool.size))
        return uids

    def output_dir(self, app_id: str, build_id: str) -> Path:
        return self.outputs / check_app_id(app_id) / check_app_id(build_id)

    async def build(self, job: BuildJob) -> BuildOutcome:
        if "index.html" not in job.source.files and job.kind is not CodeGenType.VUE_PROJECT:
            return BuildOutcome(
                ok=False, log_tail="", output=None, error="the app has no index.html yet"
            )
        if job.kind is not CodeGenType.VUE_PROJECT:
            place, packed = await asyncio.to_thread(self._place_files, job)
            checked = f"checked {len(job.source.files)} file(s); index.html present"
            log_tail = f"{checked}\n{packed.said()}"
            return BuildOutcome(ok=True, log_tail=log_tail, output=str(place))
        if self.sandbox.refusal is not None:  # the platform's: no repair of the app helps
            why = f"{REFUSED}{self.sandbox.refusal}"
            return BuildOutcome(ok=False, log_tail=why, output=None, error=why)
        try:
            async with self.shares.slot(job.owner or job.app_id, job.app_id):
                return await self._build_vue(job)
        except NoBuildSlot as exc:
            why = f"{REFUSED}{exc}"
            return BuildOutcome(ok=False, log_tail=why, output=None, error=why)

    async def _build_vue(self, job: BuildJob) -> BuildOutcome:
        modules, install_log = await self.store.ensure()
        if modules is None:
            return BuildOutcome(
                ok=False,
                log_tail="\n".join(install_log),
                output=None,
                error=f"{REFUSED}the platform's build toolchain could not be installed",
            )
        prepared = await self._take(job.app_id)
        work = (
            prepared.project
            if prepared is not None
            else self.work / check_app_id(job.app_id) / check_app_id(job.build_id)
        )
        try:
            if prepared is None and isinstance(self.sandbox, Bubblewrap):
                # Cold: a box started now, the same runner told to go at once. The tree is
                # written while the box starts.
                cache = await self._compile_cache(modules)
                await asyncio.to_thread(_empty_dir, work)
                prepared = await self.sandbox.prepare(
                    work,
                    modules,
                    self.limits,
                    cache=cache,
                    ttl=self.limits.seconds,
                    wait=self.limits.seconds,
                )
                prepared.take()
                how = COLD
            else:
                how = PREPARED if prepared is not None else ""
            await asyncio.to_thread(_write_tree, work, toolchain.build_tree(job.source.files))
            return await self._build_in_box(job, work, modules, install_log, prepared, how)
        except BoxUnavailable as exc:
            why = f"{REFUSED}{exc}"
            return BuildOutcome(
                ok=False, log_tail="\n".join([*install_log, why]), output=None, error=why
            )
        finally:
            if prepared is not None:
                await prepared.close()
            await asyncio.to_thread(
                shutil.rmtree, work, ignore_errors=True
            )  # rmtree never follows links

    @contextlib.asynccontextmanager
    async def _box(
        self, work: Path, modules: Path, prepared: PreparedBox | None
    ) -> AsyncIterator[Box]:
        if prepared is not None:
            yield prepared  # closed by build()
            return
        async with self.sandbox.open(work, modules, self.limits) as box:
            yield box

    async def _build_in_box(
        self,
        job: BuildJob,
        work: Path,
        modules: Path,
        install_log: list[str],
        prepared: PreparedBox | None = None,
        how: str = "",
    ) -> BuildOutcome:
        final = self.output_dir(job.app_id, job.build_id)
        tmp = await asyncio.to_thread(self._tmp_for, final)
        said = f"{self.sandbox.description}; box {how}" if how else self.sandbox.description
        async with self._box(work, modules, prepared) as box:
            # The box's part: from its start for a box started for this build, from the
            # build's start for one prepared ahead (it was waiting).
            started = time.monotonic()
            if prepared is not None and how == COLD:
                started = prepared.started_at
            run = await box.run(["node", *toolchain.VITE_ARGS])
            took = time.monotonic() - started
            log = [*install_log, f"$ vite build ({said})", *run.log, f"{BOX_SAID} {took:.3f} s"]
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
            head: list[str] = []
            if job.site is not None and (tmp / "index.html").is_file():
                owner = job.owner or job.app_id
                head, lines = await finish(tmp, job.site, self.prerender, owner, job.app_id)
                log.extend(lines)
            packed = await asyncio.to_thread(_publish, tmp, final)
            if packed is None:
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
        log.append(replace(packed, head=tuple(head)).said())
        return BuildOutcome(ok=True, log_tail="\n".join(log), output=str(final))

    def _tmp_for(self, final: Path) -> Path:
        if final.exists():
            raise FileExistsError(f"build output {final} exists: build ids are never reused")
        final.parent.mkdir(parents=True, exist_ok=True)
        return final.parent / f".tmp-{final.name}-{secrets.token_hex(4)}"

    def delete_app(self, app_id: str) -> int:
        box = self._prepared.pop(check_app_id(app_id), None)
        if box is not None:
            box.kill()  # its uid and cgroup are let go at its bound (_reap_later)
        removed = 0
        build_quota.release_under(self.work / check_app_id(app_id))  # else rmtree meets them
        for root in (self.outputs, self.work):
            target = root / check_app_id(app_id)
            if target.exists():
                shutil.rmtree(target)
                removed += 1
        return removed

    def _place_files(self, job: BuildJob) -> tuple[Path, Compressed]:
        def write(tmp: Path) -> None:
            tmp.mkdir()
            for path, data in served_files(job.source.files).items():
                target = tmp / clean_path(path)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)

        return self._place(job, write)

    def _place(self, job: BuildJob, fill: Callable[[Path], object]) -> tuple[Path, Compressed]:
        final = self.output_dir(job.app_id, job.build_id)
        tmp = self._tmp_for(final)
        try:
            faults.write("build_output")
            fill(tmp)  # makes tmp
            if not (tmp / "index.html").is_file():
                raise FileNotFoundError("the build output has no index.html")
            finished = complete(tmp, job.site) if job.site is not None else []
            packed = precompress(tmp)  # its text files' brotli and gzip copies (issue 44)
            os.rename(tmp, final)  # atomic: the output appears whole
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
        return final, replace(packed, head=tuple(finished))


def default_slots(limits: Limits) -> int:
    """Builds at once by default: as many as the builds' aggregate memory holds at their
    own cap, at most two per core (``build_slice.slots``)."""
    base = cgroups.root() or cgroups.BASE
    aggregate, _limit = build_slice.here(base)
    return build_slice.slots(aggregate, limits.memory_bytes, build_slice.machine()[1])


def _failure(reason: str | None, notices: tuple[str, ...]) -> str:
    """The build's error for people: the confinement message when that is what stopped it."""
    if notices:
        return notices[0][:480]
    if reason is None or reason.startswith("the build exited"):
        return "the project did not build"
    return f"the project did not build: {reason}"


def _empty_dir(work: Path) -> None:
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)


def _write_tree(work: Path, files: dict[str, bytes]) -> None:
    """The build tree into ``work``: a fresh directory, or a box's, which holds only the
    toolchain's mount point until now."""
    if work.is_symlink() or (work.exists() and not work.is_dir()):
        raise BoxUnavailable("the box's work directory is not a directory")
    work.mkdir(parents=True, exist_ok=True)
    for path, data in files.items():
        target = work / clean_path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _publish(tmp: Path, final: Path) -> Compressed | None:
    """Rename the unpacked (and finished: vue_output.py) output into place (atomic: it
    appears whole), if it has a page, its text files compressed first (bounded: it is the
    app's); None: no page."""
    index = tmp / "index.html"
    if not index.is_file() or index.is_symlink():
        return None
    packed = precompress(tmp)
    os.rename(tmp, final)
    return packed


def _unpack(stream: Readable, tmp: Path) -> None:
    """The box's archive into ``tmp``; a broken rule becomes the run's reason."""
    try:
        output_archive.unpack(stream, tmp)
    except output_archive.OutputRefused as exc:
        raise Refused(str(exc)) from None
