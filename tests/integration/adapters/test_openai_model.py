"""OpenAIChatModel over the real openai client and the HTTP wire format (offline transport)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from typing import Any, cast

import httpx
import openai
import pytest

from zerocode.adapters.model.offline.script import answer
from zerocode.adapters.model.offline.transport import OfflineTransport
from zerocode.adapters.model.offline.vue import BROKEN_HOME_VIEW
from zerocode.adapters.model.openai import OFFLINE_DESCRIPTION, OpenAIChatModel, build_chat_model
from zerocode.engine import prompts
from zerocode.engine.model import ModelError, ModelReply, ModelRole, TextDelta, Usage
from zerocode.memory.facade import user_content
from zerocode.memory.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResult,
    UserMessage,
    to_openai_list,
)
from zerocode.memory.tokens import REPLY_PRIMING, count_tokens, message_tokens

MODELS = {
    ModelRole.ROUTING: "router-model",
    ModelRole.CODE: "code-model",
    ModelRole.VUE: "vue-model",
}


def _tool(name: str, description: str, **props: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "required": list(props),
                "properties": {k: {"type": "string", "description": v} for k, v in props.items()},
            },
        },
    }


TOOLS = [
    _tool("read_dir", "List files.", path="directory"),
    _tool("read_file", "Read a file.", path="file"),
    _tool("write_file", "Write a file.", path="file", content="whole content"),
    _tool(
        "modify_file", "Replace exact text.", path="file", old="exact old text", new="replacement"
    ),
    _tool("delete_file", "Delete a file.", path="file"),
    _tool("exit", "Finish."),
]


def offline() -> OpenAIChatModel:
    return build_chat_model(None, None, MODELS)


def collect(
    model: OpenAIChatModel,
    role: ModelRole,
    messages: Sequence[Message],
    tools: Sequence[dict[str, Any]] = (),
) -> tuple[list[str], ModelReply]:
    async def go() -> tuple[list[str], ModelReply]:
        deltas: list[str] = []
        replies: list[ModelReply] = []
        async for event in model.stream(role, messages, tools):
            assert not replies, "nothing may follow the ModelReply"
            if isinstance(event, TextDelta):
                deltas.append(event.text)
            elif isinstance(event, ModelReply):
                replies.append(event)
        assert len(replies) == 1
        return deltas, replies[0]

    return asyncio.run(go())


def vue(*turns: str) -> list[Message]:
    return [SystemMessage(prompts.load("vue_project")), *(UserMessage(t) for t in turns)]


# -- streaming and assembly ----------------------------------------------------------------


def test_vue_creation_is_parallel_write_calls_with_whole_arguments() -> None:
    messages = vue("A recipe book with vue router")
    deltas, reply = collect(offline(), ModelRole.VUE, messages, TOOLS)
    intended = answer(to_openai_list(messages))
    calls = reply.message.tool_calls
    assert len(calls) == len(intended.calls) >= 7
    assert [(c.name, c.arguments) for c in calls] == [(c.name, c.arguments) for c in intended.calls]
    assert all(c.parsed_arguments() is not None for c in calls)
    assert len({c.id for c in calls}) == len(calls)
    assert reply.finish_reason == "tool_calls"
    assert "".join(deltas) == reply.message.content == intended.text
    expected_prompt = (
        sum(message_tokens(m) for m in messages)
        + REPLY_PRIMING
        + count_tokens(json.dumps(TOOLS, ensure_ascii=False))
    )
    expected_completion = count_tokens(intended.text) + sum(
        count_tokens(c.name) + count_tokens(c.arguments) for c in intended.calls
    )
    assert reply.usage == Usage(expected_prompt, expected_completion)


def test_text_answer_has_no_calls_and_routing_uses_its_model() -> None:
    seen: list[str] = []
    model = _model(_Recording(OfflineTransport(), seen))
    deltas, reply = collect(
        model, ModelRole.ROUTING, [SystemMessage(prompts.load("routing")), UserMessage("a vue spa")]
    )
    assert "".join(deltas) == reply.message.content == "vue_project"
    assert reply.message.tool_calls == () and reply.finish_reason == "stop"
    assert seen == ["router-model"]


def test_offline_description_and_real_description_hide_secrets() -> None:
    assert offline().description == OFFLINE_DESCRIPTION
    real = build_chat_model("https://user:secret@llm.example.com/v1?key=k", "sk-secret", MODELS)
    assert real.description == (
        "OpenAI-compatible endpoint https://llm.example.com/v1 "
        "(routing: router-model, code: code-model, vue: vue-model)"
    )
    assert "secret" not in real.description and "sk-" not in real.description


def test_every_role_needs_a_model_name() -> None:
    client = openai.AsyncOpenAI(base_url="http://x.invalid/v1", api_key="k")
    with pytest.raises(ValueError, match="vue"):
        OpenAIChatModel(
            client,
            {ModelRole.ROUTING: "a", ModelRole.CODE: "b"},
            timeout=1,
            max_retries=0,
            description="d",
        )


def test_stream_error_fails_after_text_without_retrying() -> None:
    calls: list[str] = []
    model = _model(_Recording(OfflineTransport(), calls), max_retries=3)

    async def go() -> tuple[list[Any], ModelError]:
        events: list[Any] = []
        with pytest.raises(ModelError) as caught:
            async for event in model.stream(
                ModelRole.CODE,
                [SystemMessage(prompts.load("html")), UserMessage("A clock [[stream-error]]")],
            ):
                events.append(event)
        return events, caught.value

    events, error = asyncio.run(go())
    assert events and all(isinstance(e, TextDelta) for e in events)
    assert len(calls) == 1, "text was already shown: a retry would repeat it"
    assert "cut" in error.message or "connection" in error.message
    assert "Traceback" not in error.message and error.status == 502


def test_a_stream_that_just_ends_is_an_error_not_a_short_answer() -> None:
    model = _model(_DropFinish(OfflineTransport()))
    with pytest.raises(ModelError, match="cut off"):
        collect(model, ModelRole.CODE, [SystemMessage(prompts.load("html")), UserMessage("x")])


def test_a_cut_before_anything_was_shown_is_retried() -> None:
    transport = _DropFinish(OfflineTransport(), times=1, keep_text=False)
    _, reply = collect(_model(transport), ModelRole.VUE, vue("a vue app"), TOOLS)
    assert transport.requests == 2 and reply.message.tool_calls


def test_client_can_stop_early_and_the_stream_is_closed() -> None:
    transport = _Recording(OfflineTransport(), [])
    model = _model(transport)

    async def go() -> float:
        started = time.monotonic()
        events = model.stream(
            ModelRole.CODE, [SystemMessage(prompts.load("html")), UserMessage("a clock [[slow]]")]
        )
        received = 0
        async for event in events:
            assert isinstance(event, TextDelta)
            received += 1
            if received == 3:
                break
        await cast(Any, events).aclose()
        return time.monotonic() - started

    assert asyncio.run(go()) < 2.0  # the slow answer takes ~5 s to the end
    assert transport.closed == 1


def test_pace_trigger_paces_every_chunk() -> None:
    messages: list[Message] = [
        SystemMessage(prompts.load("routing")),
        UserMessage("a clock [[pace=30]]"),
    ]
    started = time.monotonic()
    collect(offline(), ModelRole.ROUTING, messages)
    # role chunk, one text chunk, finish chunk, usage chunk: 4 paced chunks
    assert time.monotonic() - started >= 0.12


# -- retries -------------------------------------------------------------------------------


class _Failing(httpx.AsyncBaseTransport):
    """Answers ``failures`` requests with an error, then delegates."""

    def __init__(
        self,
        inner: httpx.AsyncBaseTransport,
        failures: int,
        status: int = 503,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.inner, self.failures, self.status = inner, failures, status
        self.headers = headers or {}
        self.requests = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        if self.requests <= self.failures:
            if self.status == 0:
                raise httpx.ConnectError("connection refused", request=request)
            return httpx.Response(
                self.status,
                headers=self.headers,
                request=request,
                json={"error": {"message": f"upstream said {self.status}", "type": "server_error"}},
            )
        return await self.inner.handle_async_request(request)


def _model(transport: httpx.AsyncBaseTransport, max_retries: int = 2) -> OpenAIChatModel:
    client = openai.AsyncOpenAI(
        base_url="http://endpoint.invalid/v1",
        api_key="k",
        max_retries=5,  # the model must turn these off
        http_client=cast(Any, httpx.AsyncClient(transport=transport)),
    )
    return OpenAIChatModel(
        client, MODELS, timeout=10, max_retries=max_retries, description="test", retry_delay=0.01
    )


@pytest.mark.parametrize(
    ("status", "headers"), [(503, {}), (500, {}), (429, {"retry-after": "0"}), (0, {})]
)
def test_transient_failures_are_retried_then_succeed(status: int, headers: dict[str, str]) -> None:
    transport = _Failing(OfflineTransport(), failures=2, status=status, headers=headers)
    _, reply = collect(_model(transport), ModelRole.VUE, vue("a vue shop"), TOOLS)
    assert transport.requests == 3 and len(reply.message.tool_calls) >= 7


def test_persistent_503_is_a_model_error_after_max_retries() -> None:
    transport = _Failing(OfflineTransport(), failures=1000)
    with pytest.raises(ModelError) as caught:
        collect(_model(transport, max_retries=2), ModelRole.VUE, vue("a vue shop"), TOOLS)
    assert transport.requests == 3
    assert caught.value.message == (
        "The model (vue-model) failed after 3 attempts: HTTP 503: upstream said 503."
    )


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(status: int) -> None:
    transport = _Failing(OfflineTransport(), failures=1000, status=status)
    with pytest.raises(ModelError, match=f"HTTP {status}"):
        collect(_model(transport), ModelRole.VUE, vue("a vue shop"), TOOLS)
    assert transport.requests == 1


# -- tool loops, driven step by step -------------------------------------------------------


def run_tool(files: dict[str, str], call: ToolCall) -> ToolResult:
    """A tiny in-memory workspace with the platform's tool semantics."""
    args = call.parsed_arguments()
    if args is None:
        return ToolResult.failure(call, "arguments are not a JSON object")
    path = str(args.get("path", "")).removeprefix("./")
    if path.startswith("/") or ".." in path.split("/"):
        return ToolResult.failure(call, f"path refused: {path}")
    if call.name == "read_dir":
        return ToolResult.success(call, "\n".join(sorted(files)))
    if call.name == "read_file":
        if path not in files:
            return ToolResult.failure(call, f"no such file: {path}")
        return ToolResult.success(call, files[path])
    if call.name == "write_file":
        files[path] = str(args["content"])
        return ToolResult.success(call, f"wrote {path}")
    if call.name == "modify_file":
        content, old = files.get(path), str(args.get("old", ""))
        if content is None:
            return ToolResult.failure(call, f"no such file: {path}")
        found = content.count(old) if old else 0
        if found != 1:
            what = "not found" if found == 0 else f"found {found} times"
            return ToolResult.failure(call, f"old text {what} in {path}")
        files[path] = content.replace(old, str(args.get("new", "")))
        return ToolResult.success(call, f"modified {path}")
    return ToolResult.failure(call, f"unknown tool {call.name}")


def drive(
    model: OpenAIChatModel,
    messages: list[Message],
    files: dict[str, str],
    on_step: Callable[[AssistantMessage], None] = lambda m: None,
) -> str:
    """Run one turn to its text answer, the way the engine does; returns the final text."""
    for _ in range(8):
        _, reply = collect(model, ModelRole.VUE, messages, TOOLS)
        messages.append(reply.message)
        if not reply.message.tool_calls:
            return reply.message.content or ""
        on_step(reply.message)
        messages.extend(run_tool(files, c) for c in reply.message.tool_calls)
    raise AssertionError("the scripted model did not stop")


def created_project() -> tuple[list[Message], dict[str, str]]:
    files: dict[str, str] = {}
    messages = vue("A recipe book with vue router")
    final = drive(offline(), messages, files)
    assert final.startswith("Created **Recipe Book**: a Vue 3 + Vite project with 7")
    assert len(files) == 7
    return messages, files


def test_vue_change_of_a_selected_element() -> None:
    messages, files = created_project()
    before = dict(files)
    element = {
        "pagePath": "/",
        "tag": "h1",
        "selector": "section > h1",
        "text": "Recipe Book",
    }
    messages.append(UserMessage(user_content('Rename it to "Grandma\'s Recipes"', element)))
    steps: list[list[str]] = []
    final = drive(
        offline(), messages, files, lambda m: steps.append([c.name for c in m.tool_calls])
    )
    assert steps == [["read_dir"], ["read_file"] * 3, ["modify_file"]]
    home = "src/views/HomeView.vue"
    assert "<h1>Grandma's Recipes</h1>" in files[home]
    assert files[home] == before[home].replace("Recipe Book", "Grandma's Recipes")
    assert {p: c for p, c in files.items() if p != home} == {
        p: c for p, c in before.items() if p != home
    }  # App.vue's header has the title too
    assert final == f"Changed “Recipe Book” to “Grandma's Recipes” in {home}."


def test_vue_change_without_element_renames_the_home_heading() -> None:
    messages, files = created_project()
    messages.append(UserMessage('Call the app "Cookbook"'))
    final = drive(offline(), messages, files)
    assert "<h1>Cookbook</h1>" in files["src/views/HomeView.vue"]
    assert "<strong>Recipe Book</strong>" in files["src/App.vue"]
    assert final.startswith("Changed “Recipe Book” to “Cookbook”")


def test_vue_change_in_another_file() -> None:
    messages, files = created_project()
    messages.append(
        UserMessage(
            user_content('Say "Our story"', {"tag": "h1", "text": "About", "pagePath": "/about"})
        )
    )
    final = drive(offline(), messages, files)
    assert "<h1>Our story</h1>" in files["src/views/AboutView.vue"]
    assert final == "Changed “About” to “Our story” in src/views/AboutView.vue."


def test_vue_change_of_an_absent_element_fails_truthfully() -> None:
    messages, files = created_project()
    before = dict(files)
    element = {"tag": "p", "text": "A paragraph that does not exist"}
    messages.append(UserMessage(user_content('Change it to "Hello"', element)))
    final = drive(offline(), messages, files)
    results = [m for m in messages if isinstance(m, ToolResult)]
    assert results[-1].name == "modify_file" and not results[-1].ok
    assert files == before
    assert final.startswith(
        "I could not find “A paragraph that does not exist” in "
        "src/views/HomeView.vue, so nothing was changed."
    )
    assert "Changed" not in final


def test_vue_change_without_quotes_asks_instead_of_acting() -> None:
    messages, files = created_project()
    messages.append(UserMessage("make it prettier"))
    steps: list[AssistantMessage] = []
    final = drive(offline(), messages, files, steps.append)
    assert steps == [] and "double quotes" in final


@pytest.mark.parametrize(
    ("trigger", "reason"),
    [
        ("[[unknown-tool]]", "unknown tool format_disk"),
        ("[[escape]]", "path refused: ../../outside.txt"),
        ("[[bad-args]]", "arguments are not a JSON object"),
    ],
)
def test_failing_tool_triggers_end_with_an_honest_report(trigger: str, reason: str) -> None:
    messages, files = created_project()
    before = dict(files)
    messages.append(UserMessage(f"do it {trigger}"))
    final = drive(offline(), messages, files)
    assert files == before
    assert final.startswith("1 of 1 tool calls failed, 0 succeeded") and reason in final


class _Recording(httpx.AsyncBaseTransport):
    """Delegates, remembering each request's model and counting closed response bodies."""

    def __init__(self, inner: httpx.AsyncBaseTransport, models: list[str]) -> None:
        self.inner, self.models, self.closed = inner, models, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.models.append(json.loads(await request.aread())["model"])
        response = await self.inner.handle_async_request(request)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=_Counting(response.stream, self),
            request=request,
        )


class _Counting(httpx.AsyncByteStream):
    def __init__(self, inner: Any, owner: _Recording) -> None:
        self.inner, self.owner = inner, owner

    async def __aiter__(self) -> Any:
        async for part in self.inner:
            yield part

    async def aclose(self) -> None:
        self.owner.closed += 1
        await self.inner.aclose()


class _DropFinish(httpx.AsyncBaseTransport):
    """Cuts every stream (or the first ``times``) cleanly before its finish_reason."""

    def __init__(
        self, inner: httpx.AsyncBaseTransport, times: int = 1000, *, keep_text: bool = True
    ) -> None:
        self.inner, self.times, self.keep_text, self.requests = inner, times, keep_text, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        response = await self.inner.handle_async_request(request)
        if self.requests > self.times:
            return response
        body = await response.aread()
        kept = []
        for event in body.decode().split("\n\n"):
            if 'finish_reason": null' not in event:
                break
            if not self.keep_text and '"content": ""' not in event:
                break
            kept.append(event)
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content="".join(e + "\n\n" for e in kept).encode(),
            request=request,
        )


def test_broken_vue_change_reports_the_write_it_made() -> None:
    messages, files = created_project()
    messages.append(UserMessage("break it [[broken-vue]]"))
    final = drive(offline(), messages, files)
    assert files["src/views/HomeView.vue"] == BROKEN_HOME_VIEW
    assert final == "Wrote src/views/HomeView.vue."


class _Garbage(httpx.AsyncBaseTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            headers={"content-type": "text/event-stream"},
            content=b"data: {not json\n\ndata: [DONE]\n\n",
            request=request,
        )


def test_a_malformed_stream_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="not a valid chat-completions stream"):
        collect(_model(_Garbage()), ModelRole.CODE, [UserMessage("x")])


def test_the_request_is_the_chat_completions_one_and_chunks_of_odd_shape_are_passed_over() -> None:
    """The model asks through the client's ``post`` (chunks as their JSON): the same path,
    key and body as ``chat.completions.create`` would send; a chunk that is not an object,
    or whose fields have another shape, adds nothing and breaks nothing."""
    seen: list[httpx.Request] = []
    body = (
        b'data: "ping"\n\n'
        b'data: {"choices": {"index": 0}, "usage": 7}\n\n'
        b'data: {"choices": [{"index": 0, "delta": "x"},'
        b' {"index": 1, "delta": {"content": "no"}}]}\n\n'
        b'data: {"choices": [{"index": 0, "delta": {"content": "Hi", "tool_calls": {}}}]}\n\n'
        b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],'
        b' "usage": {"prompt_tokens": 3, "completion_tokens": 1}}\n\n'
        b"data: [DONE]\n\n"
    )

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    tool = _tool("exit", "Finish.")
    deltas, reply = collect(
        _model(httpx.MockTransport(answer)), ModelRole.CODE, [UserMessage("x")], [tool]
    )
    assert deltas == ["Hi"] and reply.message.content == "Hi"
    assert reply.usage == Usage(3, 1) and reply.finish_reason == "stop"
    (request,) = seen
    assert request.url == "http://endpoint.invalid/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer k"
    assert json.loads(request.content) == {
        "model": MODELS[ModelRole.CODE],
        "messages": [{"role": "user", "content": "x"}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [tool],
    }
