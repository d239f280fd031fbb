"""The local build sweep (issue 29): a real SQLite database, real output directories; which
outputs go and which stay, and what the records say afterwards."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from zerocode.adapters.local.outputs import LocalOutputs
from zerocode.adapters.sqlite.builds import SqliteBuildStore
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.publisher import SqlitePublisher
from zerocode.apps.records import CodeGenType
from zerocode.publishing.builds import Build, BuildPage, BuildPurpose, BuildState, new_build_id
from zerocode.publishing.output_sweep import REMOVED, Output, OutputSweep
from zerocode.publishing.pointers import SiteTarget, preview_pointer, site_pointer

NOW = time.time()
HOUR = 3600.0
PREVIEW, DEPLOY = BuildPurpose.PREVIEW, BuildPurpose.DEPLOY
OK, FAILED = BuildState.SUCCEEDED, BuildState.FAILED


class Disk:
    """A data directory's builds: records in SQLite, outputs under builds/."""

    def __init__(self, root: Path) -> None:
        db = SqliteDatabase(root / "zerocode.sqlite3")
        self.builds, self.pointers = SqliteBuildStore(db), SqlitePublisher(db)
        self.outputs = LocalOutputs(root / "builds")
        self.root = root / "builds"

    def build(
        self,
        app: str,
        purpose: BuildPurpose,
        state: BuildState,
        hours_ago: float,
        *,
        output: bool = True,
    ) -> str:
        """A build record asked for ``hours_ago``, and its output on disk when ``output``."""
        build_id = new_build_id(NOW - hours_ago * HOUR)
        place = self.root / app / build_id
        if output:
            (place / "assets").mkdir(parents=True)
            (place / "index.html").write_text(f"<h1>{build_id}</h1>")
            (place / "assets" / "app.js").write_text("x" * 1000)
        self.builds.put(
            Build(
                id=build_id,
                app_id=app,
                purpose=purpose,
                kind=CodeGenType.HTML,
                source_digest="d",
                state=state,
                log_tail="built",
                output=str(place) if output and state is not FAILED else None,
            )
        )
        return build_id

    def sweep(self, outputs: LocalOutputs | None = None) -> OutputSweep:
        return OutputSweep(outputs or self.outputs, self.builds, self.pointers, HOUR)

    def on_disk(self, app: str) -> set[str]:
        return {p.name for p in (self.root / app).iterdir()}


@pytest.fixture
def disk(tmp_path: Path) -> Disk:
    return Disk(tmp_path)


def test_previews_nobody_needs_go_and_what_a_preview_a_site_or_a_rollback_needs_stays(
    disk: Disk,
) -> None:
    old_preview = disk.build("a1", PREVIEW, OK, 30)  # shown once, replaced since
    superseded = disk.build("a1", PREVIEW, BuildState.SUPERSEDED, 29)  # built, never shown
    crashed_deploy = disk.build("a1", DEPLOY, FAILED, 28)  # output placed, then the server died
    rollback_target = disk.build("a1", DEPLOY, OK, 27)  # an earlier deploy: rollback names it
    published = disk.build("a1", DEPLOY, OK, 26)
    shown = disk.build("a1", PREVIEW, OK, 25)  # the preview pointer names it
    newest = disk.build("a1", PREVIEW, OK, 24)  # built, its showing still under way
    failed = disk.build("a1", PREVIEW, FAILED, 23, output=False)
    running = disk.build("a1", PREVIEW, BuildState.RUNNING, 22)  # a build still going
    young = disk.build("a1", PREVIEW, BuildState.SUPERSEDED, 0.5)  # its turn may adopt it
    disk.pointers.point(site_pointer("site0001"), SiteTarget("a1", published))
    disk.pointers.point(preview_pointer("preview001"), SiteTarget("a1", shown))
    half = f".tmp-{old_preview}-0a1b"  # a build a crash interrupted while placing it
    (disk.root / "a1" / half).mkdir()
    (disk.root / "a1" / f".tmp-{running}-77aa").mkdir()  # being placed now
    orphan = new_build_id(NOW - 40 * HOUR)  # no record: its app's deletion was interrupted
    (disk.root / "a2" / orphan).mkdir(parents=True)
    (disk.root / "a1" / "notes").mkdir()  # not a build's: left alone
    assert failed not in disk.on_disk("a1")

    report = disk.sweep().run(NOW)

    assert disk.on_disk("a1") == {
        rollback_target,
        published,
        shown,
        newest,
        running,
        young,
        f".tmp-{running}-77aa",
        "notes",
    }
    assert disk.on_disk("a2") == set()
    assert (report.removed, report.failed) == (5, 0)
    assert report.kept == 7 and report.seen == 12
    assert report.bytes_freed >= 3 * 1000
    # The records say the outputs are gone; nothing else about them changed.
    for build_id, state in ((old_preview, OK), (superseded, BuildState.SUPERSEDED)):
        record = disk.builds.get("a1", build_id)
        assert record is not None and record.output is None and record.state is state
        assert record.log_tail == f"built\n{REMOVED}"
    record = disk.builds.get("a1", rollback_target)
    assert record is not None and record.output is not None and record.log_tail == "built"
    assert disk.builds.get("a1", crashed_deploy) is not None  # the record stays, its output not
    assert crashed_deploy not in disk.on_disk("a1")


def test_a_second_sweep_finds_nothing_more_to_remove(disk: Disk) -> None:
    for hours in (10, 9, 8):
        disk.build("a1", PREVIEW, OK, hours)
    first = disk.sweep().run(NOW)
    records = disk.builds.list("a1", limit=50).builds
    second = disk.sweep().run(NOW)
    assert (first.removed, second.removed, second.seen, second.kept) == (2, 0, 1, 1)
    assert disk.builds.list("a1", limit=50).builds == records


def test_a_removal_that_fails_does_not_stop_the_others_and_the_next_sweep_finishes_it(
    disk: Disk,
) -> None:
    stuck = disk.build("a1", PREVIEW, OK, 10)
    others = [disk.build("a1", PREVIEW, OK, 9), disk.build("a2", PREVIEW, OK, 9)]
    disk.build("a1", PREVIEW, OK, 8)
    disk.build("a2", PREVIEW, OK, 8)

    class Failing(LocalOutputs):
        def remove(self, output: Output) -> int:
            if output.build_id == stuck:
                raise PermissionError(13, "Permission denied", output.name)
            return super().remove(output)

    report = disk.sweep(Failing(disk.root)).run(NOW)
    assert (report.removed, report.failed) == (2, 1)
    assert stuck in disk.on_disk("a1")
    assert not any(b in disk.on_disk("a1") | disk.on_disk("a2") for b in others)
    # Its record already says the output is gone (nothing serves it meanwhile).
    record = disk.builds.get("a1", stuck)
    assert record is not None and record.output is None
    again = disk.sweep().run(NOW)
    assert (again.removed, again.failed) == (1, 0)
    assert stuck not in disk.on_disk("a1")


def test_an_unreadable_record_keeps_its_output(disk: Disk) -> None:
    kept = disk.build("a1", PREVIEW, OK, 10)
    disk.build("a1", PREVIEW, OK, 8)

    class Unreadable(SqliteBuildStore):
        def get(self, app_id: str, build_id: str) -> Build | None:
            if build_id == kept:
                raise OSError("disk I/O error")
            return super().get(app_id, build_id)

    sweep = OutputSweep(disk.outputs, Unreadable(disk.builds.db), disk.pointers, HOUR)
    report = sweep.run(NOW)
    assert (report.removed, report.failed, report.kept) == (0, 1, 1)
    assert kept in disk.on_disk("a1")


def test_a_preview_that_succeeded_after_the_sweep_looked_stays(disk: Disk) -> None:
    """The sweep reads each app's newest successful preview once; a build that succeeds after
    that (its preview flipping to it now) is newer than what it read, and stays."""
    older = disk.build("a1", PREVIEW, OK, 10)
    late = disk.build("a1", PREVIEW, OK, 9)

    class Stale(SqliteBuildStore):  # the list as it was while ``late`` still ran
        def list(self, *args: Any, **kwargs: Any) -> BuildPage:
            page = super().list(*args, **kwargs)
            return BuildPage([b for b in page.builds if b.id != late], page.next_cursor)

    OutputSweep(disk.outputs, Stale(disk.builds.db), disk.pointers, 0).run(NOW)
    assert disk.on_disk("a1") == {older, late}  # neither was "newest" to it: both stay
    disk.sweep().run(NOW)
    assert disk.on_disk("a1") == {late}
