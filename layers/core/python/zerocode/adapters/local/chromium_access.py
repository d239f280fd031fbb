"""The platform's access probe of an app's data, run in the confined browser
(zerocode/data/access_probe.py; issue 39, point 5).

Three visitors, one after another, each in a fresh context of the kept browser: the owner
(signs up, creates a record), another user (signs up, tries the owner's record) and one who
is not signed in; all three in one scratch data space (data/check_spaces.py), deleted when
the probe ends. Each visitor acts from a document of the app's origin that runs none of the
app's scripts (the platform's client, loaded as the page), so a hostile page cannot fake
what the probe sees.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from zerocode.adapters.local.chromium import Scratch
from zerocode.data.access_probe import PROBE_JS, Probe, probes, problems
from zerocode.data.model import DataModel

if TYPE_CHECKING:
    from playwright.async_api import Page

log = logging.getLogger(__name__)
# A page in a fresh context confined to the app's origin whose data API requests use the
# given scratch space: the local browser pool's (a tenant's share), or the AWS build's own
# browser (zerocode.buildbox).
PageOpener = Callable[[Scratch], AbstractAsyncContextManager["Page"]]

PROBE_SECONDS = 20.0  # one probe's three visitors, each in a context of its own
STEPS = (("owner", "zc-probe-owner"), ("other", "zc-probe-other"), ("anonymous", ""))


async def access_problems(
    open_page: PageOpener,
    url: str,
    model: DataModel,
    scratch: Callable[[], Scratch],
) -> list[str]:
    """What the app's data lets a visitor do that its rules say they must not (empty: the
    rules hold). Best effort, as the runtime check: the probe's own trouble is logged."""
    found: list[str] = []
    for probe in probes(model):
        collection = model.collection(probe.collection)
        rules = {str(k): str(v) for k, v in (collection.rules if collection else {}).items()}
        found += await probe_problems(open_page, url, probe, rules, scratch) or []
    return found


async def probe_problems(
    open_page: PageOpener,
    url: str,
    probe: Probe,
    rules: dict[str, str],
    scratch: Callable[[], Scratch],
) -> list[str] | None:
    """One collection's probe, its three visitors in one new scratch space: what its rules
    let through (empty: they hold), or None when the probe itself could not run."""
    made = scratch()
    shared = Scratch(made.header, lambda: None)  # one space for the three visitors
    try:
        seen = await asyncio.wait_for(_visit(open_page, url, probe, shared), PROBE_SECONDS)
    except Exception as exc:
        log.warning("access probe of %s not run: %s", probe.collection, type(exc).__name__)
        return None
    finally:
        await asyncio.to_thread(made.done)
    return problems(probe, rules, seen)


async def _visit(open_page: PageOpener, url: str, probe: Probe, shared: Scratch) -> dict[str, Any]:
    origin = url.rstrip("/")
    seen: dict[str, Any] = {}
    for step, user in STEPS:
        if step == "other" and not seen.get("created"):
            continue  # nothing of the owner's to try
        async with open_page(shared) as page:
            await page.goto(f"{origin}/_api/client.js")
            args = {
                "step": step,
                "collection": probe.collection,
                "record": probe.record,
                "id": seen.get("created"),
                "user": user,
            }
            seen.update(await page.evaluate(PROBE_JS, args))
    return seen
