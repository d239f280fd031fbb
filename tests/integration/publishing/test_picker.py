"""The element picker's side of the postMessage checks (issue 11, point 5), in real headless
Chromium with every page served through Playwright's routing (no server): the picker obeys
only its parent window and only a console origin, configured into the script or, where none
is (the copy in AWS preview builds), named in the frame's name; and it posts only to that
origin. A page of another origin that frames the preview gets nothing and commands nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.e2e.conftest import BROWSER_ARGS
from tests.integration.adapters.test_chromium_covers import chromium_or_skip
from zerocode.publishing.picker import picker_script

CONSOLE, EVIL, PREVIEW = (
    "http://console.example",
    "http://evil.example",
    "http://p-abcdefgh.sites.example",
)

PREVIEW_PAGE = """<!doctype html><html><body><h1 id="title">Owls</h1>
<script src="/__zerocode/picker.js"></script></body></html>"""


def framing_page(name: str) -> str:
    """A page that frames the preview as the console does, and records what reaches it."""
    return f"""<!doctype html><html><body><script>
window.got = [];
window.addEventListener("message", (e) => window.got.push({{origin: e.origin,
  fromFrame: e.source === document.getElementById("preview").contentWindow, data: e.data}}));
</script>
<iframe id="preview" sandbox="allow-scripts allow-forms allow-same-origin" name={json.dumps(name)}
  src="{PREVIEW}/" width="600" height="300"></iframe></body></html>"""


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    executable = chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=executable,
            args=BROWSER_ARGS,
        )
        yield browser
        browser.close()


def open_page(
    chromium: Any, origin: str, name: str, script: bytes, preview: str = PREVIEW_PAGE
) -> Any:
    context = chromium.new_context()
    pages: dict[str, tuple[str, bytes]] = {
        f"{origin}/": ("text/html", framing_page(name).encode()),
        f"{PREVIEW}/": ("text/html", preview.encode()),
        f"{PREVIEW}/__zerocode/picker.js": ("text/javascript", script),
    }

    def route(route: Any) -> None:
        found = pages.get(route.request.url)
        if found is None:
            route.abort()
        else:
            route.fulfill(status=200, content_type=found[0], body=found[1])

    context.route("**/*", route)
    page = context.new_page()
    page.goto(f"{origin}/")
    page.frame_locator("#preview").locator("h1").wait_for()
    return page


def command_and_click(page: Any, target: str = "*") -> list[dict[str, Any]]:
    """Turn edit mode on from ``page`` (as the console does), click the title; what came."""
    page.wait_for_timeout(300)
    page.evaluate(
        "t => document.getElementById('preview').contentWindow.postMessage("
        "{zerocode: 'edit', on: true}, t)",
        target,
    )
    page.wait_for_timeout(300)
    page.frame_locator("#preview").locator("h1").click()
    page.wait_for_timeout(500)
    return list(page.evaluate("window.got"))


Script = Callable[[], bytes]
SCRIPTS: dict[str, Script] = {
    "configured": lambda: picker_script([CONSOLE]),
    "named by the console (AWS builds)": lambda: picker_script(),
}


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_the_console_origin_commands_the_picker_and_hears_from_it(chromium: Any, kind: str) -> None:
    page = open_page(chromium, CONSOLE, f"zerocode-console {CONSOLE}", SCRIPTS[kind]())
    got = command_and_click(page)
    assert [m["data"]["zerocode"] for m in got] == ["ready", "picked"]
    assert all(m["origin"] == PREVIEW and m["fromFrame"] for m in got)  # the preview's own
    assert got[1]["data"]["element"]["tag"] == "h1"
    assert got[1]["data"]["element"]["selector"] == "#title"


@pytest.mark.parametrize("kind", sorted(SCRIPTS))
def test_another_origin_framing_the_preview_gets_nothing(chromium: Any, kind: str) -> None:
    # It even names the real console in the frame's name: messages go to that origin only,
    # so the browser drops them, and its own commands come from the wrong origin.
    page = open_page(chromium, EVIL, f"zerocode-console {CONSOLE}", SCRIPTS[kind]())
    assert command_and_click(page) == []


def test_a_framer_cannot_name_itself_over_the_configured_consoles(chromium: Any) -> None:
    page = open_page(chromium, EVIL, f"zerocode-console {EVIL}", picker_script([CONSOLE]))
    assert command_and_click(page) == []


def test_without_a_console_origin_the_picker_stays_silent(chromium: Any) -> None:
    for name in ("", "preview", "zerocode-console javascript:alert(1)"):
        page = open_page(chromium, CONSOLE, name, picker_script())
        assert command_and_click(page) == [], name


KEYBOARD_PAGE = """<!doctype html><html><body><header><h1>Owls</h1></header>
<div><p>Night birds</p><div tabindex="-1" id="own">Its own tabindex</div></div>
<a href="/elsewhere">More</a><script src="/__zerocode/picker.js"></script></body></html>"""


def test_in_edit_mode_the_keyboard_tabs_through_elements_picks_and_edits_text(
    chromium: Any,
) -> None:
    """Tab stops on the pickable elements only while edit mode is on (an element's own
    tabindex untouched), Enter picks the focused one (a link is not followed), F2 edits its
    text in place and Enter sends it."""
    page = open_page(
        chromium, CONSOLE, f"zerocode-console {CONSOLE}", picker_script([CONSOLE]), KEYBOARD_PAGE
    )
    frame = page.query_selector("#preview").content_frame()
    stops = "() => [...document.querySelectorAll('[tabindex]')].map(e => e.tagName + e.tabIndex)"
    assert frame.evaluate(stops) == ["DIV-1"]

    def edit(*, on: bool) -> None:
        page.evaluate(
            "on => document.getElementById('preview').contentWindow.postMessage("
            "{zerocode: 'edit', on}, '*')",
            on,
        )
        frame.wait_for_function(
            "on => (document.documentElement.style.cursor === 'crosshair') === on", arg=on
        )

    edit(on=True)
    assert frame.evaluate(stops) == ["HEADER0", "H10", "P0", "DIV-1", "A0"]
    focused = []
    for _ in range(4):
        page.keyboard.press("Tab")
        focused.append(frame.evaluate("document.activeElement.tagName"))
    assert focused == ["HEADER", "H1", "P", "A"]  # the page's own tabindex=-1 is skipped
    assert frame.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Enter")  # on the link: picked, not followed
    page.keyboard.press("Shift+Tab")
    assert frame.evaluate("document.activeElement.tagName") == "P"
    page.keyboard.press("F2")
    frame.wait_for_selector("p[contenteditable]")
    page.keyboard.type("Day birds")
    page.keyboard.press("Enter")
    page.wait_for_function("() => window.got.length >= 3")
    got = [m["data"] for m in page.evaluate("window.got")]
    assert [m["zerocode"] for m in got] == ["ready", "picked", "textEdit"]
    assert (got[1]["element"]["tag"], got[1]["element"]["text"]) == ("a", "More")
    assert (got[2]["element"]["text"], got[2]["newText"]) == ("Night birds", "Day birds")
    assert frame.url == f"{PREVIEW}/"

    edit(on=False)  # the Tab order is the page's own again, outlines gone
    assert frame.evaluate(stops) == ["DIV-1"]
    assert frame.evaluate("document.querySelectorAll('[data-zc-stop]').length") == 0
    assert frame.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "solid"
