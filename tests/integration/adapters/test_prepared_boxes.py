"""Builds start warm (issue 28, point 3): a box prepared ahead, used by one build of one app
and thrown away; the toolchain's Node 22 with a compile cache made once, read-only in the box.

Every test here runs the real bubblewrap box and real Vite (the toolchain is installed once
per run); ZEROCODE_REQUIRE_BWRAP=1 makes a missing bwrap fail rather than skip."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.conftest import build_sandbox_or_skip
from tests.integration.publishing.test_vue_template_builds import created_files
from tests.module_cpu import descendants_cpu
from zerocode.adapters.local import build_quota
from zerocode.adapters.local.builder import LocalBuilder
from zerocode.adapters.local.sandbox import BoxUnavailable, Limits
from zerocode.adapters.local.toolchain_store import ToolchainStore
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.bootstrap.settings import Settings
from zerocode.publishing import toolchain
from zerocode.publishing.builds import BuildJob, BuildOutcome, new_build_id

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")

FILES = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
PREPARED, COLD = "box prepared ahead", "box started for this build"


def builder(tmp_path: Path, toolchain_dir: Path, **kwargs: float) -> LocalBuilder:
    store = ToolchainStore(toolchain_dir, Settings().npm_cache)
    return LocalBuilder(tmp_path / "data", build_sandbox_or_skip(), store, **kwargs)  # type: ignore[arg-type]


async def build(b: LocalBuilder, app_id: str, files: dict[str, bytes] = FILES) -> BuildOutcome:
    job = BuildJob(
        app_id=app_id,
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(files),
    )
    return await b.build(job)


def gone(pid: int) -> bool:
    """The process has ended (a zombie not yet reaped counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def test_a_prepared_box_is_used_by_one_build_only_and_holds_nothing_before_it(
    tmp_path: Path, toolchain_dir: Path
) -> None:
    async def main() -> None:
        b = builder(tmp_path, toolchain_dir)
        box = await b.prepare_box("app1")
        assert box is not None and box.ready
        assert await b.prepare_box("app1") is box  # one per app: asking again is no new box
        await asyncio.sleep(1.0)  # the runner has loaded Vite by now, and waits
        # Nothing of any app is in it: its work directory holds the toolchain's mount point
        # only, and the process waits with its stdin open.
        assert [p.name for p in box.project.iterdir()] == ["node_modules"]
        assert not any((box.project / "node_modules").iterdir())
        assert box.pid is not None and not gone(box.pid)
        pid = box.pid

        first = await build(b, "app1")
        assert first.ok, first.log_tail
        assert PREPARED in first.log_tail
        assert gone(pid) and not box.ready
        assert not box.take()  # used: never claimed again
        with pytest.raises(BoxUnavailable):
            await box.run(["node", *toolchain.VITE_ARGS])
        assert not box.project.exists()  # thrown away with its build's files

        second = await build(b, "app1")  # nothing prepared any more: a box of its own
        assert second.ok, second.log_tail
        assert COLD in second.log_tail
        assert first.output != second.output

    asyncio.run(main())


async def loaded(pid: int) -> None:
    """Until the box has loaded Vite (CPU, once, for however long a loaded machine takes):
    its first half second without a tick of CPU. A spinning waiter never gets there (it
    gets its share of a core in every half second), and the test fails at the deadline."""
    deadline = time.monotonic() + 60
    last = descendants_cpu(pid)
    while time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now = descendants_cpu(pid)
        if now == last:
            return
        last = now
    raise AssertionError(f"the box kept spending CPU for 60 s ({last:.2f} CPU-s)")


def test_a_waiting_box_spends_no_cpu(tmp_path: Path, toolchain_dir: Path) -> None:
    """A box prepared ahead sleeps until its build is given to it: its runner once retried a
    non-blocking stdin read in a loop and spun a core for as long as the box waited (up to
    120 s a box; about 130 CPU-seconds of a test suite's run)."""

    async def main() -> None:
        b = builder(tmp_path, toolchain_dir)
        box = await b.prepare_box("app1")
        assert box is not None and box.pid is not None
        await loaded(box.pid)
        before = descendants_cpu(box.pid)
        await asyncio.sleep(2.0)
        spent = descendants_cpu(box.pid) - before
        # A spinning waiter gets its share of a core even on a loaded machine (a tenth of a
        # second or more in two seconds); a sleeping one, a tick or two at most.
        assert spent < 0.05, f"{spent:.2f} CPU-s in 2 s of waiting"
        assert box.ready
        done = await build(b, "app1")  # and the go still reaches it: the build runs
        assert done.ok and PREPARED in done.log_tail, done.log_tail

    asyncio.run(main())


def test_a_prepared_box_runs_only_vite_build(tmp_path: Path, toolchain_dir: Path) -> None:
    async def main() -> None:
        b = builder(tmp_path, toolchain_dir)
        box = await b.prepare_box("app1")
        assert box is not None
        with pytest.raises(BoxUnavailable):  # not claimed yet
            await box.run(["node", *toolchain.VITE_ARGS])
        assert box.take()
        with pytest.raises(BoxUnavailable):  # claimed, but only `vite build` runs
            await box.run(["node", "-e", "1"])
        await box.close()
        assert box.pid is not None and gone(box.pid)

    asyncio.run(main())


def test_two_apps_never_share_a_box(tmp_path: Path, toolchain_dir: Path) -> None:
    async def main() -> None:
        b = builder(tmp_path, toolchain_dir)
        a = await b.prepare_box("appa")
        assert a is not None
        # Another app's build never takes app A's box: it gets one of its own.
        other = await build(b, "appb")
        assert other.ok and COLD in other.log_tail, other.log_tail
        assert a.ready
        # With a box prepared for each, two builds at once each use their own app's box.
        c = await b.prepare_box("appc")
        assert c is not None and c is not a and c.project != a.project
        assert c.uid != a.uid or c.uid is None  # as root: a uid of its own each
        built_a, built_c = await asyncio.gather(build(b, "appa"), build(b, "appc"))
        assert built_a.ok and PREPARED in built_a.log_tail, built_a.log_tail
        assert built_c.ok and PREPARED in built_c.log_tail, built_c.log_tail
        assert not a.ready and not c.ready

    asyncio.run(main())


def test_at_most_n_boxes_wait_and_an_unused_one_is_discarded_at_its_bound(
    tmp_path: Path, toolchain_dir: Path
) -> None:
    async def main() -> None:
        b = builder(tmp_path, toolchain_dir, prepared_max=1, prepared_seconds=2.0)
        box = await b.prepare_box("app1")
        assert box is not None and box.pid is not None
        assert await b.prepare_box("app2") is None  # at most one waits
        pid, project = box.pid, box.project
        await asyncio.sleep(3.0)
        assert gone(pid) and not box.ready and not box.take()
        assert not project.exists()
        assert await b.discard_prepared() == 0  # already gone from the pool
        later = await build(b, "app1")  # falls back to a box of its own
        assert later.ok and COLD in later.log_tail, later.log_tail
        # Its place is free again.
        again = await b.prepare_box("app2")
        assert again is not None
        assert await b.discard_prepared("app2") == 1
        assert again.pid is not None and gone(again.pid)

    asyncio.run(main())


def test_deleting_an_app_kills_its_prepared_box(tmp_path: Path, toolchain_dir: Path) -> None:
    async def main() -> None:
        b = builder(tmp_path, toolchain_dir)
        box = await b.prepare_box("app1")
        assert box is not None and box.pid is not None
        b.delete_app("app1")
        await asyncio.sleep(0.5)
        assert gone(box.pid) and not box.ready
        await box.close()

    asyncio.run(main())


SERVER = """
import asyncio, json, sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from zerocode.adapters.local.builder import LocalBuilder
from zerocode.adapters.local.sandbox import sandbox
from zerocode.adapters.local.toolchain_store import ToolchainStore

async def main():
    b = LocalBuilder(Path({data!r}), sandbox(override=False),
                     ToolchainStore(Path({tc!r}), Path({npm!r})))
    box = await b.prepare_box("app1")
    group = box._box.group
    print(json.dumps({{"pid": box.pid, "procs": group.procs if group else []}}), flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def test_a_prepared_box_dies_with_its_server(tmp_path: Path, toolchain_dir: Path) -> None:
    build_sandbox_or_skip()
    script = SERVER.format(
        root=str(Path(__file__).resolve().parents[3]),
        data=str(tmp_path / "data"),
        tc=str(toolchain_dir),
        npm=str(Settings().npm_cache),
    )
    server = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        assert server.stdout is not None
        said = json.loads(server.stdout.readline())
        pid, procs = said["pid"], said["procs"]
        time.sleep(0.5)
        members = {int(p) for f in procs for p in Path(f).read_text().split()}
        assert not gone(pid)
        if procs:
            assert len(members) >= 2  # bwrap and the node waiting inside
        os.kill(server.pid, signal.SIGKILL)  # the server dies: no cleanup code runs
        server.wait(10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (gone(pid) and all(gone(m) for m in members)):
            time.sleep(0.1)
        assert gone(pid)
        assert all(gone(m) for m in members), members
        # Its box's disk quota (a tmpfs over the work directory) outlives it, until the next
        # start on this data directory lets it go.
        data = tmp_path / "data"
        if os.geteuid() == 0:
            assert len(build_quota.mounted_under(data)) == 1
        builder(tmp_path, toolchain_dir)
        assert build_quota.mounted_under(data) == []
    finally:
        if server.poll() is None:
            os.kill(server.pid, signal.SIGKILL)
            server.wait(10)
        build_quota.release_under(tmp_path)


CACHE_PROBE = textwrap.dedent(
    """
    const fs = require('fs')
    let write
    try { fs.writeFileSync('/zerocode/compile-cache/entries/x', 'x'); write = 'written' }
    catch (e) { write = e.code }
    const mount = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\\n')
      .find((l) => l.split(' ')[4] === '/zerocode/compile-cache')
    console.log(JSON.stringify({
      write, readOnly: / ro[, ]/.test(' ' + mount.split(' ')[5] + ' '),
      env: process.env.NODE_COMPILE_CACHE, node: process.version,
    }))
    """
)
USE_PROBE = (
    "NODE_DEBUG_NATIVE=COMPILE_CACHE node -e "
    "\"import('/build/node_modules/vite/dist/node/index.js')\" 2>&1 "
    "| grep -c 'was accepted'; echo $?"
)


def test_the_compile_cache_is_made_once_read_only_in_the_box_and_used(
    tmp_path: Path, toolchain_dir: Path
) -> None:
    async def main() -> None:
        b = builder(tmp_path, toolchain_dir)
        assert (await build(b, "app1")).ok  # the first build makes it, if no one did yet
        cache = b.store.compile_cache
        assert cache.is_dir()
        # The platform's, read-only: no box uid owns or may write any of it.
        for path in (cache, *cache.rglob("*")):
            info = path.lstat()
            assert info.st_uid == os.getuid()
            if not stat.S_ISLNK(info.st_mode):
                assert not info.st_mode & 0o222, path
        project = tmp_path / "probe"
        project.mkdir()
        (project / "probe.cjs").write_text(CACHE_PROBE)
        async with b.sandbox.open(project, b.store.modules, Limits(), cache=cache) as box:
            probe = await box.run(["node", "probe.cjs"])
            used = await box.run(["sh", "-c", USE_PROBE])
        assert probe.ok, probe.log
        got = json.loads(probe.log[-1])
        assert got["write"] in ("EROFS", "EACCES") and got["readOnly"], got
        assert got["env"] == "/zerocode/compile-cache"
        assert got["node"].startswith("v22."), got  # the toolchain's Node, not the system's
        assert used.ok, used.log
        assert int(used.log[-2]) >= 20, used.log  # Vite's modules come from the cache

    asyncio.run(main())


def test_builds_still_work_when_the_cache_does_not_fit(tmp_path: Path, toolchain_dir: Path) -> None:
    """Other limits (a different V8 heap) name another cache directory, which does not
    exist and cannot be made in the read-only cache: Node builds without it."""
    b = builder(tmp_path, toolchain_dir)
    b.limits = Limits(memory_bytes=1 << 30)
    outcome = asyncio.run(build(b, "app1"))
    assert outcome.ok, outcome.log_tail


def test_the_engines_call_prepares_in_the_background(tmp_path: Path, toolchain_dir: Path) -> None:
    """``prepare(app_id)``, what the engine calls when a turn starts: returns at once, never
    raises (off the loop, a bad id, twice), and the app's next build uses the box."""
    b = builder(tmp_path, toolchain_dir)
    b.prepare("app1")  # no running loop: nothing happens

    async def main() -> None:
        b.prepare("app1")
        b.prepare("app1")  # asked again while it is being made: still one box
        b.prepare("../x")  # not an app id: logged, nothing prepared
        for _ in range(400):
            if "app1" in b._prepared:
                break
            await asyncio.sleep(0.05)
        assert list(b._prepared) == ["app1"]
        outcome = await build(b, "app1")
        assert outcome.ok and PREPARED in outcome.log_tail, outcome.log_tail

    asyncio.run(main())


@pytest.mark.parametrize(
    "vector", ["hostile configuration", "new URL, /proc/self/environ", "CSS @import, absolute"]
)
def test_a_prepared_box_confines_a_hostile_build_as_a_cold_one_does(
    tmp_path: Path, toolchain_dir: Path, vector: str
) -> None:
    """Vite and the Vue plugin were loaded before the platform's vite.config.js: its
    confinement still holds (the hostile build suites run through boxes started for the
    build; these two through boxes prepared ahead)."""
    from tests.integration.publishing import test_build_inert as inert

    if vector == "hostile configuration":
        files = inert.hostile_project()
    else:
        files = inert.project_with(inert.VECTORS[vector])

    async def main() -> BuildOutcome:
        b = builder(tmp_path, toolchain_dir)
        assert await b.prepare_box("app1") is not None
        await asyncio.sleep(1.0)
        outcome = await build(b, "app1", files)
        assert PREPARED in outcome.log_tail, outcome.log_tail
        return outcome

    outcome = asyncio.run(main())
    if vector == "hostile configuration":
        inert.assert_inert(outcome)
    else:
        assert not outcome.ok and outcome.error, outcome.log_tail
        assert "outside the project" in outcome.error
        assert not [f for f in inert._secrets() if f in outcome.log_tail.encode()]
