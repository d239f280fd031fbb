"""The published site asked for a file as a visitor's browser would, for the publish report's
cache and encoding checks (zerocode/publishing/site_served.py): over HTTP, accepting brotli
and gzip, only the status and headers read (the body is never downloaded). A ``*.localhost``
site is asked for at 127.0.0.1 with its Host (RFC 6761: it is loopback; the machine's
resolver may not say so). No redirect is followed. The request says it is the platform's
(``zerocode-`` in its User-Agent), so a site's visits count none of them."""

from __future__ import annotations

import httpx

from zerocode.publishing.publish_report import Answer

USER_AGENT = "zerocode-publish-report/1 (bot; the platform's check of a published site)"
TIMEOUT_SECONDS = 5.0


class HttpSiteAnswers:
    """:class:`zerocode.publishing.publish_report.SiteAnswers` over httpx."""

    def __init__(self, timeout: float = TIMEOUT_SECONDS) -> None:
        self.timeout = timeout

    async def get(self, url: str) -> Answer | None:
        try:
            target, host = _direct(url)
        except ValueError:
            return None
        headers = {"Accept-Encoding": "br, gzip", "User-Agent": USER_AGENT}
        if host is not None:
            headers["Host"] = host
        try:
            async with (
                httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client,
                client.stream("GET", target, headers=headers) as response,
            ):
                return Answer(
                    response.status_code, {k.lower(): v for k, v in response.headers.items()}
                )
        except httpx.HTTPError:
            return None


def _direct(url: str) -> tuple[str, str | None]:
    """The URL to connect to, and the Host to send when it is not the URL's own."""
    parts = httpx.URL(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"not an http(s) URL: {url!r}")
    host = parts.host.lower()
    if host != "localhost" and not host.endswith(".localhost"):
        return url, None
    netloc = f"{host}:{parts.port}" if parts.port else host
    return str(parts.copy_with(host="127.0.0.1")), netloc
