"""How an acceptance check finds what it acts on and reads what it expects
(zerocode/engine/acceptance.py's targets and expectations), in a page of the confined
browser; apart from the runner (chromium_acceptance.py), which keeps the steps and the time.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from zerocode.engine.acceptance import Expectation, Target

if TYPE_CHECKING:
    from playwright.async_api import Locator, Page

MAX_ACTUAL = 300


def locator(page: Page, target: Target) -> Locator:
    """The first element the target finds (a check acts as a user would: on what shows)."""
    return locator_all(page, target).first


def said(target: Target | None) -> str:
    if target is None:
        return ""
    if target.kind == "role":
        return f"the {target.value}" + (f' "{target.name}"' if target.name else "")
    return f"{target.kind} {target.value!r}"


def probe(
    page: Page, e: Expectation, errors: list[str]
) -> tuple[str, Callable[[], Awaitable[tuple[bool, str]]]]:
    """What the expectation says, and a probe answering whether it holds and what is there."""
    from playwright.async_api import Error as PlaywrightError

    def matches(actual: str) -> bool:
        return actual == e.equals if e.contains is None else e.contains in actual

    want = f"equal to {e.equals!r}" if e.contains is None else f"containing {e.contains!r}"

    if e.kind == "noConsoleErrors":

        async def console() -> tuple[bool, str]:
            return (not errors, "; ".join(errors[:3]) or "no errors")

        return "no errors in the console", console
    if e.kind == "url":

        async def url() -> tuple[bool, str]:
            parts = urlsplit(page.url)
            here = parts.path + (f"?{parts.query}" if parts.query else "")
            return matches(here), here

        return f"the page's address {want}", url
    assert e.target is not None
    found = locator(page, e.target)
    whole = locator_all(page, e.target)

    async def state() -> tuple[bool, str]:
        try:
            if e.kind in ("visible", "hidden"):
                shown = await found.is_visible()
                return shown == (e.kind == "visible"), "visible" if shown else "not visible"
            if e.kind == "count":
                n = await whole.count()
                return n == e.equals, f"{n} found"
            if await whole.count() == 0:
                return False, "no such element"
            if e.kind == "text":
                text = " ".join((await found.inner_text(timeout=500)).split())
                return matches(text), repr(text)
            assert e.attribute is not None
            value = await found.get_attribute(e.attribute, timeout=500)
            return value is not None and matches(value), repr(value)
        except PlaywrightError as exc:
            return False, first_line(exc)

    subject = said(e.target)
    expected = {
        "visible": f"{subject} visible",
        "hidden": f"{subject} hidden",
        "count": f"{e.equals} of {subject}",
        "text": f"the text of {subject} {want}",
        "attribute": f"{e.attribute} of {subject} {want}",
    }[e.kind]
    return expected, state


def locator_all(page: Page, target: Target) -> Locator:
    if target.kind == "role":
        return page.get_by_role(target.value, name=target.name)  # type: ignore[arg-type]
    if target.kind == "label":
        return page.get_by_label(target.value)
    if target.kind == "text":
        return page.get_by_text(target.value)
    return page.locator(target.value)


def first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:MAX_ACTUAL]
