"""The console's accessibility (issue 26) in real headless Chromium (Playwright + Debian's
chromium): axe-core (the npm package, installed at test time into a cache and injected
into each page over the DevTools protocol, so the console's CSP stays as it is) finds no
serious or critical violation on any console page, in the light and the dark theme; and
the keyboard paths: Enter sends, Shift+Enter breaks the line, an IME composition's Enter
does not send, Esc leaves Edit mode, the arrow keys move between the app page's tabs.
Screenshots go to test-artifacts/console-ui/ (ZEROCODE_TEST_ARTIFACTS moves them)."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, chromium_browser, create, wait_for_build
from tests.e2e.test_accounts import make_admin
from tests.e2e.test_console_code_edit import bundle  # noqa: F401 (a fixture)

ARTIFACTS = Path(os.environ.get("ZEROCODE_TEST_ARTIFACTS", "test-artifacts")) / "console-ui"
TURN_MS = 120_000
AXE_VERSION = "4"
AXE_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "zerocode" / "axe"


# -- axe-core, from the npm registry into a cache ------------------------------------------------


def axe_source() -> str:
    """axe-core's ``axe.min.js``: installed once with npm into ~/.cache/zerocode/axe (another
    test worker may be installing it at the same time: each installs into its own directory
    and moves it into place)."""
    installed = AXE_CACHE / "node_modules" / "axe-core" / "axe.min.js"
    if not installed.exists():
        npm = shutil.which("npm")
        if npm is None:
            if os.environ.get("ZEROCODE_REQUIRE_CHROMIUM"):
                raise RuntimeError("ZEROCODE_REQUIRE_CHROMIUM is set but npm is not installed")
            pytest.skip("npm is not installed: axe-core cannot be fetched")
        staging = AXE_CACHE.with_name(f"axe-{secrets.token_hex(4)}")
        staging.mkdir(parents=True)
        done = subprocess.run(
            [npm, "install", "--prefix", str(staging), "--no-audit", "--no-fund",
             "--no-save", f"axe-core@{AXE_VERSION}"],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        try:
            staging.rename(AXE_CACHE)
        except OSError:  # another worker was first: theirs is as good
            shutil.rmtree(staging, ignore_errors=True)
    return installed.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def axe() -> str:
    return axe_source()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with chromium_browser() as chromium:
        yield chromium


SERIOUS = ("serious", "critical")


def scan(page: Any, axe: str, where: str) -> list[str]:
    """axe-core over the page as it is now (the preview's own page apart: it is the user's
    app, not the console); its serious and critical violations, one readable line each."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Runtime.evaluate is not subject to the page's CSP, as a <script> would be.
        page.evaluate(axe + "\n;true")
    result = page.evaluate(
        """async () => {
          const r = await axe.run(document, { iframes: false, resultTypes: ["violations"] });
          return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map((n) => n.target.join(" ") + " — " + n.failureSummary
              .replace(/\\s+/g, " ").slice(0, 300)) }));
        }"""
    )
    return [
        f"{where}: {v['id']} ({v['impact']}) {v['help']}\n    " + "\n    ".join(v["nodes"][:6])
        for v in result
        if v["impact"] in SERIOUS
    ]


def shot(page: Any, name: str, *, full: bool = True) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=full)


# -- the people and the app they look at -----------------------------------------------------


@dataclass
class World:
    owner: httpx.Client
    token: str
    app: dict[str, Any]
    admin: str


def signed_up(server: Server) -> tuple[httpx.Client, str]:
    account = f"a11y-{secrets.token_hex(4)}"
    c = httpx.Client(base_url=server.api, timeout=300)
    body = {"account": account, "password": "correct horse"}
    assert c.post("/api/users/register", json=body).status_code == 201
    token = c.post("/api/users/login", json=body).json()["token"]
    c.headers["Authorization"] = f"Bearer {token}"
    c.cookies.clear()
    return c, token


def deploy(owner: httpx.Client, app_id: str) -> None:
    started = owner.post(f"/api/apps/{app_id}/deploy", json={})
    assert started.status_code in (200, 201, 202), started.text
    assert wait_for_build(owner, app_id, started.json()["buildId"])["state"] == "succeeded"


@pytest.fixture(scope="module")
def world(server: Server) -> Iterator[World]:
    """An owner's HTML app with two finished turns and two deploys (so the builds table has
    a Roll back), and an admin."""
    owner, token = signed_up(server)
    app = create(owner, "A landing page for a bakery", "html")
    assert chat(owner, app["id"], "A landing page for a bakery").ended[0] == "succeeded"  # type: ignore[index]
    deploy(owner, app["id"])
    assert chat(owner, app["id"], 'Change the title to "Fresh Bread"').ended[0] == "succeeded"  # type: ignore[index]
    deploy(owner, app["id"])
    admin = f"a11y-admin-{secrets.token_hex(3)}"
    make_admin(server, admin)
    yield World(owner, token, app, admin)
    owner.close()


def new_page(browser: Any, width: int = 1280, height: int = 900, **options: Any) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.errors = errors
    return page


def signed_in(page: Any, server: Server, token: str, path: str = "#/") -> None:
    page.goto(f"{server.api}/console/")
    page.evaluate("t => localStorage.setItem('zc_token', t)", token)
    page.goto(f"{server.api}/console/{path}")


def open_app(page: Any, server: Server, world: World) -> None:
    signed_in(page, server, world.token, f"#/apps/{world.app['id']}")
    page.wait_for_selector("#messages [data-turn='succeeded']")
    page.wait_for_selector("#preview[src]:not([hidden])", state="attached")


# -- axe-core on every page, light and dark ------------------------------------------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.usefixtures("bundle")  # the Code tab's editor is CodeMirror, scanned too
def test_axe_finds_no_serious_violation_on_any_console_page(
    browser: Any, server: Server, world: World, axe: str, scheme: str
) -> None:
    page = new_page(browser, color_scheme=scheme)
    found: list[str] = []

    page.goto(f"{server.api}/console/#/login")
    page.wait_for_selector("input[name=account]")
    assert page.evaluate("document.documentElement.dataset.theme") == scheme
    found += scan(page, axe, "login")
    page.goto(f"{server.api}/console/#/register")
    page.wait_for_selector("text=Account: 4–64")
    found += scan(page, axe, "register")

    signed_in(page, server, world.token)
    page.wait_for_selector(f"#mine-apps .tile[data-app='{world.app['id']}']")
    page.wait_for_selector("#offline-notice")
    page.wait_for_selector("#account-usage[data-loaded] svg.usage-chart")
    found += scan(page, axe, "home")
    shot(page, f"a11y-home-{scheme}")

    open_app(page, server, world)
    page.wait_for_selector("#panel .rollback")  # the builds table: deployed, so it shows
    found += scan(page, axe, "app: chat, preview and builds")
    shot(page, f"a11y-app-{scheme}")
    page.click("#tab-code")
    page.click("#code-view button.file[data-path='index.html']")
    page.wait_for_selector("#code-editor .cm-content")
    found += scan(page, axe, "app: code")
    shot(page, f"a11y-code-{scheme}")
    page.click("#tab-versions")
    page.wait_for_selector("#versions-view .file-diff")
    found += scan(page, axe, "app: versions")
    page.click("#tab-checks")
    page.wait_for_selector("#checks-view .checks-head")
    found += scan(page, axe, "app: checks")
    page.click("#tab-data")
    page.wait_for_selector("#data-summary:not(:empty)")
    found += scan(page, axe, "app: data")
    page.click("#tab-usage")
    page.wait_for_selector("#usage-view[data-loaded] svg.usage-chart")
    found += scan(page, axe, "app: usage")
    page.click("#context")
    page.wait_for_selector("#context-total")
    found += scan(page, axe, "app: context")
    page.click("#edit")
    found += scan(page, axe, "app: edit mode")

    admin = new_page(browser, color_scheme=scheme)
    admin.goto(f"{server.api}/console/#/login")
    admin.fill("input[name=account]", world.admin)
    admin.fill("input[name=password]", "correct horse")
    admin.click("button[type=submit]")
    admin.click("#nav >> text=Admin")
    admin.wait_for_selector(f"#admin-apps tr[data-app='{world.app['id']}']")
    found += scan(admin, axe, "admin: apps")
    admin.click(f"#admin-apps tr[data-app='{world.app['id']}'] >> text=History")
    admin.wait_for_selector(".admin .panel h3")
    found += scan(admin, axe, "admin: an app's history")
    shot(admin, f"a11y-admin-{scheme}")
    admin.click("text=Users")
    admin.wait_for_selector(f"#admin-users >> text={world.admin}")
    found += scan(admin, axe, "admin: users")

    assert not found, "axe-core, serious and critical:\n" + "\n".join(found)
    assert page.errors == [] and admin.errors == []


# -- dark mode ---------------------------------------------------------------------------------


def colours(page: Any) -> tuple[str, str]:
    background, text = page.evaluate(
        "() => { const s = getComputedStyle(document.body); return [s.backgroundColor, s.color]; }"
    )
    return str(background), str(text)


def test_dark_mode_follows_the_system_and_the_switch_and_is_remembered(
    browser: Any, server: Server, world: World
) -> None:
    light = new_page(browser)
    signed_in(light, server, world.token)
    light.wait_for_selector("#theme")
    assert light.evaluate("document.documentElement.dataset.theme") == "light"
    light_colours = colours(light)

    page = new_page(browser, color_scheme="dark")
    signed_in(page, server, world.token)
    page.wait_for_selector("#theme")
    assert page.input_value("#theme") == "system"
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    dark_colours = colours(page)
    assert dark_colours[0] != light_colours[0] and dark_colours[1] != light_colours[1]
    shot(page, "dark-1-home-system")

    # The switch overrides the system, and is remembered.
    page.select_option("#theme", "light")
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    assert colours(page) == light_colours
    page.reload()
    page.wait_for_selector("#theme")
    assert page.input_value("#theme") == "light" and colours(page) == light_colours
    page.select_option("#theme", "system")
    assert colours(page) == dark_colours
    assert page.evaluate("localStorage.getItem('zc_theme')") is None

    light.select_option("#theme", "dark")
    assert colours(light) == dark_colours
    open_app(light, server, world)  # a new page of the console: still dark
    assert light.input_value("#theme") == "dark" and colours(light) == dark_colours
    # The preview is the user's app: its colours are its own.
    # The frame's src is set before its page loads: asked before, the frame's first
    # document (about:blank) answered, and the preview's load then destroyed it mid-call.
    frame = light.wait_for_selector("#preview[src]").content_frame()
    assert frame is not None
    frame.wait_for_url(re.compile(r"^http://p-"))
    frame.wait_for_load_state()
    frame_bg = frame.evaluate("() => getComputedStyle(document.body).backgroundColor")
    assert frame_bg != dark_colours[0]
    shot(light, "dark-2-app-switch")
    assert page.errors == [] and light.errors == []


# -- the keyboard ------------------------------------------------------------------------------


def turns(page: Any) -> int:
    return int(page.eval_on_selector_all("#messages .msg.user", "els => els.length"))


def test_the_keyboard_paths(browser: Any, server: Server, world: World) -> None:
    owner, token = signed_up(server)
    app = create(owner, "A landing page for a bakery", "html")
    assert chat(owner, app["id"], "A landing page for a bakery").ended[0] == "succeeded"  # type: ignore[index]
    page = new_page(browser)
    signed_in(page, server, token, f"#/apps/{app['id']}")
    page.wait_for_selector("#messages [data-turn='succeeded']")
    page.wait_for_selector("#preview[src]:not([hidden])", state="attached")
    asked = turns(page)

    # Shift+Enter breaks the line; an Enter inside an IME composition sends nothing.
    page.focus("#message")
    page.keyboard.type("first line")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type('Change the title to "Typed"')
    assert page.input_value("#message") == 'first line\nChange the title to "Typed"'
    page.eval_on_selector(
        "#message",
        """el => el.dispatchEvent(new KeyboardEvent("keydown",
             { key: "Enter", isComposing: true, bubbles: true, cancelable: true }))""",
    )
    page.wait_for_timeout(300)
    assert turns(page) == asked and page.input_value("#message").startswith("first line")
    assert "Enter sends" in page.inner_text("#send-hint")
    # Enter sends.
    page.keyboard.press("Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('#messages .msg.user').length > n", arg=asked
    )
    page.wait_for_selector("#messages [data-turn='running']", state="detached", timeout=TURN_MS)
    assert page.input_value("#message") == ""
    page.frame_locator("#preview").locator("h1", has_text="Typed").wait_for(timeout=TURN_MS)
    # Ctrl+Enter still sends too.
    page.fill("#message", 'Change the title to "Controlled"')
    page.focus("#message")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "n => document.querySelectorAll('#messages .msg.user').length > n", arg=asked + 1
    )
    page.wait_for_selector("#messages [data-turn='running']", state="detached", timeout=TURN_MS)

    # Esc leaves Edit mode; the toggle says whether it is pressed.
    assert page.get_attribute("#edit", "aria-pressed") == "false"
    page.click("#edit")
    assert page.get_attribute("#edit", "aria-pressed") == "true"
    page.keyboard.press("Escape")
    assert page.get_attribute("#edit", "aria-pressed") == "false"
    page.click("#edit")
    page.focus("#message")
    page.keyboard.press("Escape")
    assert page.get_attribute("#edit", "aria-pressed") == "false"

    # The tabs: arrows, Home and End move the selection and the focus; one tab stop.
    def selected() -> list[str]:
        return list(
            page.eval_on_selector_all(
                "[role=tab]",
                "ts => ts.filter(t => t.getAttribute('aria-selected') === 'true').map(t => t.id)",
            )
        )

    def focused() -> str:
        return str(page.evaluate("document.activeElement.id"))

    page.focus("#tab-preview")
    page.keyboard.press("ArrowRight")
    assert selected() == ["tab-code"] and focused() == "tab-code"
    assert page.is_visible("#code-view") and not page.is_visible("#preview-pane")
    page.keyboard.press("End")
    assert selected() == ["tab-usage"] and focused() == "tab-usage"
    page.keyboard.press("ArrowRight")  # wraps round
    assert selected() == ["tab-preview"] and focused() == "tab-preview"
    page.keyboard.press("ArrowLeft")
    assert selected() == ["tab-usage"]
    page.keyboard.press("Home")
    assert selected() == ["tab-preview"] and page.is_visible("#preview-pane")
    stops = page.eval_on_selector_all("[role=tab]", "ts => ts.map(t => t.tabIndex)")
    assert stops == [0, -1, -1, -1, -1, -1, -1]
    labelled = page.eval_on_selector_all(
        "[role=tabpanel]", "ps => ps.map(p => p.getAttribute('aria-labelledby'))"
    )
    assert labelled == [
        "tab-preview",
        "tab-code",
        "tab-versions",
        "tab-checks",
        "tab-data",
        "tab-images",
        "tab-usage",
    ]
    shot(page, "keyboard-1-tabs")
    assert page.errors == []


def test_the_counter_is_announced_only_near_the_limit(browser: Any, server: Server) -> None:
    owner, token = signed_up(server)
    owner.close()
    page = new_page(browser)
    signed_in(page, server, token)
    page.wait_for_selector("#prompt")
    page.focus("#prompt")
    page.keyboard.type("abc")
    assert page.query_selector(".counter[aria-live]") is None
    assert (page.text_content("#announcer") or "") == ""
    page.fill("#prompt", "x" * 7199)
    page.focus("#prompt")
    page.keyboard.type("y")
    said = str(page.text_content("#announcer"))
    assert "7200 of 8000" in said and "near the limit" in said
    page.keyboard.type("z")
    assert "7200 of 8000" in str(page.text_content("#announcer"))  # not again at 7201
    assert page.get_attribute("#announcer", "aria-live") == "polite"
