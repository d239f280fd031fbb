"""Cover images: a screenshot of the published site in headless Chromium.

Optional by design: without Playwright's Python package or a Chromium executable there is
simply no cover, and a failed screenshot never fails the deploy that asked for it (the
caller logs it). Chromium is driven through Playwright with the system browser, so nothing
is downloaded at run time. Covers are files next to the builds, one per published build:
``covers/{appId}/{buildId}.png``, served by the sites server.

The page is untrusted: it is whatever the model wrote. The browser loads only the app's own
origin (``confined``): every other request is aborted through Playwright's routing
(loopback, private and link-local addresses included, since "other" is decided by origin,
not by address), WebSockets never connect, service workers are blocked, and underneath
Chromium resolves no host name but the app's (so nothing routing cannot see, such as a
preconnect, reaches anything either) and WebRTC is removed from every frame. A page that
reaches elsewhere still gets a cover: one that shows nothing from elsewhere.

Chromium runs with its own sandbox where the machine allows: it refuses to start it as
root, so as root (euid 0) it runs with ``--no-sandbox``; otherwise sandboxed, falling back to
``--no-sandbox`` with a warning only if the sandboxed browser cannot start (no user
namespaces). docs/security.md, "Origins and the console".
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from zerocode.apps.records import App
from zerocode.apps.workspace import PathRefused, check_app_id

if TYPE_CHECKING:
    from playwright.async_api import Browser, BrowserContext, Playwright, Route, WebSocketRoute

log = logging.getLogger(__name__)

VIEWPORT = {"width": 1200, "height": 750}
CHROMIUM_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]
NO_SANDBOX = "--no-sandbox"
# Run in every frame before the page's own scripts: peer connections send UDP straight from
# the network service, which routing never sees.
NO_WEBRTC = """for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection",
                     "RTCDataChannel", "WebTransport"]) {
  try { Object.defineProperty(window, name, {value: undefined, writable: false,
                                             configurable: false}); } catch (e) {}
}"""


def find_chromium(configured: str | None = None) -> str | None:
    if configured:
        return configured
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def origin_of(url: str) -> str:
    """``scheme://host:port`` of an absolute http(s) URL, the port always written."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) URL: {url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{parts.hostname.lower()}:{port}"


def sandboxed(euid: Callable[[], int] = os.geteuid) -> bool:
    """Whether to ask for Chromium's sandbox: always, except as root, where it cannot run."""
    return euid() != 0


def launch_args(url: str, sandbox: bool) -> list[str]:
    """Chromium's switches for loading ``url`` alone: no host name resolves but its own."""
    host = urlsplit(url).hostname or ""
    args = [*CHROMIUM_ARGS, f"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE {host}"]
    return args if sandbox else [NO_SANDBOX, *args]


async def launch(pw: Playwright, executable: str, url: str) -> Browser:
    """A headless Chromium for ``url``, sandboxed where the machine allows."""
    if not sandboxed():
        return await pw.chromium.launch(
            executable_path=executable,
            headless=True,
            args=launch_args(url, sandbox=False),
            chromium_sandbox=False,
        )
    try:
        return await pw.chromium.launch(
            executable_path=executable,
            headless=True,
            args=launch_args(url, sandbox=True),
            chromium_sandbox=True,
        )
    except Exception as exc:  # no user namespaces and no setuid helper here
        log.warning(
            "Chromium could not start its sandbox (%s); running it without one",
            str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
        )
        return await pw.chromium.launch(
            executable_path=executable,
            headless=True,
            args=launch_args(url, sandbox=False),
            chromium_sandbox=False,
        )


async def confined(
    browser: Browser,
    url: str,
    viewport: dict[str, int] | None = None,
    seen: list[str] | None = None,
) -> BrowserContext:
    """A browser context that loads only ``url``'s origin: anything else is aborted (and its
    URL appended to ``seen``, for tests and logs)."""
    own = origin_of(url)
    context = await browser.new_context(
        viewport=viewport or VIEWPORT,  # type: ignore[arg-type]
        service_workers="block",
        accept_downloads=False,
        java_script_enabled=True,
    )

    async def route(route: Route) -> None:
        target = route.request.url
        try:
            allowed = origin_of(target) == own
        except ValueError:  # data:, blob:, about: are never fetched over the network
            allowed = target.startswith(("data:", "blob:", "about:"))
        if allowed:
            await route.continue_()
            return
        if seen is not None:
            seen.append(target)
        await route.abort("blockedbyclient")

    async def websocket(ws: WebSocketRoute) -> None:
        if seen is not None:
            seen.append(ws.url)
        await ws.close(code=1008, reason="blocked")  # never connected to any server

    await context.route("**/*", route)
    await context.route_web_socket("**", websocket)
    await context.add_init_script(NO_WEBRTC)
    return context


class ChromiumCovers:
    def __init__(
        self, root: Path, sites_url: str, executable: str, timeout_ms: float = 15_000
    ) -> None:
        self.root, self.sites_url, self.executable = root, sites_url.rstrip("/"), executable
        self.timeout_ms = timeout_ms

    async def __call__(self, app: App) -> str | None:
        if not app.deploy_url or not app.deploy_build_id:
            return None
        target = self.root / check_app_id(app.id) / f"{check_app_id(app.deploy_build_id)}.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        await self.screenshot(app.deploy_url, target)
        return f"{self.sites_url}/covers/{app.id}/{app.deploy_build_id}.png"

    async def screenshot(self, url: str, target: Path) -> list[str]:
        """Save a screenshot of ``url`` to ``target``; what the page tried to reach elsewhere
        (aborted)."""
        from playwright.async_api import async_playwright

        blocked: list[str] = []
        async with async_playwright() as pw:
            browser = await launch(pw, self.executable, url)
            try:
                context = await confined(browser, url, seen=blocked)
                page = await context.new_page()
                await page.goto(url, wait_until="networkidle", timeout=self.timeout_ms)
                await page.screenshot(path=str(target), type="png")
            finally:
                await browser.close()
        if blocked:
            log.info("cover of %s: %d request(s) elsewhere aborted", url, len(blocked))
        return blocked

    def path(self, app_id: str, file: str) -> Path | None:
        """A cover file, for the sites server (None for anything that is not one)."""
        if not file.endswith(".png"):
            return None
        try:
            found = self.root / check_app_id(app_id) / f"{check_app_id(file[:-4])}.png"
        except PathRefused:
            return None
        return found if found.is_file() else None

    def delete_app(self, app_id: str) -> int:
        target = self.root / check_app_id(app_id)
        if not target.exists():
            return 0
        shutil.rmtree(target)
        return 1


def chromium_covers(root: Path, sites_url: str, executable: str | None) -> ChromiumCovers | None:
    """Covers if Playwright and a Chromium are installed, else None (no covers)."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return None
    found = find_chromium(executable)
    return ChromiumCovers(root, sites_url, found) if found else None
