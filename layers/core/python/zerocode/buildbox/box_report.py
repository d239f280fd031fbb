"""A deploy build's part of its publish report (issue 44, point 5), inside the AWS build box.

No browser runs in the API function, so on AWS the browser's look at a deployed home page
is taken here, where the runtime check and the cover are: the built site served on loopback
(:func:`.browser.served`; a data app's beside the box's own data API, :mod:`.box_data`),
opened in the image's Chromium, confined as the runtime check is (:mod:`.browser`), and
looked at by the local report's own page code
(:func:`zerocode.adapters.local.chromium_report.look_in`): the console's errors, the
requests of its own origin that failed, the rendered page's links, axe-core's violations.

What it saw goes back as ``report.json`` beside ``check.json``; the platform reads it by its
own bounds and merges it with the checks of the site's files
(:mod:`zerocode.adapters.aws.build_report`): the look is the box's word, and the box ran the
app's code. Links of the box's loopback origin are handed back as paths (the site is served
at its root here, as it is on its own origin). A look that could not be taken says why: the
platform then leaves those checks "not run", never passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.local.chromium import confined, origin_of, playwright_installed
from zerocode.adapters.local.chromium_check import (
    LOAD_TIMEOUT_MS,
    PAGE_SECONDS,
    SETTLE_MS,
    Findings,
)
from zerocode.adapters.local.chromium_report import AXE_FILE, Seen, look_in
from zerocode.buildbox.box_data import served_with_data
from zerocode.buildbox.browser import box_browser, served
from zerocode.publishing.publish_report import PageLook

LOOK_SECONDS = PAGE_SECONDS + 20.0  # the look, the browser's start and close
LINK_CHARS = 1_024  # a longer link of the page is left out, never cut (a cut one is broken)


def write_report(
    app_id: str,
    build_id: str,
    site: Path,
    out: Path,
    chromium: str | None,
    model: bytes | None,
    say: Callable[[str], None],
) -> None:
    """Look at the built ``site``'s home page and write what was seen to ``out/report.json``
    (``model``: a data app's data model, from the build's source). Never raises: the report
    is never the build's failure."""
    look = _look(app_id, build_id, site, chromium, model)
    body = look_json(look)
    data = json.dumps(body).encode()
    while len(data) > handoff.MAX_REPORT_BYTES and body["links"]:  # links first, halved
        body["links"] = body["links"][: len(body["links"]) // 2]
        body["linksCut"] = True
        data = json.dumps(body).encode()
    (out / handoff.REPORT_FILE).write_bytes(data)
    said = look.why or (
        f"{len(look.problems)} console problem(s), {len(look.failed)} failed request(s), "
        f"{len(look.links)} link(s), "
        + (
            f"{len(look.violations)} axe-core violation(s)"
            if look.violations is not None
            else (look.a11y_why or "axe-core did not run")
        )
    )
    say(f"zerocode: publish report's look at the page: {said}")


def look_json(look: PageLook) -> dict[str, Any]:
    """What the platform reads back (adapters/aws/build_report.py: ``page_look``)."""
    return {
        "loaded": look.loaded,
        "problems": list(look.problems),
        "failed": list(look.failed),
        "links": list(look.links),
        "violations": None
        if look.violations is None
        else [
            {"rule": v.rule, "impact": v.impact, "help": v.help, "where": list(v.where)}
            for v in look.violations
        ],
        "why": look.why,
        "a11yWhy": look.a11y_why,
    }


def _look(
    app_id: str, build_id: str, site: Path, chromium: str | None, model: bytes | None
) -> PageLook:
    if chromium is None:
        return PageLook(why="not run: the build image has no Chromium")
    if not playwright_installed():
        return PageLook(why="not run: the build image has no Playwright")
    try:
        with _serving(site, app_id, build_id, model) as url:
            look = asyncio.run(asyncio.wait_for(_in_browser(url, chromium), LOOK_SECONDS))
    except TimeoutError:
        return PageLook(why=f"not run: the build's look took longer than {LOOK_SECONDS:g} s")
    except Exception as exc:  # the browser's (or the box's server's) trouble, not the page's
        text = str(exc).strip()
        said = text.splitlines()[0][:200] if text else type(exc).__name__
        return PageLook(why=f"not run: the build's browser failed ({said})")
    return look


@contextlib.contextmanager
def _serving(site: Path, app_id: str, build_id: str, model: bytes | None) -> Iterator[str]:
    if model is None:
        with served(site) as url:
            yield url
        return
    with served_with_data(site, app_id, build_id, model) as box:
        yield box.url


async def _in_browser(url: str, chromium: str) -> PageLook:
    seen = Seen(Findings(origin=origin_of(url)))
    async with box_browser(url, chromium) as browser:
        context = await confined(browser, url, seen=seen.findings.blocked)
        try:
            page = await context.new_page()
            try:
                async with asyncio.timeout(PAGE_SECONDS):
                    await look_in(
                        page,
                        url,
                        seen,
                        axe=AXE_FILE.read_text(encoding="utf-8"),
                        timeout_ms=LOAD_TIMEOUT_MS,
                        settle_ms=SETTLE_MS,
                    )
            except TimeoutError:
                seen.cut(f"not run: the look took longer than {PAGE_SECONDS:g} s")
        finally:
            with contextlib.suppress(Exception):
                await context.close()
    look = seen.look()
    origin = seen.findings.origin
    own = [_as_path(link, origin) for link in look.links]
    return PageLook(
        loaded=look.loaded,
        problems=look.problems,
        failed=look.failed,
        links=tuple(link for link in own if len(link) <= LINK_CHARS),
        violations=look.violations,
        why=look.why,
        a11y_why=look.a11y_why,
    )


def _as_path(link: str, origin: str) -> str:
    """A link of the box's own origin as its path (and query): the site's own, wherever it
    is published; any other link as it is."""
    if link == origin or link.startswith(origin + "/"):
        return link[len(origin) :] or "/"
    return link
