"""The publish report made (issue 44, point 5) over real SQLite stores and a placed output,
the browser and the site's answers played by stand-ins: a clean site's report is done and
passes; what the browser saw becomes the console, accessibility and links checks; what
could not be seen (no browser, a busy one, a site that moved on to a newer deploy, a site
that does not answer) is "not run" saying why, never a verdict; a report that fails is
said, not hidden; the API's word (pending, done, none) follows the build and the report."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from zerocode.adapters.sqlite.apps import SqliteAppStore
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.publish_reports import SqlitePublishReports
from zerocode.adapters.sqlite.publisher import SqlitePublisher
from zerocode.apps.records import App, CodeGenType, new_deploy_key
from zerocode.publishing import publish_report
from zerocode.publishing.builds import Build, BuildPurpose, BuildState, SiteMeta, new_build_id
from zerocode.publishing.encodings import precompress
from zerocode.publishing.pointers import SiteTarget, site_pointer
from zerocode.publishing.publish_report import (
    CHECKS,
    Answer,
    CheckStatus,
    PageLook,
    PublishReport,
    ReportState,
    Violation,
)
from zerocode.publishing.report_runner import MOVED_ON, PublishReporter
from zerocode.publishing.site_head import complete

PAGE = (
    "<!doctype html><html><head></head><body><main><h1>Otters</h1>"
    "<p>Otters live in rivers and along coasts, and they eat fish and crabs.</p>"
    '<a href="/about">About</a></main></body></html>'
)
CLEAN = PageLook(loaded=True, links=("http://k.localhost:8001/about",), violations=())


@dataclass
class Inspector:
    """The browser, played: it gives ``look`` (or raises ``fails``)."""

    look_: PageLook = CLEAN
    fails: Exception | None = None
    asked: list[tuple[str, str, str]] = field(default_factory=list)

    async def look(self, url: str, *, owner: str, app_id: str) -> PageLook:
        self.asked.append((url, owner, app_id))
        if self.fails is not None:
            raise self.fails
        return self.look_


@dataclass
class Answers:
    """The site's answers, played as the sites server gives them (or none at all)."""

    silent: bool = False
    plain: bool = False
    asked: list[str] = field(default_factory=list)

    async def get(self, url: str) -> Answer | None:
        self.asked.append(url)
        if self.silent:
            return None
        path = url.split("8001/", 1)[1]
        headers = {"cache-control": "no-cache", "etag": '"1"'}
        if path.startswith("assets/"):
            headers = {"cache-control": "public, max-age=31536000, immutable"}
        if not self.plain:
            headers["content-encoding"] = "br"
        return Answer(200, headers)


@dataclass
class World:
    reporter: PublishReporter
    app: App
    build: Build
    inspector: Inspector
    answers: Answers
    publisher: SqlitePublisher
    store: SqlitePublishReports


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    db = SqliteDatabase(tmp_path / "zc.sqlite3")
    apps, publisher = SqliteAppStore(db), SqlitePublisher(db)
    key = new_deploy_key()
    app = App(
        id="app1" + "a" * 16,
        owner="u-owner",
        name="Otters",
        code_gen_type=CodeGenType.HTML,
        init_prompt="A page about otters",
        deploy_key=key,
        deploy_url="http://k.localhost:8001/",
    )
    apps.put(app)
    build = place(tmp_path / "out", app, {"index.html": PAGE})
    publisher.point(site_pointer(key), SiteTarget(app.id, build.id))
    inspector, answers, store = Inspector(), Answers(), SqlitePublishReports(db)
    reporter = PublishReporter(
        store=store, apps=apps, publisher=publisher, inspector=inspector, answers=answers
    )
    yield World(reporter, app, build, inspector, answers, publisher, store)
    db.close()


def place(
    root: Path, app: App, files: dict[str, str], kind: CodeGenType = CodeGenType.HTML
) -> Build:
    """A deploy build's output, placed as the builder places it: completed, compressed."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    complete(root, SiteMeta(app.name, app.init_prompt, url=app.deploy_url or ""))
    precompress(root)
    return Build(
        id=new_build_id(),
        app_id=app.id,
        purpose=BuildPurpose.DEPLOY,
        kind=kind,
        source_digest="d" * 64,
        state=BuildState.SUCCEEDED,
        output=str(root),
        started_at=time.time(),
        finished_at=time.time(),
    )


def run(world: World, build: Build | None = None) -> PublishReport:
    return asyncio.run(world.reporter.run(world.app, build or world.build))


def statuses(report: PublishReport) -> dict[str, CheckStatus]:
    return {c.id: c.status for c in report.checks}


def test_a_clean_sites_report_is_done_and_every_check_passes(world: World) -> None:
    report = run(world)
    assert report.state is ReportState.DONE and report.finished_at is not None
    assert [c.id for c in report.checks] == list(CHECKS)
    assert statuses(report) == dict.fromkeys(CHECKS, CheckStatus.PASSED), report.checks
    assert world.store.get(world.app.id, world.build.id) == report
    # The browser looked at the published site in the owner's share; the site was asked
    # for its home page and its other text files as a browser would.
    assert world.inspector.asked == [("http://k.localhost:8001/", "u-owner", world.app.id)]
    assert world.answers.asked[0] == "http://k.localhost:8001/"
    view = world.reporter.view(world.build)
    assert view.state == "done" and view.report == report and view.why is None


def test_what_the_browser_saw_becomes_failures_naming_what_to_fix(world: World) -> None:
    world.inspector.look_ = PageLook(
        loaded=True,
        problems=("uncaught TypeError: x is undefined (at /app.js:3:5)",),
        failed=("/app.js (HTTP 404)",),
        links=("http://k.localhost:8001/gone.html", "https://elsewhere.example/x.pdf"),
        violations=(
            Violation("image-alt", "critical", "Images must have alternative text", ("img",)),
            Violation("region", "moderate", "Content in landmarks", ("h1",)),
        ),
    )
    report = run(world)
    checks = {c.id: c for c in report.checks}
    assert checks["console"].status is CheckStatus.FAILED
    assert checks["console"].details == ("uncaught TypeError: x is undefined (at /app.js:3:5)",)
    assert set(checks["links"].details) == {
        "home page requested /app.js (HTTP 404)",
        "home page (rendered) → /gone.html (not in the site)",
    }
    a11y = checks["a11y"]
    assert a11y.status is CheckStatus.FAILED  # the serious one; a moderate one is not counted
    assert a11y.details == ("image-alt (critical): Images must have alternative text — img",)
    assert "alt text" in a11y.fix and "dequeuniversity.com/rules/axe/4.14/" in a11y.fix


def test_without_a_browser_its_checks_are_not_run_saying_why(world: World) -> None:
    world.reporter.inspector = None
    world.reporter.no_browser = "not run: the platform's browser is off (ZEROCODE_COVERS=0)"
    report = run(world)
    checks = {c.id: c for c in report.checks}
    for name in ("console", "a11y"):
        assert checks[name].status is CheckStatus.NOT_RUN and checks[name].passed is None
        assert checks[name].note == world.reporter.no_browser
    # An html site's links are in its files: still checked.
    assert checks["links"].status is CheckStatus.PASSED


def test_a_vue_sites_links_are_not_judged_without_its_rendered_page(
    world: World, tmp_path: Path
) -> None:
    build = place(tmp_path / "vue", world.app, {"index.html": PAGE}, CodeGenType.VUE_PROJECT)
    world.publisher.point(
        site_pointer(world.app.deploy_key or ""), SiteTarget(world.app.id, build.id)
    )
    world.inspector.look_ = PageLook(why="not run: the checking browser was busy")
    checks = {c.id: c for c in run(world, build).checks}
    assert checks["links"].status is CheckStatus.NOT_RUN
    assert checks["links"].note is not None
    assert checks["links"].note.startswith("not run: the checking browser was busy")
    assert checks["console"].note == checks["a11y"].note == "not run: the checking browser was busy"


def test_a_site_that_moved_on_to_a_newer_deploy_is_not_loaded(world: World) -> None:
    world.publisher.point(
        site_pointer(world.app.deploy_key or ""), SiteTarget(world.app.id, new_build_id())
    )
    report = run(world)
    checks = {c.id: c for c in report.checks}
    assert world.inspector.asked == [] and world.answers.asked == []
    for name in ("console", "a11y", "caching"):
        assert checks[name].status is CheckStatus.NOT_RUN and checks[name].note == MOVED_ON
    assert checks["meta"].status is CheckStatus.PASSED  # its files are its own still


def test_a_newer_deploy_published_while_the_browser_looked_voids_the_look(world: World) -> None:
    """The page the browser saw may be the newer deploy's: none of it is this build's."""
    newer = SiteTarget(world.app.id, new_build_id())
    pointer = site_pointer(world.app.deploy_key or "")

    async def flipping(url: str, *, owner: str, app_id: str) -> PageLook:
        world.publisher.point(pointer, newer)
        return PageLook(loaded=True, problems=("console.error: the newer one's",), violations=())

    world.inspector.look = flipping  # type: ignore[method-assign]
    checks = {c.id: c for c in run(world).checks}
    for name in ("console", "a11y", "caching"):
        assert checks[name].status is CheckStatus.NOT_RUN and checks[name].note == MOVED_ON
    assert checks["links"].status is CheckStatus.PASSED  # its own files' links


def test_a_browser_that_fails_or_a_silent_site_is_no_verdict(world: World) -> None:
    world.inspector.fails = RuntimeError("the driver died")
    world.answers.silent = True
    checks = {c.id: c for c in run(world).checks}
    assert checks["console"].status is CheckStatus.NOT_RUN
    assert checks["console"].note == "not run: the checking browser failed (RuntimeError)"
    assert checks["caching"].status is CheckStatus.NOT_RUN
    assert checks["caching"].note == "not run: the site did not answer"


def test_text_sent_uncompressed_fails_the_compression_check(world: World) -> None:
    world.answers.plain = True
    compression = {c.id: c for c in run(world).checks}["compression"]
    assert compression.status is CheckStatus.FAILED
    assert compression.details[0] == (
        "index.html was sent uncompressed to a browser accepting brotli and gzip"
    )


def test_a_report_that_cannot_be_made_says_so(world: World, tmp_path: Path) -> None:
    gone = replace(world.build, output=str(tmp_path / "nowhere"))
    report = run(world, gone)
    assert report.state is ReportState.FAILED and report.checks == ()
    assert report.why == "the report could not be made (FileNotFoundError)"
    view = world.reporter.view(gone)
    assert view.state == "none" and view.why == report.why


def test_the_apis_word_follows_the_build_and_the_report(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    reporter, build = world.reporter, world.build
    assert reporter.view(replace(build, state=BuildState.RUNNING)).state == "pending"
    failed = reporter.view(replace(build, state=BuildState.FAILED))
    assert failed.state == "none" and failed.why is not None and "deploy failed" in failed.why
    never = reporter.view(build)  # published, but no report was begun
    assert never.state == "none" and never.why is not None and "deploy again" in never.why
    world.store.put(PublishReport(app_id=world.app.id, build_id=build.id))
    assert reporter.view(build).state == "pending"
    summaries = reporter.summaries(
        [build, replace(build, id=new_build_id(), state=BuildState.QUEUED)]
    )
    assert [state for state, _ in summaries.values()] == ["pending", "pending"]
    # A report its server stopped under is pending forever: after a while it is none.
    monkeypatch.setattr(publish_report, "STALE_SECONDS", -1.0)
    cut = reporter.view(build)
    assert cut.state == "none" and cut.why is not None and "cut off" in cut.why
    reporter.not_made = "publish reports are not made on AWS yet"
    assert reporter.view(replace(build, id=new_build_id())).why == reporter.not_made


def test_a_deleted_apps_report_is_not_stored(world: World) -> None:
    world.reporter.apps.delete(world.app.id)
    run(world)
    assert world.store.get(world.app.id, world.build.id) is None
