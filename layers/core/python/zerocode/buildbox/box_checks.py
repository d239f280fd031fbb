"""An app's acceptance checks inside the AWS build box (issue 42, point 1).

No browser runs in the API function, so on AWS the suite runs where the runtime check runs:
in the platform's build image, on CodeBuild, with the same page code as a local run
(:func:`zerocode.adapters.local.chromium_acceptance.check_in_page`) and the same
confinement as the build's own runtime check (:mod:`.browser`: a context that fetches only
the site's origin on the driver's side, the browser's own traffic sent to a dead proxy).

A checks run (``ZEROCODE_TASK=checks``) builds nothing: its source is a build's output, as
the platform published it, under ``site/``, and the checks to run
(:data:`~zerocode.adapters.aws.build_handoff.CHECKS_IN_SOURCE`). A data app's page is served
beside the box's own data API (:mod:`.box_data`), each check in a scratch data space of its
own, and the platform's access checks (``access-{collection}``) are derived here from the
data model the platform sent, as :mod:`zerocode.engine.platform_checks` derives them.
Each check runs in a fresh context, one after another, within the run's time; the ones past
it are not run, saying so. The verdicts go back as ``acceptance.json`` and each failure's
screenshot as ``shots/{id}.png``; the platform reads them by its own rules
(:mod:`zerocode.adapters.aws.build_acceptance`): a verdict is the box's word, and the box
ran the app's code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.local.chromium import Scratch, scratch_spaces
from zerocode.adapters.local.chromium_acceptance import CHECK_SECONDS, check_in_page
from zerocode.adapters.local.chromium_access import probe_problems
from zerocode.buildbox.box_data import served_with_data
from zerocode.buildbox.browser import box_browser, page_opener, served
from zerocode.data.backend import Backend
from zerocode.data.model import DataModel
from zerocode.engine.acceptance import Check, CheckInvalid, parse_check
from zerocode.engine.check_suite import MAX_SCREENSHOT, check_number
from zerocode.engine.platform_checks import WHERE, PlatformCheck, access_checks

if TYPE_CHECKING:
    from playwright.async_api import Browser

SUITE_SECONDS = 180.0  # at most, whatever the platform asks (chromium_acceptance's bound)
SLACK_SECONDS = 20.0  # past the suite's time: the last check's end, the browser's close
MAX_ACCESS_ACTUAL = 1_500


class Spec:
    """What the platform asked for: its checks (parsed again here: the box trusts no one's
    JSON), the platform's access checks by id, and the time the run may take."""

    def __init__(self, raw: bytes | None) -> None:
        try:
            body = json.loads(raw or b"")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise ValueError("the checks run's source carries no checks")
        self.checks: list[tuple[str, Check | None]] = []
        for item in body.get("checks", []):
            found = item.get("id") if isinstance(item, dict) else None
            if not isinstance(found, str) or check_number(found) is None:
                continue
            try:
                self.checks.append((found, parse_check(item.get("check"))))
            except CheckInvalid:
                self.checks.append((found, None))  # told back as not run
        self.platform = [p for p in body.get("platform", []) if isinstance(p, str)]
        seconds = body.get("seconds")
        self.seconds = SUITE_SECONDS
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
            self.seconds = min(SUITE_SECONDS, float(seconds))


def run_checks(
    app_id: str,
    build_id: str,
    files: dict[str, bytes],
    model: bytes | None,
    work: Path,
    out: Path,
    chromium: str | None,
    say: Callable[[str], None],
) -> bool:
    """Run the checks the source asks for against the site it carries (``model``: a data
    app's data model, from the same source); write ``out/acceptance.json`` and the
    failures' screenshots. False when nothing could run."""
    spec = Spec(files.get(handoff.CHECKS_IN_SOURCE))
    site = work / "site"
    for name, data in files.items():
        if name.startswith(handoff.SITE_IN_SOURCE) and name != handoff.SITE_IN_SOURCE:
            target = site / name.removeprefix(handoff.SITE_IN_SOURCE)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    why: str | None = None
    results: list[dict[str, Any]] = []
    if chromium is None:
        why = "no Chromium in the build image"
    elif not (site / "index.html").is_file():
        why = "the build's output has no index.html"
    else:
        try:
            results, why = asyncio.run(
                asyncio.wait_for(
                    _suite(app_id, build_id, site, chromium, spec, model, out),
                    spec.seconds + SLACK_SECONDS,
                )
            )
        except Exception as exc:  # the browser's trouble (or the box's): never the page's
            text = str(exc).strip()
            said = text.splitlines()[0][:200] if text else type(exc).__name__
            why = f"the checks could not run ({said})"
    (out / handoff.ACCEPTANCE_FILE).write_text(
        json.dumps({"results": results, "whyNotRun": why}), encoding="utf-8"
    )
    told = {r["id"]: r["status"] for r in results}
    say(f"zerocode: acceptance checks: {json.dumps(told)}" + (f" ({why})" if why else ""))
    return why is None or bool(results)


@dataclass(frozen=True)
class _Served:
    url: str
    backend: Backend | None  # a data app's: the box's own store
    model: DataModel | None


@contextlib.contextmanager
def _serving(site: Path, app_id: str, build_id: str, model: bytes | None) -> Iterator[_Served]:
    """The site on loopback, beside the box's data API when the platform sent a model."""
    if model is None:
        with served(site) as url:
            yield _Served(url, None, None)
        return
    with served_with_data(site, app_id, build_id, model) as box:
        yield _Served(box.url, box.backend, box.model)


async def _suite(
    app_id: str,
    build_id: str,
    site: Path,
    chromium: str,
    spec: Spec,
    model: bytes | None,
    out: Path,
) -> tuple[list[dict[str, Any]], str | None]:
    """Each check's verdict, in the order asked; why the rest were not run, if any."""
    results: list[dict[str, Any]] = []
    deadline = time.monotonic() + spec.seconds
    with _serving(site, app_id, build_id, model) as box:
        made = scratch_spaces(box.backend) if box.backend is not None else None
        platform = {p.id: p for p in access_checks(box.model)}
        async with box_browser(box.url, chromium) as browser:
            for check_id, check in spec.checks:
                if time.monotonic() > deadline:
                    return results, f"the run's time ({spec.seconds:g} s) ran out"
                if check is None:
                    results.append({"id": check_id, "status": "not_run", "evidence": None})
                    continue
                scratch = (lambda: made(app_id)) if made is not None else None
                results.append(await _one(browser, box.url, check_id, check, scratch, out))
            for check_id in spec.platform:
                if time.monotonic() > deadline:
                    return results, f"the run's time ({spec.seconds:g} s) ran out"
                one = platform.get(check_id)
                if one is None or made is None:
                    results.append({"id": check_id, "status": "not_run", "evidence": None})
                    continue
                results.append(await _access(browser, box.url, one, lambda: made(app_id)))
    return results, None


async def _one(
    browser: Browser,
    url: str,
    check_id: str,
    check: Check,
    scratch: Callable[[], Scratch] | None,
    out: Path,
) -> dict[str, Any]:
    made = scratch() if scratch is not None else None
    try:
        async with page_opener(browser, url)(made) as page:
            outcome = await asyncio.wait_for(
                check_in_page(page, url, check), CHECK_SECONDS + SLACK_SECONDS
            )
    finally:
        if made is not None:
            made.done()
    found = outcome.evidence
    if found is None:
        return {"id": check_id, "status": outcome.status, "evidence": None}
    shot = found.screenshot
    kept = shot is not None and len(shot) <= MAX_SCREENSHOT
    if kept:
        assert shot is not None
        shots = out / handoff.SHOTS_DIR
        shots.mkdir(exist_ok=True)
        (shots / f"{check_id}.png").write_bytes(shot)
    evidence = {"where": found.where, "expected": found.expected, "actual": found.actual}
    return {"id": check_id, "status": outcome.status, "evidence": evidence, "shot": kept}


async def _access(
    browser: Browser, url: str, one: PlatformCheck, scratch: Callable[[], Scratch]
) -> dict[str, Any]:
    """The platform's access check of one collection, each visitor in a fresh context."""
    found = await probe_problems(page_opener(browser, url), url, one.probe, one.rules, scratch)
    if found is None:
        return {"id": one.id, "status": "not_run", "evidence": None}
    if not found:
        return {"id": one.id, "status": "passed", "evidence": None}
    evidence = {
        "where": WHERE,
        "expected": "each visitor refused as the rules say",
        "actual": "; ".join(found)[:MAX_ACCESS_ACTUAL],
    }
    return {"id": one.id, "status": "failed", "evidence": evidence}
