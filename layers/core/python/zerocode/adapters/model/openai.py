"""ChatModel on any OpenAI-compatible chat-completions endpoint (or the offline scripted one).

Retries are ours, not the client's: a transient failure is retried only while
nothing has been yielded, because a retry after text reached the user would
show that text twice. Tool-call fragments are assembled by their ``index`` (or,
from providers that omit it, by their ``id``); the engine only ever sees whole
calls. A reasoning model's ``reasoning_content`` is yielded as ThinkingDelta and
never becomes part of the reply. Provider quirks are covered by the replayed
streams in ``tests/fixtures/providers/``.

Chunks are read as the decoded JSON the endpoint sent, not built into the client's model
objects: one per chunk was the largest cost of a streamed turn on the event loop (issue 40).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any, cast

import httpx
import openai

from zerocode.adapters.model.model_errors import (
    Truncated,
    explain,
    failure_delay,
    is_transient,
    reason_of,
    too_long,
)
from zerocode.adapters.model.offline.transport import OfflineTransport
from zerocode.adapters.model.provider_usage import provider_usage
from zerocode.engine.model import (
    ContextTooLong,
    ModelError,
    ModelEvent,
    ModelReply,
    ModelRole,
    TextDelta,
    ThinkingDelta,
    ToolChoice,
    Usage,
)
from zerocode.memory.messages import AssistantMessage, Message, ToolCall, to_openai_list

log = logging.getLogger(__name__)

OFFLINE_BASE_URL = "http://zerocode-offline.invalid/v1"
OFFLINE_DESCRIPTION = "offline scripted model (no model endpoint configured)"
OFFLINE_MODEL_NAME = "zerocode-offline"
RETRY_DELAY = 0.5  # seconds before the first retry; doubles each time
# Where the thinking of a reasoning model arrives: DeepSeek, Qwen (DashScope) and vLLM send
# ``reasoning_content``; Ollama, OpenRouter and newer vLLM send ``reasoning``.
REASONING_FIELDS = ("reasoning_content", "reasoning")


@dataclass(kw_only=True)
class _PendingCall:
    index: int
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Assembly:
    """One streamed answer being put together from its chunks."""

    text: list[str] = field(default_factory=list)
    calls: list[_PendingCall] = field(default_factory=list)  # in the order they began
    usage: Usage | None = None
    finish_reason: str | None = None

    def add(self, chunk: object) -> list[TextDelta | ThinkingDelta]:
        """One chunk's decoded JSON in (odd shapes passed over); its thinking and text."""
        events: list[TextDelta | ThinkingDelta] = []
        usage = _get(chunk, "usage")
        if usage is not None:  # the last one wins: some providers send it on every chunk
            self.usage = provider_usage(usage)
        for choice in _items(_get(chunk, "choices")):
            if _get(choice, "index") not in (0, None):
                continue
            delta = _get(choice, "delta")  # absent from some providers' last chunk
            if delta is not None:
                thinking = _reasoning(delta)
                if thinking:
                    events.append(ThinkingDelta(thinking))
                content = _string(_get(delta, "content"), "content")
                if content:
                    events.append(TextDelta(content))
                    self.text.append(content)
                for fragment in _items(_get(delta, "tool_calls")):
                    self._take(fragment)
            finish = _get(choice, "finish_reason")
            if finish:
                self.finish_reason = finish
        return events

    def _take(self, fragment: Any) -> None:
        """One tool-call fragment: a new call, or more of one already begun.

        A fragment continues the latest call at its ``index`` unless it brings an id other
        than that call's (a server that numbers every whole call 0). Without an index (some
        providers omit it), it continues the latest call unless it brings a new id.
        """
        index = _get(fragment, "index")
        fragment_id = _string(_get(fragment, "id"), "tool call id") or ""
        if isinstance(index, int):
            begun = [c for c in self.calls if c.index == index]
        else:
            begun = self.calls
            index = max((c.index for c in self.calls), default=-1) + 1
        call = begun[-1] if begun else None
        if call is None or (fragment_id and call.id and fragment_id != call.id):
            call = _PendingCall(index=index)
            self.calls.append(call)
        call.id = call.id or fragment_id
        function = _get(fragment, "function")
        if function is not None:
            call.name = call.name or _string(_get(function, "name"), "tool name") or ""
            arguments = _get(function, "arguments")
            if arguments is not None and not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)  # an object, not its JSON
            call.arguments.append(_text(arguments or ""))

    def reply(self) -> ModelReply:
        calls = []
        # By index; calls sharing one (or without any) stay in the order they began.
        for position, pending in enumerate(sorted(self.calls, key=lambda c: c.index)):
            if not pending.name:
                raise ModelError(f"The model sent a tool call without a name (call {position}).")
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
        return ModelReply(
            message=AssistantMessage(content, tuple(calls)),
            usage=self.usage,
            finish_reason=self.finish_reason,
        )


def _get(value: object, name: str) -> Any:
    """A field of a JSON object; None when absent or when ``value`` is not an object."""
    return value.get(name) if isinstance(value, dict) else None


def _items(value: object) -> list[Any]:
    """A JSON array's items; none when ``value`` is not an array."""
    return value if isinstance(value, list) else []


def _reasoning(delta: Any) -> str | None:
    """The thinking in a delta: a field not every provider sends, under one of two names."""
    for name in REASONING_FIELDS:
        value = _get(delta, name)
        if isinstance(value, str) and value:
            return _text(value)
    return None


def _string(value: object, what: str) -> str | None:
    """A text field of a chunk; anything but a string (or null) is not a valid stream."""
    if value is None or isinstance(value, str):
        return _text(value) if value else value
    raise ValueError(f"the {what} of a chunk is not a string")


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
        offline: bool = False,
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
        self.offline = offline  # the offline scripted model answers (the console says so)
        key = getattr(client, "api_key", None)
        self._secret = key if isinstance(key, str) and len(key) >= 8 else None

    @property
    def description(self) -> str:
        return self._description

    async def stream(
        self,
        role: ModelRole,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[ModelEvent]:
        """Text and thinking deltas, then one ModelReply; ModelError when the endpoint fails
        (ContextTooLong when it refuses messages that do not fit the model's context)."""
        model = self.models[role]
        attempt = 0
        while True:
            yielded = False
            try:
                async with aclosing(self._once(model, messages, tools, tool_choice)) as events:
                    async for event in events:
                        yielded = True
                        yield event
                return
            except (openai.OpenAIError, Truncated) as exc:
                message = explain(exc, model, attempt + 1, cut=yielded, secret=self._secret)
                if not yielded and too_long(exc):
                    raise ContextTooLong(message) from exc
                if yielded or attempt >= self.max_retries or not is_transient(exc):
                    raise ModelError(message) from exc
                delay = failure_delay(exc, attempt, self.retry_delay)
                log.warning(
                    "model %s: %s; retry %d of %d in %.1fs",
                    model,
                    reason_of(exc, self._secret),
                    attempt + 1,
                    self.max_retries,
                    delay,
                )
                await _sleep(delay)
                attempt += 1
            except ValueError as exc:  # a chunk that is not JSON or not a chunk
                raise ModelError(
                    f"The model ({model}) sent an answer that is not a valid "
                    "chat-completions stream."
                ) from exc

    async def _once(
        self,
        model: str,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]],
        tool_choice: ToolChoice = "auto",
    ) -> AsyncGenerator[ModelEvent, None]:
        answer = _Assembly()
        body: dict[str, Any] = {
            "model": model,
            "messages": to_openai_list(messages, inline=True),  # images as data URLs
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if tools:
            body["tools"] = list(tools)
            if tool_choice == "none":
                body["tool_choice"] = "none"
        # As chat.completions.create sends it; the chunks cast to ``object`` (their JSON).
        stream = await self.client.post(
            "/chat/completions",
            cast_to=object,
            body=body,
            options={"timeout": self.timeout, "security": {"bearer_auth": True}},
            stream=True,
            stream_cls=openai.AsyncStream[object],
        )
        try:
            async for chunk in stream:
                for event in answer.add(chunk):
                    yield event
        finally:
            await stream.close()
        if answer.finish_reason is None:
            raise Truncated("the answer ended without a finish_reason")
        yield replace(answer.reply(), model=model)


_sleep = asyncio.sleep  # the wait before a retry (tests replace it)


def build_chat_model(
    base_url: str | None,
    api_key: str | None,
    models: dict[ModelRole, str],
    timeout: float = 120.0,
    max_retries: int = 2,
    offline_flawed_seed: int | None = None,
) -> OpenAIChatModel:
    """The configured endpoint, or the offline scripted model when none is configured (in
    its flawed mode with ``offline_flawed_seed``)."""
    if base_url is None:
        return build_offline_model(
            offline_flawed_seed, models, timeout=timeout, max_retries=max_retries
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


def build_offline_model(
    flawed_seed: int | None = None,
    models: dict[ModelRole, str] | None = None,
    *,
    timeout: float = 120.0,
    max_retries: int = 2,
) -> OpenAIChatModel:
    """The offline scripted model behind the real client; with ``flawed_seed``, its flawed
    mode: creations without a trigger make a seeded first-try mistake (a build that fails, a
    page that throws, an answer cut off) and repair it on the platform's feedback
    (adapters/model/offline/flaws.py). Deterministic either way."""
    # openai 3 types http_client as httpx2 but accepts an httpx client (its documented
    # compatibility path); the in-process transport is an httpx one.
    http_client = cast(Any, httpx.AsyncClient(transport=OfflineTransport(flawed_seed)))
    client = openai.AsyncOpenAI(
        base_url=OFFLINE_BASE_URL, api_key="offline", max_retries=0, http_client=http_client
    )
    names = {role: (models or {}).get(role) or OFFLINE_MODEL_NAME for role in ModelRole}
    description = (
        OFFLINE_DESCRIPTION
        if flawed_seed is None
        else f"offline scripted model, flawed mode, seed {flawed_seed} (no model endpoint "
        "configured)"
    )
    return OpenAIChatModel(
        client,
        names,
        timeout=timeout,
        max_retries=max_retries,
        description=description,
        offline=True,
    )


def _public_url(url: str) -> str:
    """The URL without credentials or query (they may hold a key)."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return "(invalid URL)"
    return str(parsed.copy_with(username=None, password=None, query=None, fragment=None))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(fragment: str) -> str:
    """A model's text as text: a lone UTF-16 surrogate (a hostile or broken stream can send
    one escaped in JSON) becomes U+FFFD, since no store, file or page can hold it."""
    return _SURROGATE.sub("\ufffd", fragment)
