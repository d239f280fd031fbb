"""A provider's usage object read as the platform counts it (issue 43)."""

from __future__ import annotations

from zerocode.engine.model import Usage


def provider_usage(usage: object) -> Usage:
    """A usage object as providers send it: ``prompt_tokens``, ``completion_tokens``, and
    the cached part of the prompt where told (OpenAI, vLLM, Qwen:
    ``prompt_tokens_details.cached_tokens``; DeepSeek: ``prompt_cache_hit_tokens``). A count
    that is not a whole number of tokens counts as none: a provider's odd field never
    becomes a negative or fractional bill."""
    prompt = _count(_field(usage, "prompt_tokens"))
    cached = _count(_field(_field(usage, "prompt_tokens_details"), "cached_tokens")) or _count(
        _field(usage, "prompt_cache_hit_tokens")
    )
    return Usage(prompt, _count(_field(usage, "completion_tokens")), min(cached, prompt))


def _field(value: object, name: str) -> object:
    return value.get(name) if isinstance(value, dict) else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
