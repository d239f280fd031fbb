"""Security headers of the API's origin: the API, its docs page and (locally) the console.

Every response gets ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``
and a Content-Security-Policy with ``frame-ancestors 'none'`` (no page may frame the
console, the docs or an API answer). The CSP is per kind of page:

- the API: ``default-src 'none'`` (JSON is never a document that loads anything);
- the console (:func:`console_policy`): its own scripts and styles only, no inline script,
  the previews' origins as the only frames, images from itself, ``data:``, the covers'
  origin and ``https:`` (an admin may set a cover URL), fetches to its own origin;
- the docs (:func:`docs_policy`): Swagger UI's files and the one inline script that starts
  it, by hash.

A response that already carries a CSP (the console's, the docs') keeps it. The sites
origin (``http/sites.py``) is not covered: the console frames previews, so they must not
refuse frames.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from zerocode.publishing.pointers import SiteUrls

API_POLICY = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
REFERRER_POLICY = "no-referrer"


def served_over_https(request: Request) -> bool:
    """Whether the browser reached us over https: the request's own scheme, or the scheme a
    proxy in front says it was (API Gateway, CloudFront, a local TLS proxy). Used only to
    mark the session cookie ``Secure``: a client lying about it can only keep its own
    cookie from being sent over plain http."""
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def origin_of(url: str) -> str | None:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else None


def preview_sources(urls: SiteUrls) -> list[str]:
    """CSP sources matching every preview: ``{scheme}://*.{domain}`` with per-app origins,
    else the one origin every app shares."""
    if urls.per_app_origins:
        return [f"{urls.scheme}://*.{urls.domain}"]
    base = origin_of(urls.base)
    return [base] if base else []


def console_policy(urls: SiteUrls, api_origins: Iterable[str] = ()) -> str:
    """The console's CSP. ``api_origins``: where the console's config.js points the API when
    it is not the console's own origin."""
    covers = origin_of(urls.base)
    return policy(
        {
            "default-src": ["'self'"],
            "script-src": ["'self'"],
            "style-src": ["'self'"],
            "img-src": ["'self'", "data:", "https:", *([covers] if covers else [])],
            "frame-src": preview_sources(urls),
            "connect-src": ["'self'", *api_origins],
            "object-src": ["'none'"],
            "base-uri": ["'none'"],
            "form-action": ["'self'"],
            "frame-ancestors": ["'none'"],
        }
    )


_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)
_ASSET = re.compile(r"""(?:src|href)=["']([^"']+)["']""")


def docs_policy(html: str) -> str:
    """The CSP of a Swagger UI page: its inline start-up script by hash, its assets' origins
    (none but ours locally; the CDN on AWS), styles inline too (Swagger UI sets some)."""
    hashes = [
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in _INLINE_SCRIPT.findall(html)
    ]
    remote = sorted({o for u in _ASSET.findall(html) if (o := origin_of(u)) is not None})
    return policy(
        {
            "default-src": ["'none'"],
            "script-src": ["'self'", *remote, *hashes],
            "style-src": ["'self'", "'unsafe-inline'", *remote],
            "img-src": ["'self'", "data:", *remote],
            "connect-src": ["'self'"],
            "base-uri": ["'none'"],
            "form-action": ["'none'"],
            "frame-ancestors": ["'none'"],
        }
    )


def policy(directives: dict[str, list[str]]) -> str:
    return "; ".join(
        f"{name} {' '.join(dict.fromkeys(sources))}"
        for name, sources in directives.items()
        if sources
    )


class SecurityHeaders:
    """Pure ASGI middleware (safe for streaming): adds the headers above to every response
    that has not set them itself; ``csp`` is the policy for those that have none."""

    def __init__(self, app: ASGIApp, csp: str = API_POLICY) -> None:
        self.app, self.headers = app, _defaults(csp)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                add_missing(message, self.headers)
            await send(message)

        await self.app(scope, receive, send_with_headers)


class WithPolicy:
    """Wraps an ASGI app (the console's static files) so its responses carry ``csp``."""

    def __init__(self, app: ASGIApp, csp: str) -> None:
        self.app, self.headers = app, _defaults(csp)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_with_policy(message: Message) -> None:
            if message["type"] == "http.response.start":
                add_missing(message, self.headers)
            await send(message)

        await self.app(scope, receive, send_with_policy if scope["type"] == "http" else send)


def _defaults(csp: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-security-policy", csp.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", REFERRER_POLICY.encode()),
    ]


def add_missing(message: MutableMapping[str, Any], headers: list[tuple[bytes, bytes]]) -> None:
    present = {bytes(name).lower() for name, _ in message.get("headers") or []}
    message["headers"] = [
        *(message.get("headers") or []),
        *((n, v) for n, v in headers if n not in present),
    ]
