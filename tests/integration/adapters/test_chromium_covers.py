"""Cover screenshots load only the app's own origin (issue 11, point 7), in real headless
Chromium: a hostile page that reaches for a loopback service in every way a page can (img,
iframe, fetch, XHR, script, stylesheet, preconnect, form, WebSocket, EventSource, beacon,
worker, service worker, WebRTC) still gets a cover, the service sees not one connection or
packet, and the cover shows nothing of its secret colour."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import os
import socket
import struct
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import shared_loop
from zerocode.adapters.local.chromium_covers import (
    NO_SANDBOX,
    ChromiumCovers,
    find_chromium,
    launch_args,
    origin_of,
)

SECRET = (255, 0, 255)  # what the loopback service paints everything it serves with
OWN = (0, 160, 0)  # what the app's own stylesheet paints its banner with


def chromium_or_skip() -> str:
    pytest.importorskip("playwright")
    found = find_chromium()  # the platform's own choice: its headless shell where there is one
    if found is None:
        if os.environ.get("ZEROCODE_REQUIRE_CHROMIUM"):
            raise RuntimeError("ZEROCODE_REQUIRE_CHROMIUM is set but chromium is not installed")
        pytest.skip("chromium is not installed")
    return found


@dataclass
class Secret:
    """A loopback service with a secret: counts every TCP connection and UDP packet."""

    tcp: socket.socket = field(default_factory=socket.socket)
    udp: socket.socket = field(
        default_factory=lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    )
    connections: int = 0
    packets: int = 0

    v6: socket.socket | None = None

    def start(self) -> None:
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.udp.bind(("127.0.0.1", self.port))  # the same port number, for STUN
        with contextlib.suppress(OSError):  # *.localhost may resolve to ::1 too
            self.v6 = socket.socket(socket.AF_INET6)
            self.v6.bind(("::1", self.port))
            self.v6.listen(16)
        for sock in (self.tcp, self.v6):
            if sock is not None:
                threading.Thread(target=self._accept, args=(sock,), daemon=True).start()
        threading.Thread(target=self._receive, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.tcp.getsockname()[1])

    def _accept(self, sock: socket.socket) -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            self.connections += 1
            body = b"<body style='background:#ff00ff'>SECRET</body>"
            conn.sendall(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\n"
                b"access-control-allow-origin: *\r\ncontent-length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            conn.close()

    def _receive(self) -> None:
        while True:
            try:
                self.udp.recvfrom(2048)
            except OSError:
                return
            self.packets += 1

    def close(self) -> None:
        for sock in (self.tcp, self.udp, self.v6):
            if sock is not None:
                sock.close()


def hostile_page(secret: int) -> str:
    loop = f"127.0.0.1:{secret}"
    return f"""<!doctype html><html><head>
<link rel="stylesheet" href="/own.css">
<link rel="preconnect" href="http://{loop}">
<link rel="dns-prefetch" href="http://secret.example">
<link rel="stylesheet" href="http://{loop}/style.css">
<script src="http://localhost:{secret}/script.js"></script>
</head><body>
<h1 class="own">An app with a secret neighbour</h1>
<img src="http://{loop}/image.png" width="300" height="200">
<img src="http://169.254.169.254/latest/meta-data/iam/" width="10" height="10">
<img src="http://10.0.0.1/router.png" width="10" height="10">
<iframe src="http://{loop}/frame" width="300" height="200"></iframe>
<iframe src="http://secret.localhost:{secret}/frame" width="300" height="200"></iframe>
<iframe name="sink" width="300" height="200"></iframe>
<form id="f" action="http://{loop}/form" method="post" target="sink">
  <input name="x" value="y"></form>
<div id="out"></div>
<script>
  const paint = (t) => {{ document.getElementById("out").innerHTML += t; }};
  fetch("http://{loop}/fetch").then(r => r.text()).then(paint).catch(() => {{}});
  fetch("http://[::1]:{secret}/v6").then(r => r.text()).then(paint).catch(() => {{}});
  const x = new XMLHttpRequest(); x.open("GET", "http://{loop}/xhr");
  x.onload = () => paint(x.responseText); x.send();
  document.getElementById("f").submit();
  try {{ new WebSocket("ws://{loop}/ws"); }} catch (e) {{}}
  try {{ new EventSource("http://{loop}/events"); }} catch (e) {{}}
  navigator.sendBeacon("http://{loop}/beacon", "x");
  new Worker(URL.createObjectURL(new Blob(
    ["fetch('http://{loop}/worker').then(r => r.text()).then(t => postMessage(t))"])))
    .onmessage = (e) => paint(e.data);
  if (navigator.serviceWorker) navigator.serviceWorker.register("/sw.js").catch(() => {{}});
  try {{
    const pc = new RTCPeerConnection({{iceServers: [{{urls: "stun:{loop}"}}]}});
    pc.createDataChannel("x"); pc.createOffer().then(o => pc.setLocalDescription(o));
  }} catch (e) {{}}
  try {{
    const frame = document.createElement("iframe"); document.body.appendChild(frame);
    const pc = new frame.contentWindow.RTCPeerConnection(
      {{iceServers: [{{urls: "stun:{loop}"}}]}});
    pc.createDataChannel("y"); pc.createOffer().then(o => pc.setLocalDescription(o));
  }} catch (e) {{}}
</script></body></html>"""


@dataclass
class App:
    """The app's own origin (the sites server's part): its pages, redirects, and a log of what
    was asked for."""

    pages: dict[str, str]
    host: str = "app1.localhost"
    redirects: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    server: http.server.ThreadingHTTPServer | None = None

    def start(self) -> None:
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                if self.path in outer.redirects:
                    self.send_response(302)
                    self.send_header("location", outer.redirects[self.path])
                    self.send_header("content-length", "0")
                    self.end_headers()
                    return
                body = outer.pages.get(self.path.split("?")[0])
                if body is None:
                    self.send_error(404)
                    return
                kind = {"css": "text/css", "js": "text/javascript"}.get(
                    self.path.rsplit(".", 1)[-1], "text/html"
                )
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body.encode())))
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://{self.host}:{self.server.server_address[1]}/"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


@pytest.fixture
def secret() -> Iterator[Secret]:
    service = Secret()
    service.start()
    yield service
    service.close()


OWN_CSS = "h1.own { background: rgb(0,160,0); height: 120px; }"


def serve(page: str) -> App:
    app = App(
        {"/": page, "/own.css": OWN_CSS, "/sw.js": "self.addEventListener('fetch', () => {});"}
    )
    app.start()
    return app


def pixels(png: bytes) -> Iterator[tuple[int, int, int]]:
    """Every pixel of an 8-bit RGB or RGBA PNG, as (r, g, b)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos : pos + 8])
        data = png[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", data[:10])
            assert depth == 8 and colour in (2, 6), (depth, colour)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += data
    raw, stride, prev, at = zlib.decompress(idat), width * channels, bytearray(), 0
    prev = bytearray(stride)
    for _ in range(height):
        kind_, line = raw[at], bytearray(raw[at + 1 : at + 1 + stride])
        at += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b, c = prev[x], (prev[x - channels] if x >= channels else 0)
            if kind_ == 1:
                line[x] = (line[x] + a) & 255
            elif kind_ == 2:
                line[x] = (line[x] + b) & 255
            elif kind_ == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind_ == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, channels):
            yield line[x], line[x + 1], line[x + 2]
        prev = line


def near(pixel: tuple[int, int, int], colour: tuple[int, int, int]) -> bool:
    return all(abs(p - c) <= 8 for p, c in zip(pixel, colour, strict=True))


def test_a_page_that_reaches_elsewhere_gets_a_cover_of_its_own_origin_only(
    tmp_path: Path, secret: Secret
) -> None:
    covers = ChromiumCovers(tmp_path, "http://127.0.0.1:9", chromium_or_skip())
    app = serve(hostile_page(secret.port))
    try:
        # On the process's shared loop: the kept browser the other checks' tests use
        # (tests/shared_loop.py), kept alive meanwhile, each cover in a fresh context.
        blocked = shared_loop.run(covers.screenshot(app.url, tmp_path / "cover.png"))
        shared_loop.run(asyncio.sleep(1.0))  # anything still in flight would arrive by now
    finally:
        app.stop()
    assert (secret.connections, secret.packets) == (0, 0)
    loop = f"127.0.0.1:{secret.port}"
    for reached in (
        f"http://{loop}/image.png",
        f"http://{loop}/frame",
        f"http://{loop}/fetch",
        f"http://{loop}/xhr",
        f"http://{loop}/style.css",
        f"http://{loop}/form",
        f"ws://{loop}/ws",
        f"http://{loop}/events",
        f"http://{loop}/beacon",
        f"http://{loop}/worker",
        f"http://localhost:{secret.port}/script.js",
        f"http://secret.localhost:{secret.port}/frame",
        "http://169.254.169.254/latest/meta-data/iam/",
        "http://10.0.0.1/router.png",
    ):
        assert reached in blocked, (reached, blocked)
    assert "/own.css" in app.requests  # the app's own origin still loads
    assert "/sw.js" not in app.requests  # service workers are blocked outright
    colours = list(pixels((tmp_path / "cover.png").read_bytes()))
    assert sum(near(p, OWN) for p in colours) > 10_000  # the app's banner is there
    assert not any(near(p, SECRET) for p in colours)  # nothing of the secret is


def test_a_page_that_navigates_away_still_shows_nothing_from_elsewhere(
    tmp_path: Path, secret: Secret
) -> None:
    covers = ChromiumCovers(tmp_path, "http://127.0.0.1:9", chromium_or_skip(), timeout_ms=10_000)
    app = serve(f"<script>location = 'http://127.0.0.1:{secret.port}/away';</script>")
    try:
        with contextlib.suppress(Exception):  # no cover is a fine outcome too
            shared_loop.run(covers.screenshot(app.url, tmp_path / "cover.png"))
    finally:
        app.stop()
    assert (secret.connections, secret.packets) == (0, 0)
    if (tmp_path / "cover.png").exists():
        assert not any(near(p, SECRET) for p in pixels((tmp_path / "cover.png").read_bytes()))


def test_chromium_always_keeps_its_sandbox() -> None:
    """Root or not: in its box it runs unprivileged (test_browser_confinement.py)."""
    url = "http://abc.localhost:8001/"
    assert NO_SANDBOX not in launch_args(url)
    assert "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE abc.localhost" in launch_args(url)


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("http://abc.localhost:8001/x", "http://abc.localhost:8001"),
        ("https://ABC.sites.example.com/", "https://abc.sites.example.com:443"),
        ("http://127.0.0.1/", "http://127.0.0.1:80"),
    ],
)
def test_origin_of(url: str, origin: str) -> None:
    assert origin_of(url) == origin


@pytest.mark.parametrize("url", ["data:text/html,x", "file:///etc/passwd", "about:blank"])
def test_origin_of_refuses_what_is_not_http(url: str) -> None:
    with pytest.raises(ValueError):
        origin_of(url)
