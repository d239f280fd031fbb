"""A headless Chromium confined to one origin: what covers and the runtime check share.

The page is untrusted: it is whatever the model wrote. Two layers keep it to the app's own
origin. Structure first: Chromium runs in a box with no network at all, as an unprivileged
user, with its own sandbox (:mod:`.browser_box`), so nothing the browser opens by itself
(speculation rules' prefetch and prerender, preconnects, DNS) reaches anything, routing or
not; without bubblewrap there is no browser work. Then routing (``confined``): a request of
the app's own origin is fetched by Playwright on the platform's side (redirects are followed
there within the origin, never elsewhere) and handed to the page; every other request is
aborted (loopback, private and link-local addresses included, since "other" is decided by
origin, not by address), WebSockets never connect, service workers are blocked, and WebRTC
is removed from every frame.

Chromium is driven through Playwright with the system browser, so nothing is downloaded at
run time. docs/security.md, "Origins and the console".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from zerocode.adapters.local.browser_box import BoxProcess, browser_box, wrapper
from zerocode.adapters.local.served_files import DATA_API, Served, ServedFiles
from zerocode.data.backend import Backend
from zerocode.data.check_spaces import HEADER as CHECK_HEADER

if TYPE_CHECKING:
    from playwright.async_api import (
        APIResponse,
        Browser,
        BrowserContext,
        Playwright,
        Route,
        WebSocketRoute,
    )

log = logging.getLogger(__name__)

VIEWPORT = {"width": 1200, "height": 750}
CHROMIUM_ARGS = ["--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]
NO_SANDBOX = "--no-sandbox"  # never passed: Chromium keeps its sandbox in the box
FETCH_TIMEOUT_MS = 15_000  # one request of the app's own origin, on the platform's side
MAX_REDIRECTS = 5  # followed within the app's own origin
LAUNCH_TIMEOUT_MS = 20_000
# The kept browser's contexts each load one origin (every other is aborted) and never share
# a renderer process (Chromium keeps processes per context), so site isolation has nothing
# to separate within one; with it on, a check's first navigation left the renderer opened
# ahead for its about:blank and started another (issue 40: tens of ms of every check).
ONE_SITE_PER_CONTEXT = "--disable-site-isolation-trials"
# Run in every frame before the page's own scripts: peer connections send UDP straight from
# the network service, which routing never sees (the box has no network either).
NO_WEBRTC = """for (const name of ["RTCPeerConnection", "webkitRTCPeerConnection",
                     "RTCDataChannel", "WebTransport"]) {
  try { Object.defineProperty(window, name, {value: undefined, writable: false,
                                             configurable: false}); } catch (e) {}
}"""


# Chromium's headless shell first (Debian's chromium-headless-shell, Chrome's
# chrome-headless-shell; what Playwright itself runs headless): the same Blink and V8
# without the full browser's window machinery, which the platform's checks never show. A
# fresh context and page cost its browser process ~22 CPU-ms against ~140 for the full
# browser in its headless mode; a Vue round of checks took 0.44 s instead of 0.58
# (docs/benchmarks.md, "Preview in a second").
BROWSERS = (
    "chromium-headless-shell",
    "chrome-headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
)


def find_chromium(configured: str | None = None) -> str | None:
    """The browser the platform checks pages in: ``configured`` (ZEROCODE_CHROMIUM_PATH),
    else the first of :data:`BROWSERS` on PATH."""
    if configured:
        return configured
    for name in BROWSERS:
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


def launch_args(url: str | None = None) -> list[str]:
    """Chromium's switches: no host name resolves (the box has no network either; the app's
    own origin reaches the page through routing, fetched on the platform's side). With
    ``url``, its host name is left to resolve: the AWS build's browser, which has no box and
    loads that one URL (zerocode.buildbox.browser)."""
    rules = "MAP * ~NOTFOUND"
    if url is not None:
        rules += f", EXCLUDE {urlsplit(url).hostname or ''}"
    return [*CHROMIUM_ARGS, f"--host-resolver-rules={rules}"]


async def launch(pw: Playwright, executable: str, url: str | None = None) -> Browser:
    """A headless Chromium in its box, sandboxed; RuntimeError without a box. One browser
    serves any number of apps, each in a context of its own (``url`` is not needed: no host
    name resolves in there; accepted for older callers)."""
    return (await launch_boxed(pw, executable))[0]


async def launch_boxed(pw: Playwright, executable: str) -> tuple[Browser, BoxProcess | None]:
    """:func:`launch`, and its box (killing it ends every process in there)."""
    box, why = browser_box()
    if box is None:
        raise RuntimeError(f"the browser is {why}")
    with wrapper(box, executable) as boxed:
        browser = await pw.chromium.launch(
            executable_path=boxed,
            headless=True,
            args=[*launch_args(), ONE_SITE_PER_CONTEXT],
            chromium_sandbox=True,
            timeout=LAUNCH_TIMEOUT_MS,
            # The server's Ctrl-C (the terminal's, sent to its process group) or SIGTERM is
            # the server's to handle: it keeps the browser until its last turn is checked.
            handle_sigint=False,
            handle_sigterm=False,
            handle_sighup=False,
        )
        return browser, BoxProcess.of(boxed)


@dataclass(frozen=True)
class Scratch:
    """A check's own data space (zerocode/data/check_spaces.py): the header value naming it
    on the context's data API requests, and what deletes it once the context is closed."""

    header: str
    done: Callable[[], None]


def scratch_spaces(backend: Backend) -> Callable[[str], Scratch]:
    """A new scratch data space of an app per context, deleted when the context closes."""

    def scratch(app_id: str) -> Scratch:
        space, header = backend.check_spaces.new(app_id)
        return Scratch(header, lambda: backend.clear_space(app_id, space))

    return scratch


def for_app(
    made: Callable[[str], Scratch] | None, app_id: str
) -> Callable[[], Scratch | None] | None:
    """What makes the scratch data space of a context opened for ``app_id``'s check."""
    return None if made is None else (lambda: made(app_id))


class Confinement:
    """The routing of one browser context: only ``own``'s origin is fetched (on the platform's
    side), everything else is aborted and its URL appended to ``seen`` (for tests and logs).
    Until it is aimed at an app (a context opened ahead of need), nothing is fetched at all."""

    def __init__(self) -> None:
        self.own: str | None = None
        self.seen: list[str] | None = None
        self.files: ServedFiles | None = None
        self.scratch: Scratch | None = None

    def aim(
        self,
        url: str,
        seen: list[str] | None = None,
        files: ServedFiles | None = None,
        scratch: Scratch | None = None,
    ) -> None:
        """Confine the context to ``url``'s origin, once: a context serves one app only
        (``files``: that app's files read once for a suite, :mod:`.served_files`;
        ``scratch``: the data space its requests to the app's data API use)."""
        if self.own is not None:
            raise RuntimeError("a browser context serves one app only")
        self.own, self.seen, self.files, self.scratch = origin_of(url), seen, files, scratch

    def finish(self) -> None:
        """The context is closed: its scratch data space goes (best effort, logged)."""
        scratch, self.scratch = self.scratch, None
        if scratch is None:
            return
        try:
            scratch.done()
        except Exception:
            log.exception("a check's scratch data space was not deleted")

    def blocked(self, target: str) -> None:
        if self.seen is not None:
            self.seen.append(target)

    async def route(self, route: Route) -> None:
        target = route.request.url
        try:
            mine = self.own is not None and origin_of(target) == self.own
        except ValueError:  # data:, blob:, about: are never fetched over the network
            if target.startswith(("data:", "blob:", "about:")):
                await route.continue_()
                return
            mine = False
        if not mine or self.own is None:
            self.blocked(target)
            await route.abort("blockedbyclient")
            return
        own = self.own
        try:
            if self.files is None:
                response: APIResponse | Served | None = await _fetch(
                    route, target, own, self.blocked, self.scratch
                )
            else:
                response = await self.files.get(
                    route.request.method,
                    target,
                    lambda: _fetch(route, target, own, self.blocked, self.scratch),
                )
        except Exception:  # the sites server does not answer, or the context closed
            with contextlib.suppress(Exception):
                await route.abort("connectionfailed")
            return
        with contextlib.suppress(Exception):  # the page went away meanwhile
            if response is None:
                await route.abort("blockedbyclient")
            elif isinstance(response, Served):
                await route.fulfill(
                    status=response.status, headers=response.headers, body=response.body
                )
            else:
                await route.fulfill(response=response)

    async def websocket(self, ws: WebSocketRoute) -> None:
        self.blocked(ws.url)
        await ws.close(code=1008, reason="blocked")  # never connected to any server


async def confined_context(
    browser: Browser, viewport: dict[str, int] | None = None
) -> tuple[BrowserContext, Confinement]:
    """A fresh context of ``browser`` (its own cookies, storage, cache; service workers
    blocked) whose every request goes through a :class:`Confinement` not yet aimed."""
    context = await browser.new_context(
        viewport=viewport or VIEWPORT,  # type: ignore[arg-type]
        service_workers="block",
        accept_downloads=False,
        java_script_enabled=True,
    )
    confinement = Confinement()
    await asyncio.gather(  # at once: a round trip saved each; all in place before any page
        context.route("**/*", confinement.route),
        context.route_web_socket("**", confinement.websocket),
        context.add_init_script(NO_WEBRTC),
    )
    return context, confinement


async def confined(
    browser: Browser,
    url: str,
    viewport: dict[str, int] | None = None,
    seen: list[str] | None = None,
) -> BrowserContext:
    """A browser context that loads only ``url``'s origin, fetched on the platform's side:
    anything else is aborted (and its URL appended to ``seen``, for tests and logs)."""
    context, confinement = await confined_context(browser, viewport)
    confinement.aim(url, seen)
    return context


async def _fetch(
    route: Route,
    target: str,
    own: str,
    blocked: Callable[[str], None],
    scratch: Scratch | None = None,
) -> APIResponse | None:
    """``target`` of the app's own origin from the platform's side, redirects followed here
    within the origin (Playwright does not route the request a fulfilled redirect leads to,
    and the box has no network for it); None when one leads elsewhere, or loops."""
    # The page's headers; its cookies too for the data API (they are its session), asked
    # of the browser only there: a file of the app is never fetched with credentials.
    data_api = urlsplit(target).path.startswith(DATA_API)
    sent = await route.request.all_headers() if data_api else dict(route.request.headers)
    for _ in range(MAX_REDIRECTS + 1):
        response = await route.fetch(
            max_redirects=0, timeout=FETCH_TIMEOUT_MS, **_direct(target, sent, scratch)
        )
        location = response.headers.get("location")
        if not (300 <= response.status < 400 and location):
            return response
        target = urljoin(target, location)
        try:
            mine = origin_of(target) == own
        except ValueError:
            mine = False
        if not mine:
            blocked(target)
            return None
    return None  # a redirect loop: not loaded


def _direct(target: str, sent: dict[str, str], scratch: Scratch | None) -> dict[str, Any]:
    """``route.fetch``'s URL and headers: the page's own, where the platform's check header
    is the platform's alone (a scratch data space's, on a request of the data API; never a
    value the page set); a ``*.localhost`` name is loopback (RFC 6761), which the platform's
    resolver may not know, so it is asked for at 127.0.0.1 with its Host."""
    parts = urlsplit(target)
    headers = {k: v for k, v in sent.items() if k.lower() != CHECK_HEADER}
    if scratch is not None and parts.path.startswith(DATA_API):
        headers[CHECK_HEADER] = scratch.header
    host = (parts.hostname or "").lower()
    if host != "localhost" and not host.endswith(".localhost"):
        return {"url": target, "headers": headers}
    loopback = urlunsplit(parts._replace(netloc=f"127.0.0.1:{parts.port or 80}"))
    return {"url": loopback, "headers": {**headers, "host": parts.netloc}}


def availability(executable: str | None) -> str:
    """What the platform says about its browser work (the banner, /api/health): the box it
    runs in, or why there is none (then no cover is taken and no runtime check runs)."""
    if not playwright_installed():
        return "off: Playwright's Python package is not installed"
    if find_chromium(executable) is None:
        return "off: no Chromium (apt-get install chromium)"
    return browser_box()[1]


def usable() -> bool:
    """Whether browser work may run here: Playwright's package and the box (never without)."""
    return playwright_installed() and browser_box()[0] is not None


def playwright_installed() -> bool:
    """Whether Playwright's Python package can be imported (it is an optional dependency)."""
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return False
    return True
