"""A deploy's publish report on AWS (issue 44, point 5), made when its build is finished.

Locally the report is made after the deploy is published, from the placed output, the site's
answers and the kept browser (zerocode/publishing/report_runner.py). On AWS no browser runs
in the API function and the output is in S3, so the report is made where the output is
last whole, when :class:`.codebuild_builder.CodeBuildBuilder` unpacks a deploy build's
handed-back archive, and stored before the build reads ``succeeded`` (no reader sees a
published deploy without it):

- the checks of the site's files (publishing/site_checks.py: ``meta``, ``icons``, ``crawl``,
  ``links``) on the unpacked site, as the platform completed it (site_head.py), with its
  bounds;
- ``compression``: CloudFront compresses text on the fly (the sites' cache policy accepts
  brotli and gzip), so no ``.encoded/`` copies are looked for; a text file past the 10 MB
  CloudFront compresses up to fails;
- ``caching``: the ``Cache-Control`` the platform puts on each S3 object
  (:func:`zerocode.publishing.encodings.site_cache`; S3 sends an ETag with each), for the
  home page, two hashed assets and one other text file;
- ``console``, ``a11y`` and the rendered page's ``links``: the build box's look
  (zerocode/buildbox/box_report.py, ``report.json`` in the archive), read by its own bounds:
  too large, not JSON or not of its shape is "not run" saying so, never a pass. The box
  looked before the platform completed the page, so what the platform added since (a
  ``<title>``, ``lang``, the icons) is not held against the site.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.publishing.builds import SiteMeta
from zerocode.publishing.encodings import MIN_BYTES, compressible, is_immutable, site_cache
from zerocode.publishing.publish_report import (
    Answer,
    PageLook,
    PublishReport,
    PublishReports,
    ReportCheck,
    Violation,
    failed,
    not_run,
    passed,
)
from zerocode.publishing.report_runner import VUE_LINKS
from zerocode.publishing.site_checks import (
    Pages,
    check_crawl,
    check_icons,
    check_links,
    check_meta,
)
from zerocode.publishing.site_files import SiteFiles, origin_of, read_pages, walk
from zerocode.publishing.site_served import check_a11y, check_caching, check_console

log = logging.getLogger(__name__)

CLOUDFRONT_MAX_BYTES = 10_000_000  # CloudFront compresses objects of 1,000 B to 10 MB
MAX_LINES = 20  # console lines, failed requests
MAX_LINKS = 2_000
MAX_VIOLATIONS, MAX_NODES = 50, 8
LINE_CHARS = 300
NO_LOOK = "not run: the build handed back no look at its page"
AWS_COMPRESSION_FIX = (
    "Keep each script, style and page under 10 MB: CloudFront sends larger files "
    "uncompressed. Split large files, drop what the site does not use, and keep data out of "
    "scripts."
)
# axe-core's rules a page fails for what the platform adds to it once the box has looked.
_ADDED_FIXES = {"document-title": "title", "html-has-lang": "lang"}
_FAILED_LOAD = re.compile(r"Failed to load resource.*\(at /([^\s():]+):\d+:\d+\)")


def report_deploy(
    store: PublishReports,
    app_id: str,
    build_id: str,
    out: Path,
    *,
    site: SiteMeta | None,
    vue: bool,
    added: list[str],
) -> None:
    """Make and store the report of a deploy build whose output ``out`` (the unpacked
    archive) was just published; ``added``: what the platform added to its page. Never
    raises: a report is never the deploy's failure."""
    report = deploy_report(
        app_id, build_id, out, origin=origin_of(site.url) if site else None, vue=vue, added=added
    )
    try:
        store.put(report)
    except Exception:
        log.exception("the publish report of build %s was not stored", build_id)


def deploy_report(
    app_id: str,
    build_id: str,
    out: Path,
    *,
    origin: str | None,
    vue: bool,
    added: list[str],
) -> PublishReport:
    report = PublishReport(app_id=app_id, build_id=build_id)
    try:
        return report.done(_checks(out, origin, vue=vue, added=added))
    except Exception as exc:  # the platform's trouble: said, never a verdict
        log.exception("the publish report of build %s failed", build_id)
        return report.gave_up(f"the report could not be made ({type(exc).__name__})")


def _checks(out: Path, origin: str | None, *, vue: bool, added: list[str]) -> list[ReportCheck]:
    site = walk(out / handoff.SITE_DIR)
    read, unread = read_pages(site)
    pages = Pages(read, unread)
    home = next((p for p in pages.read if p.path == "index.html"), None)
    look = since_looked(page_look(_read(out / handoff.REPORT_FILE)), site, added)
    links = check_links(site, pages, origin, look.links, look.failed)
    if vue and not look.loaded and links.passed:
        # A Vue app's links are made by its scripts: with no rendered page, none was seen.
        why = look.why or "not run: the page did not load"
        links = not_run("links", f"{why} ({VUE_LINKS})")
    return [
        check_meta(pages),
        check_icons(site, home),
        check_compression_on_cloudfront(site),
        check_caching(s3_answers(site)),
        check_crawl(site, pages),
        links,
        check_console(look),
        check_a11y(look),
    ]


def _read(path: Path) -> bytes | None:
    """The box's file, if it is a regular one (never through a link; the unpacking refuses
    links anyway), read up to one byte past the bound."""
    if path.is_symlink() or not path.is_file():
        return None
    with path.open("rb") as f:
        return f.read(handoff.MAX_REPORT_BYTES + 1)


def check_compression_on_cloudfront(site: SiteFiles) -> ReportCheck:
    """CloudFront compresses a site's text by negotiation, each file up to 10 MB."""
    wrong, text = [], 0
    for path, size in sorted(site.files.items()):
        if not compressible(path) or size < MIN_BYTES:
            continue
        text += 1
        if size > CLOUDFRONT_MAX_BYTES:
            wrong.append(f"{path} ({size / 1e6:.1f} MB) is over the 10 MB CloudFront compresses")
    note = (
        "on AWS CloudFront compresses text on the fly (brotli or gzip, as the browser "
        "accepts), files of 1,000 bytes to 10 MB; no compressed copies are made at publish"
    )
    if wrong:
        return failed("compression", wrong, AWS_COMPRESSION_FIX, note)
    return passed("compression", f"{text} text file(s) sent compressed by CloudFront", note=note)


def s3_answers(site: SiteFiles) -> list[tuple[str, Answer]]:
    """The headers S3 gives (and CloudFront passes on) for the home page, two hashed
    assets and one other text file: the platform's ``Cache-Control`` and S3's ETag."""
    files = sorted(site.files)
    hashed = [p for p in files if is_immutable(p)][:2]
    other = [
        p
        for p in files
        if compressible(p)
        and not is_immutable(p)
        and p != "index.html"
        and site.files[p] >= MIN_BYTES
        and not p.startswith(".")
    ][:1]
    return [
        (path, Answer(200, {"cache-control": site_cache(path, preview=False), "etag": "(S3's)"}))
        for path in ["index.html", *hashed, *other]
    ]


def page_look(raw: bytes | None) -> PageLook:
    """The box's look as the platform takes it: bounded and shape-checked, or "not run"
    saying why (the box ran the app's code: its file is never trusted to be well made)."""
    if raw is None:
        return PageLook(why=NO_LOOK)
    if len(raw) > handoff.MAX_REPORT_BYTES:
        limit = handoff.MAX_REPORT_BYTES >> 10
        return PageLook(why=f"not run: the build's look at its page is over {limit} KiB")
    try:
        return _shaped(json.loads(raw))
    except ValueError:
        return PageLook(why="not run: the build's look at its page is not JSON")
    except TypeError:
        return PageLook(why="not run: the build's look at its page is not of the expected shape")


def _shaped(body: Any) -> PageLook:
    """Raises TypeError for anything not of the shape box_report.look_json writes."""
    if not isinstance(body, dict) or not isinstance(body.get("loaded"), bool):
        raise TypeError
    violations = body.get("violations")
    return PageLook(
        loaded=body["loaded"],
        problems=_lines(body.get("problems"), MAX_LINES, LINE_CHARS),
        failed=_lines(body.get("failed"), MAX_LINES, LINE_CHARS),
        links=tuple(s for s in _lines(body.get("links"), MAX_LINKS, None) if len(s) <= 2048),
        violations=None if violations is None else _violations(violations),
        why=_why(body.get("why")),
        a11y_why=_why(body.get("a11yWhy")),
    )


def _lines(value: Any, most: int, chars: int | None) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError
    return tuple(v if chars is None else v[:chars] for v in value[:most])


def _why(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise TypeError
    said = value[:LINE_CHARS]
    return said if said.startswith("not run") else f"not run: {said}"


def _violations(value: Any) -> tuple[Violation, ...]:
    if not isinstance(value, list):
        raise TypeError
    found = []
    for v in value[:MAX_VIOLATIONS]:
        if not isinstance(v, dict):
            raise TypeError
        rule, impact, help_ = v.get("rule"), v.get("impact"), v.get("help")
        if not all(isinstance(s, str) for s in (rule, impact, help_)):
            raise TypeError
        where = _lines(v.get("where"), MAX_NODES, 200)
        found.append(Violation(str(rule)[:80], str(impact)[:20], str(help_)[:300], where))
    return tuple(found)


def since_looked(look: PageLook, site: SiteFiles, added: list[str]) -> PageLook:
    """The look without what the platform fixed after the box looked: requests for the
    files it added (its icons, its manifest), their console lines, and axe-core's rules of
    the tags it added (a ``<title>``, ``lang``)."""
    files = {a for a in added if a in site.files}
    tags = {"lang" if a.startswith("lang=") else a for a in added}

    def fixed_request(request: str) -> bool:
        return unquote(request.rsplit(" (HTTP ", 1)[0]).lstrip("/") in files

    def fixed_line(line: str) -> bool:
        match = _FAILED_LOAD.search(line)
        return match is not None and unquote(match.group(1)) in files

    violations = look.violations
    if violations is not None:
        violations = tuple(v for v in violations if _ADDED_FIXES.get(v.rule) not in tags)
    return PageLook(
        loaded=look.loaded,
        problems=tuple(p for p in look.problems if not fixed_line(p)),
        failed=tuple(r for r in look.failed if not fixed_request(r)),
        links=look.links,
        violations=violations,
        why=look.why,
        a11y_why=look.a11y_why,
    )
