"""A published site asked for a file as a browser would, for the publish report (issue 44,
point 5): a ``*.localhost`` site at 127.0.0.1 with its Host, accepting brotli and gzip, the
request saying it is the platform's; no redirect followed, no body read; a site that does
not answer is None."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading

from zerocode.adapters.local.site_answers import USER_AGENT, HttpSiteAnswers
from zerocode.publishing.publish_report import Answer


def test_a_localhost_site_is_asked_at_loopback_with_its_host() -> None:
    seen: list[dict[str, str]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append({k.lower(): v for k, v in self.headers.items()} | {"path": self.path})
            if self.path == "/moved":
                self.send_response(301)
                self.send_header("Location", "http://elsewhere.example/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = b"x" * 100_000
            self.send_response(200)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Encoding", "br")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    answers = HttpSiteAnswers()
    try:
        got = asyncio.run(answers.get(f"http://abc123.localhost:{port}/assets/a.js"))
        moved = asyncio.run(answers.get(f"http://abc123.localhost:{port}/moved"))
    finally:
        server.shutdown()
        server.server_close()
    assert got is not None and got.status == 200
    assert got.headers["cache-control"] == "no-cache" and got.headers["content-encoding"] == "br"
    assert moved == Answer(301, moved.headers if moved else {}) and len(seen) == 2  # not followed
    asked = seen[0]
    assert asked["host"] == f"abc123.localhost:{port}" and asked["path"] == "/assets/a.js"
    assert asked["accept-encoding"] == "br, gzip" and asked["user-agent"] == USER_AGENT
    assert "zerocode-" in USER_AGENT


def test_a_site_that_does_not_answer_is_none() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    answers = HttpSiteAnswers(timeout=2)
    assert asyncio.run(answers.get(f"http://abc123.localhost:{port}/")) is None
    assert asyncio.run(answers.get("ftp://abc123.localhost/")) is None
