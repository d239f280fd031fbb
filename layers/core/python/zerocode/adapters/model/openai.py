"""ChatModel on any OpenAI-compatible chat-completions endpoint (or the offline scripted one).

Retries are ours, not the client's: a transient failure is retried only while
nothing has been yielded, because a retry after text reached the user would
show that text twice. Tool-call fragments are assembled by their ``index``;
the engine only ever sees whole calls.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any, cast

import httpx
import openai
from openai.types.chat import ChatCompletionChunk

from zerocode.adapters.model.offline.transport import OfflineTransport
from zerocode.engine.model import ModelError, ModelEvent, ModelReply, ModelRole, TextDelta, Usage
from zerocode.memory.messages import AssistantMessage, Message, ToolCall, to_openai_list

log = logging.getLogger(__name__)

OFFLINE_BASE_URL = "http://zerocode-offline.invalid/v1"
OFFLINE_DESCRIPTION = "offline scripted model (no model endpoint configured)"
OFFLINE_MODEL_NAME = "zerocode-offline"
RETRY_DELAY = 0.5  # seconds before the first retry; doubles each time
MAX_RETRY_DELAY = 8.0


class _Truncated(Exception):
    """The stream ended without a finish_reason: the connection was cut mid-answer."""


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Assembly:
    """One streamed answer being put together from its chunks."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    usage: Usage | None = None
    finish_reason: str | None = None

    def add(self, chunk: ChatCompletionChunk) -> str | None:
        """Take one chunk in; returns its text delta, if any."""
        if chunk.usage is not None:
            self.usage = Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
        delta_text = None
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            if choice.delta.content:
                delta_text = choice.delta.content
                self.text.append(delta_text)
            for fragment in choice.delta.tool_calls or ():
                call = self.calls.setdefault(fragment.index, _PendingCall())
                call.id = call.id or (fragment.id or "")
                if fragment.function is not None:
                    call.name = call.name or (fragment.function.name or "")
                    call.arguments.append(fragment.function.arguments or "")
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return delta_text

    def reply(self) -> ModelReply:
        calls = []
        for index in sorted(self.calls):
            pending = self.calls[index]
            if not pending.name:
                raise ModelError(f"The model sent a tool call without a name (call {index}).")
            calls.append(
                ToolCall(
                    pending.id or f"call_{uuid.uuid4().hex[:24]}",
                    pending.name,
                    "".join(pending.arguments),
                )
            )
        if len({c.id for c in calls}) != len(calls):
            raise ModelError("The model sent two tool calls with the same id.")
        text = "".join(self.text)
        content = text or (None if calls else "")
        return ModelReply(AssistantMessage(content, tuple(calls)), self.usage, self.finish_reason)


_TRANSIENT = (
    openai.APIConnectionError,
    openai.RateLimitError,
    openai.InternalServerError,
    _Truncated,
)  # APITimeoutError is an APIConnectionError


class OpenAIChatModel:
    """Streams chat completions; see :class:`zerocode.engine.model.ChatModel` for the contract."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        models: dict[ModelRole, str],
        *,
        timeout: float,
        max_retries: int,
        description: str,
        retry_delay: float = RETRY_DELAY,
    ) -> None:
        missing = [role.value for role in ModelRole if not models.get(role)]
        if missing:
            raise ValueError(f"no model name configured for: {', '.join(missing)}")
        if timeout <= 0 or max_retries < 0:
            raise ValueError("timeout must be positive and max_retries not negative")
        # The client's own retries would replay a stream that already reached the user.
        self.client, self.models = client.with_options(max_retries=0), dict(models)
        self.timeout, self.max_retries, self.retry_delay = timeout, max_retries, retry_delay
        self._description = description

    @property
    def description(self) -> str:
        return self._description

    async def stream(
        self, role: ModelRole, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncIterator[ModelEvent]:
        """Text deltas, then one ModelReply; ModelError when the endpoint fails."""
        model = self.models[role]
        attempt = 0
        while True:
            yielded = False
            try:
                async with aclosing(self._once(model, messages, tools)) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except _TRANSIENT as exc:
                if yielded or attempt >= self.max_retries:
                    raise ModelError(_explain(exc, model, attempt + 1, cut=yielded)) from exc
                delay = _delay(exc, attempt, self.retry_delay)
                log.warning(
                    "model %s: %s; retry %d of %d in %.1fs",
                    model,
                    _reason(exc),
                    attempt + 1,
                    self.max_retries,
                    delay,
                )
                await asyncio.sleep(delay)
                attempt += 1
            except openai.OpenAIError as exc:
                raise ModelError(_explain(exc, model, attempt + 1, cut=yielded)) from exc
            except ValueError as exc:  # a chunk that is not JSON or not a chunk
                raise ModelError(
                    f"The model ({model}) sent an answer that is not a valid "
                    "chat-completions stream."
                ) from exc

    async def _once(
        self, model: str, messages: Sequence[Message], tools: Sequence[dict[str, Any]]
    ) -> AsyncGenerator[ModelEvent, None]:
        answer = _Assembly()
        stream = await self.client.chat.completions.create(
            model=model,
            messages=cast(Any, to_openai_list(messages)),
            tools=cast(Any, list(tools)) if tools else openai.omit,
            stream=True,
            stream_options={"include_usage": True},
            timeout=self.timeout,
        )
        try:
            async for chunk in stream:
                text = answer.add(chunk)
                if text:
                    yield TextDelta(text)
        finally:
            await stream.close()
        if answer.finish_reason is None:
            raise _Truncated("the answer ended without a finish_reason")
        yield answer.reply()


def _delay(exc: Exception, attempt: int, base: float) -> float:
    """Exponential backoff; a rate limit's Retry-After wins when it is sensible."""
    delay: float = min(base * 2.0**attempt, MAX_RETRY_DELAY)
    if isinstance(exc, openai.RateLimitError):
        try:
            after = float(exc.response.headers.get("retry-after", ""))
        except ValueError:
            return delay
        return max(0.0, min(after, 30.0))  # a server asking for longer than that is down
    return delay


def _reason(exc: Exception) -> str:
    if isinstance(exc, _Truncated):
        return "the answer was cut off before it finished"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        return "could not reach the endpoint or the connection dropped"
    if isinstance(exc, openai.APIStatusError):
        body = exc.body
        found = body.get("message") if isinstance(body, dict) else None
        detail = (
            found
            if isinstance(found, str) and found.strip()
            else str(exc.message).removeprefix(f"Error code: {exc.status_code}").lstrip(" -")
        )
        detail = " ".join(detail.split()).rstrip(".")[:200]  # an HTML error page stays short
        return f"HTTP {exc.status_code}: {detail}" if detail else f"HTTP {exc.status_code}"
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def _explain(exc: Exception, model: str, attempts: int, *, cut: bool) -> str:
    """A message a user can read: what failed, never a traceback or a secret."""
    when = (
        "while answering (the partial answer is incomplete)"
        if cut
        else f"after {attempts} attempt{'s' if attempts != 1 else ''}"
    )
    return f"The model ({model}) failed {when}: {_reason(exc)}."


def build_chat_model(
    base_url: str | None,
    api_key: str | None,
    models: dict[ModelRole, str],
    timeout: float = 120.0,
    max_retries: int = 2,
) -> OpenAIChatModel:
    """The configured endpoint, or the offline scripted model when none is configured."""
    if base_url is None:
        # openai 3 types http_client as httpx2 but accepts an httpx client (its documented
        # compatibility path); the in-process transport is an httpx one.
        http_client = cast(Any, httpx.AsyncClient(transport=OfflineTransport()))
        client = openai.AsyncOpenAI(
            base_url=OFFLINE_BASE_URL, api_key="offline", max_retries=0, http_client=http_client
        )
        names = {role: models.get(role) or OFFLINE_MODEL_NAME for role in ModelRole}
        return OpenAIChatModel(
            client, names, timeout=timeout, max_retries=max_retries, description=OFFLINE_DESCRIPTION
        )
    # Local servers (Ollama, vLLM) need no key, but the client insists on one.
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key=api_key or "not-needed", max_retries=0, timeout=timeout
    )
    roles = ", ".join(f"{role.value}: {models.get(role, '?')}" for role in ModelRole)
    description = f"OpenAI-compatible endpoint {_public_url(base_url)} ({roles})"
    return OpenAIChatModel(
        client, models, timeout=timeout, max_retries=max_retries, description=description
    )


def _public_url(url: str) -> str:
    """The URL without credentials or query (they may hold a key)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return "(invalid URL)"
    return str(parsed.copy_with(username=None, password=None, query=None, fragment=None))
