"""The OpenAI chat-completions wire format over httpx: the offline model's transport.

``OfflineTransport`` answers ``POST /v1/chat/completions`` and ``GET /v1/models`` in-process
as an OpenAI-compatible server does: a JSON completion, or a stream of ``chat.completion.chunk``
events (text in deltas of a few words, tool-call arguments in fragments, usage last) ended by
``data: [DONE]``. What it answers comes from :mod:`.script`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import httpx

from zerocode.adapters.model.offline.base import Script
from zerocode.adapters.model.offline.script import answer
from zerocode.memory.messages import from_openai_list
from zerocode.memory.tokens import REPLY_PRIMING, count_tokens, message_tokens

OFFLINE_MODEL = "zerocode-offline"
CREATED = 1_700_000_000  # a fixed timestamp keeps the output byte-for-byte reproducible
SLOW_DELTAS, SLOW_SECONDS = 100, 0.05
ARGUMENT_PIECE = 48  # characters of tool-call arguments per chunk
WORDS_PER_DELTA = 4


class OfflineError(Exception):
    """A request the scripted model refuses, answered as an OpenAI error body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class OfflineTransport(httpx.AsyncBaseTransport):
    """An OpenAI-compatible endpoint in-process: ``/v1/chat/completions`` and ``/v1/models``.

    ``flawed_seed`` runs the flawed mode (:mod:`.flaws`): creations make seeded mistakes.
    """

    def __init__(self, flawed_seed: int | None = None) -> None:
        self.flawed_seed = flawed_seed

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.rstrip("/")
        try:
            if request.method == "POST" and path.endswith("/chat/completions"):
                body = _request_body(await request.aread())
                return _completion_response(request, body, self.flawed_seed)
            if request.method == "GET" and path.endswith("/models"):
                return httpx.Response(
                    200,
                    json={
                        "object": "list",
                        "data": [
                            {
                                "id": OFFLINE_MODEL,
                                "object": "model",
                                "created": CREATED,
                                "owned_by": "zerocode",
                            }
                        ],
                    },
                    request=request,
                )
            raise OfflineError(404, f"no route for {request.method} {request.url.path}")
        except OfflineError as exc:
            kind = "invalid_request_error" if exc.status < 500 else "server_error"
            return httpx.Response(
                exc.status,
                request=request,
                json={"error": {"message": exc.message, "type": kind, "param": None, "code": None}},
            )


def _request_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise OfflineError(400, "the request body is not valid JSON") from exc
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("messages"), list)
        or not all(isinstance(m, dict) for m in body["messages"])
        or not body["messages"]
    ):
        raise OfflineError(400, "'messages' must be a non-empty list of message objects")
    return body


def _completion_response(
    request: httpx.Request, body: dict[str, Any], flawed_seed: int | None = None
) -> httpx.Response:
    messages: list[dict[str, Any]] = body["messages"]
    script = answer(messages, flawed_seed, tools=_tool_names(body.get("tools")))
    if body.get("tool_choice") == "none":  # tools declared, none may be called
        script = replace(script, calls=())
    model = str(body.get("model") or OFFLINE_MODEL)
    digest = hashlib.sha256(
        json.dumps(
            [model, messages, body.get("tools")], sort_keys=True, ensure_ascii=False
        ).encode()
    ).hexdigest()
    usage = _usage(messages, body.get("tools"), script)
    headers = {"x-request-id": f"req_{digest[:24]}"}
    if not body.get("stream"):
        return httpx.Response(
            200, request=request, headers=headers, json=_completion(script, model, digest, usage)
        )
    options = body.get("stream_options") or {}
    chunks = stream_chunks(
        script,
        model,
        digest,
        usage
        if isinstance(options, dict) and options.get("include_usage") and script.usage
        else None,
    )
    return httpx.Response(
        200,
        request=request,
        headers={
            **headers,
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
        },
        stream=_EventStream(_sse(chunks)),
    )


def _tool_names(tools: Any) -> list[str]:
    """The names of the function tools a request offers (malformed entries left out)."""
    if not isinstance(tools, list):
        return []
    return [
        str(t["function"].get("name"))
        for t in tools
        if isinstance(t, dict) and isinstance(t.get("function"), dict)
    ]


def _usage(messages: list[dict[str, Any]], tools: Any, script: Script) -> dict[str, int]:
    try:
        prompt = sum(message_tokens(m) for m in from_openai_list(messages)) + REPLY_PRIMING
    except ValueError:
        prompt = count_tokens(json.dumps(messages, ensure_ascii=False))
    if tools:
        prompt += count_tokens(json.dumps(tools, ensure_ascii=False))
    completion = count_tokens(script.text) + sum(
        count_tokens(c.name) + count_tokens(c.arguments) for c in script.calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _call_id(digest: str, index: int) -> str:
    return "call_" + hashlib.sha256(f"{digest}:{index}".encode()).hexdigest()[:24]


def _completion(script: Script, model: str, digest: str, usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": script.text or (None if script.calls else ""),
        "refusal": None,
    }
    if script.calls:
        message["tool_calls"] = [
            {
                "id": _call_id(digest, i),
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for i, c in enumerate(script.calls)
        ]
    return {
        "id": f"chatcmpl-{digest[:24]}",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "fp_offline",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": script.finish_reason,
            }
        ],
        "usage": usage,
    }


@dataclass(frozen=True)
class Chunk:
    """One ``chat.completion.chunk`` and the pause before it is sent."""

    data: dict[str, Any] | None  # None: the connection drops here
    delay: float = 0.0


def stream_chunks(
    script: Script, model: str, digest: str, usage: dict[str, int] | None
) -> list[Chunk]:
    """The answer as the chunks an OpenAI-compatible server streams, in order."""
    base = {
        "id": f"chatcmpl-{digest[:24]}",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "system_fingerprint": "fp_offline",
    }
    if usage is not None:
        base["usage"] = None

    def chunk(
        delta: dict[str, Any], finish: str | None = None, delay: float = script.pace
    ) -> Chunk:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return Chunk({**base, "choices": [choice]}, delay)

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if script.slow:
        out += [
            chunk({"content": f"{i}… "}, delay=max(script.pace, SLOW_SECONDS))
            for i in range(1, SLOW_DELTAS + 1)
        ]
    pieces = text_pieces(script.text or ("Working on it… " if script.cut else ""))
    if script.cut:
        return [
            *out,
            *(chunk({"content": p}) for p in pieces[: max(1, len(pieces) // 2)]),
            Chunk(None),
        ]
    out += [chunk({"content": p}) for p in pieces]
    for index, call in enumerate(script.calls):
        for n, part in enumerate(argument_pieces(call.arguments)):
            fragment: dict[str, Any] = {"index": index, "function": {"arguments": part}}
            if n == 0:
                fragment = {
                    "index": index,
                    "id": _call_id(digest, index),
                    "type": "function",
                    "function": {"name": call.name, "arguments": part},
                }
            out.append(chunk({"tool_calls": [fragment]}))
    out.append(chunk({}, script.finish_reason))
    if usage is not None:
        out.append(Chunk({**base, "choices": [], "usage": usage}, script.pace))
    return out


def text_pieces(text: str) -> list[str]:
    """Text cut into deltas of a few words (whitespace kept), as a model streams tokens."""
    words = re.findall(r"\s+|\S+\s*", text)
    if text and not words:
        words = [text]
    return ["".join(words[i : i + WORDS_PER_DELTA]) for i in range(0, len(words), WORDS_PER_DELTA)]


def argument_pieces(arguments: str) -> list[str]:
    """Tool-call arguments split into at least two fragments, as real servers send them."""
    if len(arguments) < 2:
        return [arguments, ""]
    n = max(2, math.ceil(len(arguments) / ARGUMENT_PIECE))
    size = math.ceil(len(arguments) / n)
    return [arguments[i : i + size] for i in range(0, len(arguments), size)]


async def _sse(chunks: list[Chunk]) -> AsyncIterator[bytes]:
    for item in chunks:
        if item.delay:
            await asyncio.sleep(item.delay)
        if item.data is None:
            raise httpx.ReadError("offline model: connection dropped mid-stream ([[stream-error]])")
        yield b"data: " + json.dumps(item.data, ensure_ascii=False).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


class _EventStream(httpx.AsyncByteStream):
    """An httpx response body fed piece by piece, so the client sees a real stream."""

    def __init__(self, parts: AsyncIterator[bytes]) -> None:
        self._parts = parts

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._parts:
            yield part

    async def aclose(self) -> None:
        close = getattr(self._parts, "aclose", None)
        if close is not None:
            await close()
