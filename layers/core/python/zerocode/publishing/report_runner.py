"""The publish report made (issue 44, point 5): after a deploy build is published, in the
background (the deploy has succeeded already and never waits for it), its checks are run
and the report is stored by build id: ``pending`` from the start, ``done`` at the end.

Three sources, each best effort: the placed output's files (publishing/site_checks.py, in a
worker thread, bounded), the site's own answers for a few of its files (their encoding and
cache headers: :class:`SiteAnswers`), and the published home page in the confined shared
browser in its owner's share (:class:`PageInspector`: console errors, the rendered page's
links, axe-core's serious violations). A source that cannot be had (no browser, a busy one,
a site that moved on to a newer deploy meanwhile) leaves its checks "not run" saying why:
never a pass or a failure it did not see.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from zerocode.apps.records import App, AppStore, CodeGenType
from zerocode.publishing.builds import Build, BuildPurpose, BuildState
from zerocode.publishing.encodings import MIN_BYTES, compressible, is_immutable
from zerocode.publishing.pointers import Publisher, SiteTarget, site_pointer
from zerocode.publishing.publish_report import (
    Answer,
    PageInspector,
    PageLook,
    PublishReport,
    PublishReports,
    ReportCheck,
    ReportState,
    SiteAnswers,
    Summary,
    failed,
    not_run,
)
from zerocode.publishing.site_checks import (
    Pages,
    check_compression,
    check_crawl,
    check_icons,
    check_links,
    check_meta,
)
from zerocode.publishing.site_files import SiteFiles, origin_of, read_pages, walk
from zerocode.publishing.site_served import check_a11y, check_caching, check_console, served_plain

log = logging.getLogger(__name__)

REPORT_SECONDS = 180.0  # the whole report: a wait for the browser (90 s at most) and its look
MOVED_ON = "not run: the site serves a newer deploy now, so this build's page was not loaded"
NO_OUTPUT = "the build's output is not on this machine"
VUE_LINKS = "a Vue app's links are made by its scripts, seen only in the browser"


@dataclass(frozen=True)
class ReportView:
    """What the API says of a deploy build's report: its state (``pending``, ``done`` or
    ``none``), the report when there is one, and why there is none."""

    state: str
    report: PublishReport | None = None
    why: str | None = None


@dataclass(kw_only=True)
class PublishReporter:
    store: PublishReports
    apps: AppStore
    publisher: Publisher
    inspector: PageInspector | None = None
    answers: SiteAnswers | None = None
    # Why the browser's checks are not run here (no Chromium, covers off), when not.
    no_browser: str = "not run: no browser checks pages on this platform"
    # Why no report is made here at all (AWS, for now), said of every deploy without one.
    not_made: str | None = None
    _tasks: set[asyncio.Task[PublishReport]] = field(default_factory=set, init=False, repr=False)

    async def begin(self, app: App, build: Build) -> None:
        """Record ``build``'s report as pending (call it before the build is recorded
        succeeded, so no reader sees it published without a report under way); never
        raises: a report is never the deploy's failure."""
        if self.not_made is not None:
            return
        try:
            await asyncio.to_thread(self.store.put, PublishReport(app_id=app.id, build_id=build.id))
        except Exception:
            log.exception("the publish report of build %s was not begun", build.id)

    def start(self, app: App, build: Build) -> None:
        """Make ``build``'s report in the background (call it once the deploy is published,
        from the event loop); returns at once and never raises."""
        if self.not_made is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        task = loop.create_task(self.run(app, build))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for the reports under way (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def run(self, app: App, build: Build) -> PublishReport:
        report = PublishReport(app_id=app.id, build_id=build.id)
        try:
            await asyncio.to_thread(self.store.put, report)
            async with asyncio.timeout(REPORT_SECONDS):
                checks = await self._checks(app, build)
            report = report.done(checks)
        except TimeoutError:
            report = report.gave_up(f"the report took longer than {REPORT_SECONDS:g} s")
        except Exception as exc:  # the platform's trouble: said, never a verdict
            log.exception("the publish report of build %s failed", build.id)
            report = report.gave_up(f"the report could not be made ({type(exc).__name__})")
        try:
            if await asyncio.to_thread(self.apps.get, app.id) is not None:
                await asyncio.to_thread(self.store.put, report)
            else:  # deleted meanwhile: its deletion may have run before the pending record
                await asyncio.to_thread(self.store.delete_app, app.id)
        except Exception:
            log.exception("the publish report of build %s was not stored", build.id)
        return report

    async def _checks(self, app: App, build: Build) -> list[ReportCheck]:
        root = Path(build.output) if build.output else None
        if root is None or not await asyncio.to_thread(root.is_dir):
            raise FileNotFoundError(NO_OUTPUT)
        site, pages = await asyncio.to_thread(_read, root)
        checks = await asyncio.to_thread(_static, site, pages)
        current = await asyncio.to_thread(self.apps.get, app.id) or app
        shown = await asyncio.to_thread(self._shows, current, build)
        url = current.deploy_url if shown and current.deploy_url else None
        look, served = await asyncio.gather(self._look(current, url), self._served(site, url))
        if url is not None and not await asyncio.to_thread(self._shows, current, build):
            # A newer deploy was published while they looked: what they saw may be its.
            look, served = PageLook(why=MOVED_ON), MOVED_ON
        origin = origin_of(current.deploy_url or "")
        checks["links"] = check_links(site, pages, origin, look.links, look.failed)
        if build.kind is CodeGenType.VUE_PROJECT and not look.loaded and checks["links"].passed:
            # A Vue app's links are made by its scripts: with no rendered page, none was seen.
            why = look.why or "not run: the page did not load"
            checks["links"] = not_run("links", f"{why} ({VUE_LINKS})")
        checks["console"] = check_console(look)
        checks["a11y"] = check_a11y(look)
        checks["caching"] = check_caching(served)
        plain = served_plain(served, site)
        if plain and checks["compression"].passed:
            checks["compression"] = failed("compression", plain, _SENT_PLAIN)
        return list(checks.values())

    def _shows(self, app: App, build: Build) -> bool:
        """Whether the app's site still serves ``build`` (a newer deploy may have come)."""
        if not app.deploy_key:
            return False
        return self.publisher.target(site_pointer(app.deploy_key)) == SiteTarget(app.id, build.id)

    async def _look(self, app: App, url: str | None) -> PageLook:
        """The browser's look at the site (``url``: None when it moved on to a newer
        deploy)."""
        if self.inspector is None:
            return PageLook(why=self.no_browser)
        if url is None:
            return PageLook(why=MOVED_ON)
        try:
            return await self.inspector.look(url, owner=app.owner, app_id=app.id)
        except Exception as exc:  # the browser's trouble, never the page's
            log.warning("publish report: the browser's look failed: %s", type(exc).__name__)
            return PageLook(why=f"not run: the checking browser failed ({type(exc).__name__})")

    async def _served(self, site: SiteFiles, url: str | None) -> list[tuple[str, Answer]] | str:
        """The site's answers for its home page and a few of its files, or why none."""
        if self.answers is None:
            return "not run: the site's answers are not fetched on this platform"
        if url is None:
            return MOVED_ON
        got: list[tuple[str, Answer]] = []
        for path in _probed(site):
            answer = await self.answers.get(url + quote(path))
            if answer is None:
                return "not run: the site did not answer"
            got.append((path or "index.html", answer))
        return got

    def view(self, build: Build) -> ReportView:
        """The API's answer for a deploy build of the app (callers check the purpose)."""
        report = self.store.get(build.app_id, build.id) if build.state.finished else None
        state, why = self.state_of(build, report.summary() if report is not None else None)
        if report is not None and report.state is ReportState.FAILED and not report.stale():
            why = report.why
        return ReportView(state, report, why)

    def summaries(self, builds: list[Build]) -> dict[str, tuple[str, Summary | None]]:
        """The builds list's word on each deploy build's report: its state, and its
        verdicts counted when it is done (one read for the page)."""
        deploys = [b for b in builds if b.purpose is BuildPurpose.DEPLOY]
        if not deploys:
            return {}
        found = self.store.summaries(deploys[0].app_id, [b.id for b in deploys])
        return {b.id: (self.state_of(b, found.get(b.id))[0], found.get(b.id)) for b in deploys}

    def state_of(self, build: Build, summary: Summary | None) -> tuple[str, str | None]:
        """``pending``, ``done`` or ``none`` (and why none) for a deploy build."""
        if build.state in (BuildState.FAILED, BuildState.SUPERSEDED):
            return "none", "the deploy failed: nothing was published to check"
        if not build.state.finished:
            return ("none", self.not_made) if self.not_made else ("pending", None)
        if summary is None:
            return "none", self.not_made or _NEVER_MADE
        if summary.stale():
            return "none", "the report was cut off (the server stopped while it ran)"
        if summary.state is ReportState.FAILED:
            return "none", "the report could not be made"
        return summary.state.value, None


_NEVER_MADE = (
    "no report was made for this deploy (published before reports were made, or the server "
    "stopped before it began); deploy again for one"
)
_SENT_PLAIN = (
    "The site sent text uncompressed to a browser that accepts brotli and gzip: the files' "
    "compressed copies are made when the build is placed; deploy again, and tell the "
    "platform's operator if it stays so."
)


def _read(root: Path) -> tuple[SiteFiles, Pages]:
    site = walk(root)
    read, unread = read_pages(site)
    return site, Pages(read, unread)


def _static(site: SiteFiles, pages: Pages) -> dict[str, ReportCheck]:
    home = next((p for p in pages.read if p.path == "index.html"), None)
    return {
        "meta": check_meta(pages),
        "icons": check_icons(site, home),
        "compression": check_compression(site),
        "crawl": check_crawl(site, pages),
    }


def _probed(site: SiteFiles) -> list[str]:
    """The home page, up to two hashed scripts or styles, and one other text file."""
    hashed = [p for p in sorted(site.files) if is_immutable(p)][:2]
    other = [
        p
        for p in sorted(site.files)
        if compressible(p)
        and not is_immutable(p)
        and p != "index.html"
        and site.files[p] >= MIN_BYTES
        and not p.startswith(".")
    ][:1]
    return ["", *hashed, *other]
