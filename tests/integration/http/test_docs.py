"""/api/docs works offline: Swagger UI's files are served by the API itself, not a CDN."""

from __future__ import annotations

import re

from tests.integration.http.conftest import Api


def test_the_docs_page_references_only_local_files_and_they_are_served(api: Api) -> None:
    page = api.client.get("/api/docs")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "cdn.jsdelivr" not in html and "unpkg" not in html and "tiangolo" not in html
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html)
    assert urls and all(u.startswith("/api/") for u in urls), urls
    assert "'/api/openapi.json'" in html or '"/api/openapi.json"' in html
    expected = {".js": "javascript", ".css": "text/css", ".png": "image/png"}
    served = set()
    for url in urls:
        kind = next(v for k, v in expected.items() if url.endswith(k))
        got = api.client.get(url)
        assert got.status_code == 200, url
        assert kind in got.headers["content-type"], (url, got.headers["content-type"])
        assert len(got.content) > 1000, url
        served.add(kind)
    assert {"javascript", "text/css"} <= served
    assert "SwaggerUIBundle" in api.client.get(next(u for u in urls if u.endswith(".js"))).text


def test_the_docs_route_is_not_in_the_document(api: Api) -> None:
    paths = api.client.get("/api/openapi.json").json()["paths"]
    assert not any(p.startswith("/api/docs") for p in paths)
