"""Why a model request failed, in words a user can read, and whether to try it again (split
from adapters/model/openai.py): a refusal for context length, a transient failure, the
server's Retry-After, an error's text without anything like a key."""

from __future__ import annotations

import email.utils
import math
import re
import time
from typing import Any

import openai

MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER = 30.0  # a server asking to wait longer than that is down


class Truncated(Exception):
    """The stream ended without a finish_reason: the connection was cut mid-answer."""


# Refusals of messages that do not fit the model's context window: OpenAI (and Azure, Groq)
# say so in ``code``, llama.cpp's server in ``type``, the others only in the message text.
_CONTEXT_CODES = frozenset(
    {"context_length_exceeded", "context_window_exceeded", "exceed_context_size_error"}
)
_CONTEXT_TEXT = re.compile(
    r"maximum context length"  # OpenAI, DeepSeek, vLLM, Mistral, OpenRouter
    r"|context[ _]length[ _]exceeded"
    r"|exceeds? (?:the )?(?:model's )?(?:available )?context (?:size|window)"  # llama.cpp
    r"|range of input length should be"  # Qwen on DashScope
    r"|prompt is too long"  # Anthropic-compatible endpoints
    r"|input (?:is )?too long",
    re.IGNORECASE,
)
# What an error object sent inside a 200 stream calls a failure worth another try.
_TRANSIENT_KIND = re.compile(
    r"server|internal|overload|unavailable|timeout|rate.?limit", re.IGNORECASE
)
_QUOTA = "insufficient_quota"  # OpenAI's 429 for an account out of credit: waiting won't help
# Key-like strings an endpoint may echo in an error (OpenAI's 401 shows a masked key).
_KEY_LIKE = re.compile(r"\b(?:sk|pk|rk)-[\w*-]{6,}|\bBearer\s+[\w*.~+/=-]+", re.IGNORECASE)


def too_long(exc: Exception) -> bool:
    """A refusal because the messages do not fit: a 400 (413, 422), or an in-stream error."""
    if isinstance(exc, openai.APIStatusError):
        if exc.status_code not in (400, 413, 422):
            return False
    elif not isinstance(exc, openai.APIError) or isinstance(exc, openai.APIConnectionError):
        return False
    if {str(exc.code), str(exc.type)} & _CONTEXT_CODES:
        return True
    return bool(_CONTEXT_TEXT.search(_detail(exc)))


def is_transient(exc: Exception) -> bool:
    """Worth another try (if nothing was yielded yet)."""
    if isinstance(exc, openai.RateLimitError):
        return _QUOTA not in (str(exc.code), str(exc.type))
    if isinstance(exc, (openai.APIConnectionError, openai.InternalServerError, Truncated)):
        return True  # APITimeoutError is an APIConnectionError
    if isinstance(exc, openai.APIStatusError) or not isinstance(exc, openai.APIError):
        return False
    # An error object inside the stream (the HTTP status was already 200).
    kinds = [exc.type, exc.code]
    if any(isinstance(k, int) and (k >= 500 or k == 429) for k in kinds):
        return True  # OpenRouter puts the HTTP status in ``code``
    return any(isinstance(k, str) and _TRANSIENT_KIND.search(k) for k in kinds)


def failure_delay(exc: Exception, attempt: int, base: float) -> float:
    """Exponential backoff; the server's Retry-After wins when it sends a sensible one."""
    delay: float = min(base * 2.0**attempt, MAX_RETRY_DELAY)
    if isinstance(exc, openai.APIStatusError):
        after = _retry_after(exc.response.headers)
        if after is not None:
            return max(0.0, min(after, MAX_RETRY_AFTER))
    return delay


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait: ``retry-after-ms`` (OpenAI), ``retry-after`` in seconds or as a date."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue
        if math.isfinite(seconds):
            return seconds
    try:
        when = email.utils.parsedate_tz(headers.get("retry-after") or "")
        return None if when is None else email.utils.mktime_tz(when) - time.time()
    except (TypeError, ValueError, OverflowError):
        return None


def _detail(exc: openai.APIError) -> str:
    """The endpoint's own words about an error (its ``message``), else the client's."""
    body = exc.body
    found = body.get("message") if isinstance(body, dict) else body
    if isinstance(found, str) and found.strip():
        return found
    message = str(exc.message)
    if isinstance(exc, openai.APIStatusError):
        message = message.removeprefix(f"Error code: {exc.status_code}").lstrip(" -")
    return message


def reason_of(exc: Exception, secret: str | None = None) -> str:
    if isinstance(exc, Truncated):
        return "the answer was cut off before it finished"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "could not reach the endpoint or the connection dropped"
    if not isinstance(exc, openai.APIError):
        return _clean(str(exc), secret) or type(exc).__name__
    detail = _clean(_detail(exc), secret)
    if isinstance(exc, openai.APIStatusError):
        said = f"HTTP {exc.status_code}"
    else:  # an error object inside the stream
        kind = exc.type or exc.code
        said = (
            f"the endpoint reported an error ({kind})" if kind else "the endpoint reported an error"
        )
    said = f"{said}: {detail}" if detail else said
    if too_long(exc):
        return f"the conversation does not fit the model's context window ({said})"
    if isinstance(exc, openai.RateLimitError):
        return f"{'rate limited' if is_transient(exc) else 'out of quota'} ({said})"
    return said


def _clean(text: str, secret: str | None) -> str:
    """One short line (an HTML error page stays short), without anything like a key."""
    if secret:
        text = text.replace(secret, "[redacted]")
    text = _KEY_LIKE.sub("[redacted]", text)
    line = " ".join(text.split()).rstrip(".")
    return line if len(line) <= 200 else line[:199] + "…"


def explain(
    exc: Exception, model: str, attempts: int, *, cut: bool, secret: str | None = None
) -> str:
    """A message a user can read: what failed, never a traceback or a secret."""
    when = (
        "while answering (the partial answer is incomplete)"
        if cut
        else f"after {attempts} attempt{'s' if attempts != 1 else ''}"
    )
    reason = reason_of(exc, secret)
    end = "" if reason.endswith(("!", "?")) else "."
    return f"The model ({model}) failed {when}: {reason}{end}"
