"""A headless Chromium confined to one origin: what covers and the runtime check share.

The page is untrusted: it is whatever the model wrote. The browser loads only the app's own
origin (``confined``): every other request is aborted through Playwright's routing
(loopback, private and link-local addresses included, since "other" is decided by origin,
not by address), WebSockets never connect, service workers are blocked, and underneath
Chromium resolves no host name but the app's (so nothing routing cannot see, such as a
preconnect, reaches anything either) and WebRTC is removed from every frame.

Chromium is driven through Playwright with the system browser, so nothing is downloaded at
run time. It runs with its own sandbox where the machine allows: it refuses to start it as
root, so as root (euid 0) it runs with ``--no-sandbox``; otherwise sandboxed, falling back to
``--no-sandbox`` with a warning only if the sandboxed browser cannot start (no user
namespaces). docs/security.md, "Origins and the console".
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

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


def playwright_installed() -> bool:
    """Whether Playwright's Python package can be imported (it is an optional dependency)."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return False
    return True
