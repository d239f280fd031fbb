"""The CSPs the API's origin sends, and the headers every response gets (http/headers.py)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
from collections.abc import MutableMapping
from typing import Any

from fastapi.openapi.docs import get_swagger_ui_html

from zerocode.http.headers import (
    API_POLICY,
    SecurityHeaders,
    console_policy,
    docs_policy,
    preview_sources,
)
from zerocode.publishing.pointers import SiteUrls


def directives(policy: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in policy.split("; ")}


def test_the_console_may_frame_previews_and_nothing_may_frame_it() -> None:
    local = directives(console_policy(SiteUrls("http://127.0.0.1:8001", "localhost:8001")))
    assert local["frame-ancestors"] == ["'none'"]
    assert local["frame-src"] == ["http://*.localhost:8001"]
    assert local["script-src"] == ["'self'"] and local["style-src"] == ["'self'"]
    assert local["img-src"] == ["'self'", "data:", "https:", "http://127.0.0.1:8001"]
    assert local["connect-src"] == ["'self'"] and local["object-src"] == ["'none'"]
    assert "'unsafe-inline'" not in str(local) and "'unsafe-eval'" not in str(local)


def test_the_console_policy_follows_the_sites_scheme_and_the_api_origin() -> None:
    custom = SiteUrls("https://d1.cloudfront.net", "apps.example.org")
    assert preview_sources(custom) == ["https://*.apps.example.org"]
    shared = SiteUrls("https://d1.cloudfront.net/")  # the path scheme: one origin for all
    assert preview_sources(shared) == ["https://d1.cloudfront.net"]
    policy = directives(console_policy(shared, ["https://api.example.org"]))
    assert policy["connect-src"] == ["'self'", "https://api.example.org"]


def test_the_docs_policy_allows_its_own_inline_script_by_hash_and_nothing_else() -> None:
    page = get_swagger_ui_html(
        openapi_url="/api/openapi.json",
        title="docs",
        swagger_js_url="/api/docs/assets/swagger-ui-bundle.js",
        swagger_css_url="/api/docs/assets/swagger-ui.css",
        swagger_favicon_url="/api/docs/assets/favicon.png",
    )
    html = bytes(page.body).decode()
    script = html.split("<script>")[1].split("</script>")[0]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    policy = directives(docs_policy(html))
    assert policy["script-src"] == ["'self'", f"'sha256-{digest}'"]
    assert policy["default-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"]
    assert policy["connect-src"] == ["'self'"]
    cdn_page = get_swagger_ui_html(openapi_url="/o", title="t")  # FastAPI's CDN (AWS)
    cdn = directives(docs_policy(bytes(cdn_page.body).decode()))
    assert "https://cdn.jsdelivr.net" in cdn["script-src"]
    assert "https://fastapi.tiangolo.com" in cdn["img-src"]


def run(app: Any, headers: list[tuple[bytes, bytes]] | None = None) -> list[tuple[bytes, bytes]]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope = {"type": "http", "method": "GET", "path": "/", "headers": []}
    asyncio.run(SecurityHeaders(app)(scope, receive, send))
    return list(sent[0]["headers"])


def test_every_response_gets_the_headers_and_its_own_csp_is_kept() -> None:
    def answering(headers: list[tuple[bytes, bytes]]) -> Any:
        async def app(scope: Any, receive: Any, send: Any) -> None:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await send({"type": "http.response.body", "body": b"{}"})

        return app

    plain = dict(run(answering([(b"content-type", b"application/json")])))
    assert plain[b"content-security-policy"] == API_POLICY.encode()
    assert plain[b"x-content-type-options"] == b"nosniff"
    assert plain[b"referrer-policy"] == b"no-referrer"
    own = run(answering([(b"Content-Security-Policy", b"default-src 'self'")]))
    assert [v for k, v in own if k.lower() == b"content-security-policy"] == [b"default-src 'self'"]
