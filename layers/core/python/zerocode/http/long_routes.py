"""The routes that may take minutes: they follow a turn or wait for a build (issue 42, point 2).

On AWS a REST API integration is cut at 29 s unless it streams with a longer timeout; these
routes get the chat's 15-minute streaming integration (infra/zerocode_infra/api.py reads
this module), so nothing a builder does is cut by a limit of the platform's. Each such route
is marked in OpenAPI with ``x-zerocode-waits`` (``turn``: it follows a turn's events;
``build``: it answers once a build or a checks run has finished), so clients learn it too;
a test keeps the marks and this list one and the same (tests/integration/http/
test_long_routes.py). Kept free of imports: the CDK app imports it.

A route that starts a build without waiting for it (``POST …/deploy``: 202, then polled)
is not here, by design (docs/api.md, "Long requests").
"""

from __future__ import annotations

WAITS = "x-zerocode-waits"
APP = "/api/apps/{app_id}"
LONG_ROUTES: frozenset[tuple[str, str]] = frozenset(
    {
        ("POST", f"{APP}/chat"),
        ("GET", f"{APP}/turns/{{turn}}/events"),
        ("POST", f"{APP}/preview"),
        ("POST", f"{APP}/edits/text"),
        ("POST", f"{APP}/edits/image"),
        ("PUT", f"{APP}/files/{{path}}"),
        ("POST", f"{APP}/assets"),
        ("POST", f"{APP}/versions/{{version_id}}/restore"),
        ("POST", f"{APP}/checks/run"),
    }
)


def waits(what: str, **extra: object) -> dict[str, object]:
    """A route's ``openapi_extra``: it follows a turn (``turn``) or waits for a build
    (``build``)."""
    return {WAITS: what, **extra}
