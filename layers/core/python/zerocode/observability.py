"""Structured JSON logs and CloudWatch metrics (Powertools), the same locally and on Lambda.

Every log line carries the request id and, where known, the user, app and turn,
from context variables set by the API and the engine. Metrics are written as
Embedded Metric Format lines: CloudWatch turns them into metrics on Lambda, and
locally they are simply part of the log.
"""

from __future__ import annotations

import logging
import re
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from contextvars import ContextVar
from typing import Any

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter
from aws_lambda_powertools.metrics import MetricUnit

SERVICE = "zerocode"
REQUEST_ID: ContextVar[str | None] = ContextVar("request_id", default=None)
USER_ID: ContextVar[str | None] = ContextVar("user_id", default=None)
APP_ID: ContextVar[str | None] = ContextVar("app_id", default=None)
TURN: ContextVar[int | None] = ContextVar("turn", default=None)
_VARS: dict[str, ContextVar[Any]] = {
    "request_id": REQUEST_ID,
    "user_id": USER_ID,
    "app_id": APP_ID,
    "turn": TURN,
}
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")

metrics = Metrics(namespace=SERVICE, service=SERVICE)
log = logging.getLogger("zerocode.access")


class _Context(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        for key, var in _VARS.items():
            value = var.get()
            if value is not None and not hasattr(record, key):
                setattr(record, key, value)
        return True


def configure_logging(level: int = logging.INFO, *, access_log: bool = True) -> None:
    """JSON lines on stdout for every logger; uvicorn's own access log is replaced by ours
    (RequestContext's), which ``access_log=False`` quiets: `zerocode serve` keeps it off
    unless ZEROCODE_ACCESS_LOG=1, so its log has a line per turn, not per request."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(LambdaPowertoolsFormatter(service=SERVICE))
    handler.addFilter(_Context())
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)
    for name in ("uvicorn", "uvicorn.error"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
    logging.getLogger("uvicorn.access").disabled = True
    # httpx logs each request the model client makes: with the access log, or not at all.
    for logger in (log, logging.getLogger("httpx")):
        logger.setLevel(logging.NOTSET if access_log else logging.WARNING)


def record_turn(
    *,
    status: str,
    seconds: float,
    tokens_in: int,
    tokens_out: int,
    tool_calls: int,
    tool_failures: int,
    builds: int,
    build_failures: int,
    errors: int,
) -> None:
    """One EMF line per turn. Called from the event loop, so add and flush never interleave."""
    for name, unit, value in (
        ("Turns", MetricUnit.Count, 1),
        ("TurnFailures", MetricUnit.Count, int(status != "succeeded")),
        ("TurnDuration", MetricUnit.Milliseconds, round(seconds * 1000, 1)),
        ("ModelTokensIn", MetricUnit.Count, tokens_in),
        ("ModelTokensOut", MetricUnit.Count, tokens_out),
        ("ToolCalls", MetricUnit.Count, tool_calls),
        ("ToolFailures", MetricUnit.Count, tool_failures),
        ("Builds", MetricUnit.Count, builds),
        ("BuildFailures", MetricUnit.Count, build_failures),
        ("Errors", MetricUnit.Count, errors),
    ):
        metrics.add_metric(name=name, unit=unit, value=value)
    metrics.flush_metrics()


ASGIApp = Callable[
    [
        MutableMapping[str, Any],
        Callable[[], Awaitable[Any]],
        Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ],
    Awaitable[None],
]


class RequestContext:
    """Pure ASGI middleware (safe for streaming): request id in, X-Request-Id out, one
    access line per request with status and duration."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"x-request-id", b"").decode("latin-1")
        request_id = given if _REQUEST_ID.match(given) else secrets.token_hex(8)
        rid, uid, aid, tid = (
            REQUEST_ID.set(request_id),
            USER_ID.set(None),
            APP_ID.set(None),
            TURN.set(None),
        )
        start = time.perf_counter()
        status = [500]

        async def send_with_id(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            log.info(
                "%s %s %s",
                scope.get("method"),
                scope.get("path"),
                status[0],
                extra={
                    "method": scope.get("method"),
                    "path": scope.get("path"),
                    "status": status[0],
                    "duration_ms": round((time.perf_counter() - start) * 1000, 2),
                },
            )
            REQUEST_ID.reset(rid)
            USER_ID.reset(uid)
            APP_ID.reset(aid)
            TURN.reset(tid)
