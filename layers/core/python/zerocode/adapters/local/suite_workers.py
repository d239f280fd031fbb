"""The checks of one suite at once in the kept browser, within the suite's time: why not all
of them were run, if they were not (chromium_acceptance.py runs them)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from zerocode.adapters.local.browser_pool import BrowserDidNotStart
from zerocode.adapters.local.browser_shares import BUSY, BrowserBusy, Tenant
from zerocode.adapters.local.chromium_check import BROWSER_FAILED

log = logging.getLogger("zerocode.adapters.local.chromium_acceptance")


async def together(
    work: list[Coroutine[Any, Any, None]], bound: float, tenant: Tenant
) -> str | None:
    """``work`` run at once within ``bound`` seconds; why not all of it was done, if so."""
    why: str | None = None
    try:
        async with asyncio.timeout(bound), asyncio.TaskGroup() as group:
            for one in work:
                group.create_task(one)
    except* BrowserDidNotStart as caught:
        log.warning("acceptance checks not run: Chromium did not start (%s)", caught)
        why = "the browser did not start"
    except* BrowserBusy as caught:
        log.warning("acceptance checks of %s: %s", tenant.app, caught.exceptions[0])
        why = BUSY
    except* SuiteBroke:
        why = BROWSER_FAILED
    except* TimeoutError:
        why = f"the suite took longer than {bound:g} s"
    return why


class SuiteBroke(Exception):
    """A check's browser went away under it twice: the rest of the suite is not run."""
