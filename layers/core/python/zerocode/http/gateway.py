"""The caller's claims as API Gateway's authorizer verified them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

REQUEST_CONTEXT = "x-amzn-request-context"


def gateway_claims(headers: Mapping[str, str]) -> Mapping[str, Any] | None:
    """The API Gateway authorizer's claims from the request context Lambda Web Adapter
    forwards (it sets this header on every invocation, replacing any a client sent)."""
    raw = headers.get(REQUEST_CONTEXT)
    if not raw:
        return None
    try:
        context = json.loads(raw)
    except ValueError:
        return None
    authorizer = context.get("authorizer") if isinstance(context, dict) else None
    claims = authorizer.get("claims") if isinstance(authorizer, dict) else None
    return claims if isinstance(claims, dict) and claims else None
