"""The caller's claims as API Gateway's authorizer verified them, and when to believe them.

Lambda Web Adapter turns each API Gateway invocation into a request to the function's own
server on 127.0.0.1 and sets ``x-amzn-request-context`` on it, replacing any a client sent;
nothing else can reach that server. Anywhere else (``zerocode serve`` in AWS mode, say) the
header is whatever the client wrote, so it is believed only where both hold:

* ``ZEROCODE_TRUST_GATEWAY_CLAIMS=1``, which the infrastructure sets on the API function and
  nowhere else (``infra/zerocode_infra/functions.py``), and
* ``AWS_LAMBDA_FUNCTION_NAME``, which the Lambda runtime sets in every function.

Even then the claims only name the caller: the token itself is checked with Cognito (cached
for a minute) so a revoked one is refused (``CognitoAccounts.user_from_gateway``).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from typing import Any

REQUEST_CONTEXT = "x-amzn-request-context"
LAMBDA_FUNCTION = "AWS_LAMBDA_FUNCTION_NAME"

log = logging.getLogger(__name__)


def behind_gateway(*, trust_claims: bool, environ: Mapping[str, str] | None = None) -> bool:
    """Whether this process serves API Gateway through Lambda Web Adapter, so the request
    context header is the adapter's: the setting asks for it and Lambda runs the process."""
    env = os.environ if environ is None else environ
    on_lambda = bool(env.get(LAMBDA_FUNCTION))
    if trust_claims and not on_lambda:
        log.warning(
            "ZEROCODE_TRUST_GATEWAY_CLAIMS is set but this is not a Lambda function (%s is "
            "unset): %s is ignored and callers are checked by their tokens",
            LAMBDA_FUNCTION,
            REQUEST_CONTEXT,
        )
    return trust_claims and on_lambda


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


def authorization_token(headers: Mapping[str, str]) -> str | None:
    """The token the gateway's authorizer checked: the ``Authorization`` header, with or
    without a ``Bearer`` scheme (a Cognito authorizer accepts the bare token)."""
    raw = (headers.get("authorization") or "").strip()
    scheme, _, rest = raw.partition(" ")
    token = rest.strip() if scheme.lower() == "bearer" else raw
    return token or None
