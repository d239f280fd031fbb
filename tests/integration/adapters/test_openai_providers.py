"""Providers' streams and errors, replayed through the real openai client and OpenAIChatModel.

Each fixture in ``tests/fixtures/providers/`` is what one provider sends on the wire, written
from its public documentation (the header of each file says what it is based on and what it
assumes). A ``.sse`` file is a response body, replayed in small byte pieces so the client's SSE
decoder meets events and UTF-8 characters cut anywhere; a ``.json`` file is an HTTP error
response (status, headers, body).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import httpx
import openai
import pytest

from zerocode.adapters.model import model_errors
from zerocode.adapters.model import openai as adapter
from zerocode.adapters.model.openai import OpenAIChatModel, build_chat_model
from zerocode.adapters.model.provider_usage import provider_usage
from zerocode.engine.model import (
    ContextTooLong,
    ModelError,
    ModelEvent,
    ModelReply,
    ModelRole,
    TextDelta,
    ThinkingDelta,
    Usage,
)
from zerocode.memory.messages import Message, SystemMessage, UserMessage, to_openai_list

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "providers"
MODELS = {ModelRole.ROUTING: "router", ModelRole.CODE: "coder", ModelRole.VUE: "agent"}
KEY = "sk-test-Zp4Lq9Vw2Xc7Bn1M"
ASK: list[Message] = [SystemMessage("You build apps."), UserMessage("Make it so.")]


def sse(name: str) -> bytes:
    """A fixture's stream as the provider sends it: the ``#`` header lines are ours."""
    lines = (FIXTURES / name).read_bytes().split(b"\n")
    start = 0
    while start < len(lines) and lines[start].startswith(b"#"):
        start += 1
    return b"\n".join(lines[start + 1 :])  # and the blank line after the header


@dataclass(frozen=True)
class Canned:
    """One HTTP response: an SSE body, or an error."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def stream(name: str) -> Canned:
    return Canned(body=sse(name))


def error(name: str) -> Canned:
    data = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return Canned(data["status"], data["headers"], json.dumps(data["body"]).encode())


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, body: bytes, size: int) -> None:
        self.body, self.size = body, size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), self.size):
            yield self.body[start : start + self.size]


class Replay(httpx.AsyncBaseTransport):
    """Answers each request with the next canned response (the last one repeats)."""

    def __init__(self, *responses: Canned, piece: int = 7) -> None:
        self.responses, self.piece = list(responses), piece
        self.requests: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(await request.aread()))
        canned = self.responses[min(len(self.requests), len(self.responses)) - 1]
        if canned.status != 200:
            return httpx.Response(
                canned.status, headers=canned.headers, content=canned.body, request=request
            )
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream; charset=utf-8"},
            stream=_Pieces(canned.body, self.piece),
            request=request,
        )


def model(transport: httpx.AsyncBaseTransport, max_retries: int = 2) -> OpenAIChatModel:
    client = openai.AsyncOpenAI(
        base_url="http://provider.invalid/v1",
        api_key=KEY,
        http_client=cast(Any, httpx.AsyncClient(transport=transport)),
    )
    return OpenAIChatModel(client, MODELS, timeout=10, max_retries=max_retries, description="t")


@pytest.fixture(autouse=True)
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits before retries, recorded instead of slept."""
    waited: list[float] = []

    async def sleep(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(adapter, "_sleep", sleep)
    return waited


@dataclass
class Run:
    events: list[ModelEvent]
    reply: ModelReply

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))

    @property
    def thinking(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, ThinkingDelta))

    def calls(self) -> list[tuple[str, str, Any]]:
        return [(c.id, c.name, json.loads(c.arguments)) for c in self.reply.message.tool_calls]


def run(chat: OpenAIChatModel, messages: list[Message] = ASK) -> Run:
    async def go() -> Run:
        events: list[ModelEvent] = []
        async for event in chat.stream(ModelRole.VUE, messages, [{"type": "function"}]):
            assert not any(isinstance(e, ModelReply) for e in events), "the reply comes last"
            events.append(event)
        assert isinstance(events[-1], ModelReply)
        return Run(events[:-1], events[-1])

    return asyncio.run(go())


def fails(chat: OpenAIChatModel) -> ModelError:
    with pytest.raises(ModelError) as caught:
        run(chat)
    assert "Traceback" not in caught.value.message and KEY not in caught.value.message
    return caught.value


# -- tool calls ------------------------------------------------------------------------------


@pytest.mark.parametrize("piece", [1, 7, 1 << 20])
def test_openai_parallel_calls_interleaved_then_usage(piece: int) -> None:
    transport = Replay(stream("openai_parallel_tool_calls.sse"), piece=piece)
    result = run(model(transport))
    assert result.calls() == [
        (
            "call_Wt1aVq7T3mXo2bKc9LpR4sD6",
            "write_file",
            {"path": "index.html", "content": '<h1>Café ☕</h1>\n<p>"quoted"</p>'},
        ),
        ("call_Zq8nB2vM5xC7kL1pT9rW3yH0", "read_file", {"path": "src/App.vue"}),
    ]
    assert result.reply.usage == Usage(1187, 64, cached_tokens=1024)  # prompt_tokens_details
    assert result.reply.finish_reason == "tool_calls"
    assert result.events == [] and result.reply.message.content is None
    sent = transport.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(
    ("fixture", "text", "usage"),
    [
        # DeepSeek's own cache fields, no prompt_tokens_details.
        ("deepseek_cache_hit.sse", "Done.", Usage(2048, 31, cached_tokens=1920)),
        # vLLM: usage only in a last chunk without choices; prompt_tokens_details null.
        ("vllm_usage_last_chunk.sse", "Hello there.", Usage(356, 24)),
        # A server that ignores include_usage: none at all (the turn estimates it).
        ("no_usage.sse", "Saved.", None),
    ],
)
def test_each_providers_usage_is_read_as_its_wire_format_carries_it(
    fixture: str, text: str, usage: Usage | None
) -> None:
    """Issue 43: input, output and the cached part of the input, from each provider's own
    fields; a stream that reports nothing yields no usage, never a made-up zero."""
    result = run(model(Replay(stream(fixture))))
    assert result.text == text and result.reply.usage == usage


def test_odd_usage_counts_count_as_none() -> None:
    """A provider's negative, fractional, boolean or string count is no count (never a
    negative bill); cached tokens never exceed the prompt."""
    odd = {
        "prompt_tokens": 10,
        "completion_tokens": -5,
        "prompt_tokens_details": {"cached_tokens": 99},
        "prompt_cache_hit_tokens": "7",
    }
    assert provider_usage(odd) == Usage(10, 0, cached_tokens=10)
    assert provider_usage({"prompt_tokens": 2.5, "completion_tokens": True}) == Usage(0, 0)
    assert provider_usage(None) == Usage(0, 0)


def test_ollama_whole_calls_are_taken_although_it_says_stop() -> None:
    result = run(model(Replay(stream("ollama_whole_tool_calls.sse"))))
    assert result.calls() == [
        ("call_k3v9x1qa", "read_dir", {"path": "src"}),
        ("call_p0m2c7zt", "read_file", {"path": "src/App.vue"}),
    ]
    assert result.reply.finish_reason == "stop"  # reported as sent; the calls still count
    assert result.reply.usage == Usage(812, 41) and result.text == ""


def test_ollama_calls_without_index_are_separate_calls() -> None:
    result = run(model(Replay(stream("ollama_no_index.sse"))))
    assert result.calls() == [
        ("call_a1b2c3d4", "read_dir", {"path": "."}),
        ("call_e5f6g7h8", "read_file", {"path": "package.json"}),
    ]
    assert result.reply.usage is None


def test_fragments_without_index_continue_the_latest_call_until_a_new_id() -> None:
    result = run(model(Replay(stream("no_index_fragments.sse"))))
    assert result.text == result.reply.message.content == "Writing two files."
    assert result.calls() == [
        ("call_one", "write_file", {"path": "README.md", "content": "# Notes\n"}),
        ("call_two", "delete_file", {"path": "old.txt"}),
    ]


def test_whole_calls_sharing_an_index_stay_separate() -> None:
    result = run(model(Replay(stream("same_index_whole_calls.sse"))))
    assert result.calls() == [
        ("call_aaa", "read_file", {"path": "a.txt"}),
        ("call_bbb", "read_file", {"path": "b.txt"}),
    ]


# -- thinking models -------------------------------------------------------------------------


@pytest.mark.parametrize("crlf", [False, True])
def test_deepseek_reasoning_is_thinking_never_the_answer(*, crlf: bool) -> None:
    body = sse("deepseek_reasoner.sse")
    transport = Replay(Canned(body=body.replace(b"\n", b"\r\n") if crlf else body), piece=5)
    result = run(model(transport))
    thinking = "Okay, the user greets me in Chinese: 你好. I should answer briefly 🙂"
    assert result.thinking == thinking
    assert result.text == result.reply.message.content == "你好！有什么可以帮你？"
    kinds = [type(e) for e in result.events]
    assert kinds == sorted(kinds, key=lambda k: k is TextDelta), "thinking streams first"
    assert result.reply.usage == Usage(12, 58) and result.reply.finish_reason == "stop"
    # The next request carries the answer back, never the reasoning (DeepSeek refuses it).
    again = Replay(stream("no_done_sentinel.sse"))
    run(model(again), [*ASK, result.reply.message, UserMessage("And then?")])
    sent = json.dumps(again.requests[0], ensure_ascii=False)
    assert "你好！有什么可以帮你？" in sent
    assert "Okay, the user" not in sent and "reasoning" not in sent


def test_qwen_thinking_then_a_tool_call_with_empty_ids() -> None:
    result = run(model(Replay(stream("qwen_thinking_tool_call.sse"))))
    assert result.thinking == "I need to change the heading in HomeView.vue."
    assert result.text == "" and result.reply.message.content is None
    assert result.calls() == [
        (
            "call_3f9c0e1a2b4d4c5e8f7a6b9c",
            "modify_file",
            {"path": "src/views/HomeView.vue", "old": "Welcome", "new": "欢迎"},
        )
    ]
    assert result.reply.usage == Usage(1530, 61) and result.reply.finish_reason == "tool_calls"
    assert "heading" not in json.dumps(to_openai_list([result.reply.message]))


def test_ollama_reasoning_field_is_thinking_too() -> None:
    result = run(model(Replay(stream("ollama_thinking.sse"))))
    assert result.thinking == "The user wants a greeting. Keep it short."
    assert result.text == result.reply.message.content == "Hi!"


def test_a_lone_surrogate_in_reasoning_is_replaced() -> None:
    body = (
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[{"index":0,"delta":{"reasoning_content":"x\\ud800y"}}]}\n\n'
        b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m",'
        b'"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
    )
    result = run(model(Replay(Canned(body=body))))
    assert result.thinking == "x\ufffdy" and result.text == "ok"


def test_the_offline_model_never_thinks() -> None:
    chat = build_chat_model(None, None, MODELS)
    result = run(chat, [SystemMessage("routing"), UserMessage("a clock")])
    assert result.events and not any(isinstance(e, ThinkingDelta) for e in result.events)


# -- endings ---------------------------------------------------------------------------------


def test_a_finish_reason_without_done_is_a_complete_answer() -> None:
    transport = Replay(stream("no_done_sentinel.sse"))
    result = run(model(transport))
    assert result.text == result.reply.message.content == "Hello there."
    assert result.reply.finish_reason == "stop" and result.reply.usage == Usage(20, 3)
    assert len(transport.requests) == 1


def test_neither_finish_reason_nor_done_is_cut_off() -> None:
    transport = Replay(stream("cut_off.sse"))
    caught = fails(model(transport))
    assert "cut off" in caught.message and "while answering" in caught.message
    assert len(transport.requests) == 1, "text was shown: a retry would repeat it"


def test_finish_reason_length_is_on_the_reply() -> None:
    result = run(model(Replay(stream("openai_finish_length.sse"))))
    assert result.reply.finish_reason == "length"
    assert result.reply.message.content == '<!DOCTYPE html>\n<html lang="en">\n<body>\n<h1>Clo'


# -- errors inside the stream ----------------------------------------------------------------


def test_an_error_object_mid_stream_is_a_clear_model_error() -> None:
    transport = Replay(stream("error_mid_stream.sse"))
    caught = fails(model(transport, max_retries=3))
    assert caught.message == (
        "The model (agent) failed while answering (the partial answer is incomplete): "
        "the endpoint reported an error (server_error): The server had an error while "
        "processing your request. Sorry about that!"
    )
    assert len(transport.requests) == 1


def test_an_error_event_before_any_text_is_retried(sleeps: list[float]) -> None:
    transport = Replay(stream("error_before_text.sse"), stream("no_done_sentinel.sse"))
    assert run(model(transport)).text == "Hello there."
    assert len(transport.requests) == 2 and len(sleeps) == 1


def test_a_persistent_error_event_fails_after_the_retries() -> None:
    transport = Replay(stream("error_before_text.sse"))
    caught = fails(model(transport, max_retries=2))
    assert len(transport.requests) == 3
    assert caught.message.startswith("The model (agent) failed after 3 attempts: ")
    assert "engine is currently overloaded" in caught.message


def test_an_error_that_is_only_a_string() -> None:
    caught = fails(model(Replay(Canned(body=b'data: {"error": "upstream went away"}\n\n'))))
    assert caught.message.endswith("the endpoint reported an error: upstream went away.")


# -- HTTP errors -----------------------------------------------------------------------------


def test_429_waits_as_retry_after_says_then_succeeds(sleeps: list[float]) -> None:
    transport = Replay(
        error("openai_429_retry_after.json"), stream("openai_parallel_tool_calls.sse")
    )
    result = run(model(transport))
    assert sleeps == [2.0] and len(transport.requests) == 2
    assert [c.name for c in result.reply.message.tool_calls] == ["write_file", "read_file"]


def test_a_persistent_429_says_rate_limited(sleeps: list[float]) -> None:
    transport = Replay(error("openai_429_retry_after.json"))
    caught = fails(model(transport, max_retries=2))
    assert sleeps == [2.0, 2.0] and len(transport.requests) == 3
    assert caught.message.startswith(
        "The model (agent) failed after 3 attempts: rate limited (HTTP 429: Rate limit reached"
    )


def test_a_429_for_quota_is_not_retried(sleeps: list[float]) -> None:
    transport = Replay(error("openai_429_insufficient_quota.json"))
    caught = fails(model(transport))
    assert sleeps == [] and len(transport.requests) == 1
    assert "out of quota (HTTP 429: You exceeded your current quota" in caught.message


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after-ms": "250", "retry-after": "3"}, 0.25),
        ({"retry-after": "120"}, model_errors.MAX_RETRY_AFTER),
        ({"retry-after": "soon"}, 0.5),  # not a number nor a date: the backoff
        ({}, 0.5),
    ],
)
def test_retry_after_forms(headers: dict[str, str], expected: float) -> None:
    exc = openai.RateLimitError(
        "slow down",
        # openai 3 types responses as httpx2's; an httpx one is what its client gets here
        response=cast(
            Any, httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://x"))
        ),
        body=None,
    )
    assert model_errors.failure_delay(exc, 0, 0.5) == pytest.approx(expected)


def test_retry_after_as_an_http_date() -> None:
    when = email.utils.formatdate(time.time() + 5, usegmt=True)
    assert 3.0 <= (model_errors._retry_after(httpx.Headers({"retry-after": when})) or 0) <= 5.0


CONTEXT_ERRORS = [
    "openai_400_context_length.json",
    "deepseek_400_context_length.json",
    "vllm_400_context_length.json",
    "qwen_400_input_length.json",
    "llamacpp_400_context_size.json",
]


@pytest.mark.parametrize("name", CONTEXT_ERRORS)
def test_a_context_too_long_is_its_own_error(name: str, sleeps: list[float]) -> None:
    transport = Replay(error(name))
    caught = fails(model(transport))
    assert isinstance(caught, ContextTooLong) and caught.code == "context_too_long"
    assert "does not fit the model's context window (HTTP 400: " in caught.message
    assert len(transport.requests) == 1 and sleeps == []


def test_a_context_error_inside_the_stream_is_context_too_long() -> None:
    body = json.loads((FIXTURES / "openai_400_context_length.json").read_text())["body"]
    transport = Replay(Canned(body=b"data: " + json.dumps(body).encode() + b"\n\n"))
    caught = fails(model(transport))
    assert isinstance(caught, ContextTooLong) and len(transport.requests) == 1
    assert "does not fit the model's context window (the endpoint reported an error" in (
        caught.message
    )


def test_a_long_string_is_not_a_context_error() -> None:
    caught = fails(model(Replay(error("openai_400_string_too_long.json"))))
    assert not isinstance(caught, ContextTooLong) and "HTTP 400: Invalid" in caught.message


def test_an_echoed_key_is_not_repeated() -> None:
    caught = fails(model(Replay(error("openai_401_masked_key.json"))))
    assert caught.message == (
        "The model (agent) failed after 1 attempt: HTTP 401: Incorrect API key provided: "
        "[redacted]. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    )
    echo = {"error": {"message": f"bad key {KEY} for this project", "type": "auth"}}
    caught = fails(model(Replay(Canned(403, {}, json.dumps(echo).encode()))))
    assert caught.message.endswith("HTTP 403: bad key [redacted] for this project.")
