"""The routes that may take minutes are marked so (``x-zerocode-waits`` in OpenAPI) and are
exactly the ones the AWS stack gives the 15-minute streaming integration (issue 42, point 2:
zerocode/http/long_routes.py; tests/infra/test_stack.py checks the stack's side)."""

from __future__ import annotations

from typing import Any

from tests.integration.http.conftest import Api
from zerocode.http.long_routes import LONG_ROUTES, WAITS


def test_the_marked_routes_are_the_long_routes(api: Api) -> None:
    doc: dict[str, Any] = api.client.app.openapi()  # type: ignore[attr-defined]
    marked = {
        (method.upper(), path): operation[WAITS]
        for path, methods in doc["paths"].items()
        for method, operation in methods.items()
        if WAITS in operation
    }
    assert set(marked) == LONG_ROUTES
    assert set(marked.values()) == {"turn", "build"}
    following = {route for route, what in marked.items() if what == "turn"}
    assert following == {
        ("POST", "/api/apps/{app_id}/chat"),
        ("GET", "/api/apps/{app_id}/turns/{turn}/events"),
    }
    # A deploy answers at once (202) and is polled: by design not a long route.
    assert ("POST", "/api/apps/{app_id}/deploy") not in LONG_ROUTES
