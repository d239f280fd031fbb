"""Every provider fixture through the real server and the real engine (issue 14).

``tests/fixtures/providers/`` holds what OpenAI-compatible providers send on the wire;
``tests/integration/adapters/test_openai_providers.py`` replays them through the adapter
alone. Here the real ``zerocode serve`` (a subprocess) talks to a model server of ours
(``tests/e2e/replay_model.py``) that answers its turns with those fixtures, and the tests
assert what a user and the model end up with: the SSE events (tool results with their real
``ok``, thinking apart from the answer, the error codes, ``done``), the files, the history,
the context the model will see next (valid, never holding reasoning) and the requests that
went back to the model.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, Turn, create, parse_sse, signed_in
from tests.e2e.replay_model import (
    FINAL,
    FIXTURES,
    ReplayModel,
    fixture_error,
    fixture_stream,
    text_stream,
)
from zerocode.adapters.local.workspace import LocalWorkspace
from zerocode.adapters.model.offline.vue import vue_project_files
from zerocode.memory.messages import from_openai_list
from zerocode.memory.validation import validate

KEY = f"sk-replay-{secrets.token_hex(8)}"  # a dummy key: it must never be shown back
AGENT, CODER = "agent", "coder"  # the model names of the vue and code roles


@pytest.fixture(scope="module")
def replay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, ReplayModel]]:
    with ReplayModel() as model:
        srv = Server(tmp_path_factory.mktemp("zerocode-providers"))
        srv.env.update(
            {
                "ZEROCODE_MODEL_BASE_URL": model.base_url,
                "ZEROCODE_MODEL_API_KEY": KEY,
                "ZEROCODE_MODEL_VUE": AGENT,
                "ZEROCODE_MODEL_CODE": CODER,
                "ZEROCODE_MODEL_ROUTING": "router",
                "ZEROCODE_MODEL_TIMEOUT_SECONDS": "20",
                # No repair round: a failing preview would ask the model again, unscripted.
                "ZEROCODE_REPAIR_ROUNDS": "0",
                "ZEROCODE_RUNTIME_CHECK": "false",
                "ZEROCODE_COVERS": "false",
            }
        )
        srv.start()
        try:
            yield srv, model
        finally:
            srv.stop()


@pytest.fixture
def server(replay: tuple[Server, ReplayModel]) -> Server:
    return replay[0]


@pytest.fixture
def model(replay: tuple[Server, ReplayModel]) -> ReplayModel:
    replay[1].reset()
    return replay[1]


@pytest.fixture
def client(server: Server) -> Iterator[httpx.Client]:
    c = signed_in(server)
    yield c
    c.close()


# -- helpers ---------------------------------------------------------------------------------


@dataclass
class Said:
    """A turn's stream: the parsed Turn, plus its thinking events and the raw frames."""

    turn: Turn
    thinking: list[str] = field(default_factory=list)
    raw: str = ""

    @property
    def text(self) -> str:
        return self.turn.text

    @property
    def status(self) -> str | None:
        return None if self.turn.done is None else self.turn.done["status"]

    @property
    def error_codes(self) -> list[str]:
        return [e["code"] for e in self.turn.errors]

    def results(self) -> list[tuple[str, str | None, bool]]:
        return [(r["name"], r["path"], r["ok"]) for r in self.turn.results]


def talk(client: httpx.Client, app_id: str, message: str) -> Said:
    """One turn, streamed; checks what holds for every turn whatever the model sent."""
    with client.stream("POST", f"/api/apps/{app_id}/chat", json={"message": message}) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        lines = list(r.iter_lines())
    said = Said(parse_sse(iter(lines)), raw="\n".join(lines))
    event = "message"
    for line in lines:
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:") and event == "thinking":
            said.thinking.append(json.loads(line[5:])["text"])
        elif line == "":
            event = "message"
    turn = said.turn
    assert turn.done is not None and turn.order[-1] == "done" and turn.order.count("done") == 1
    assert not turn.errors or turn.done["status"] == "failed", "an error ends a failed turn"
    for call in (t for t in turn.tools if t["phase"] == "call"):
        assert [r for r in turn.results if r["id"] == call["id"]], f"no result for {call}"
    assert all(isinstance(r["ok"], bool) for r in turn.results)
    assert KEY not in said.raw and "Traceback" not in said.raw
    return said


def context(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    """The window the model sees next: valid, and never a thinking model's reasoning."""
    messages: list[dict[str, Any]] = client.get(f"/api/apps/{app_id}/context").json()["messages"]
    validate(from_openai_list(messages))
    assert all("reasoning" not in key for m in messages for key in m), messages
    return messages


def history(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = client.get(f"/api/apps/{app_id}/history").json()["entries"]
    return entries


def files(client: httpx.Client, app_id: str) -> set[str]:
    return {f["path"] for f in client.get(f"/api/apps/{app_id}/files").json()["files"]}


def read(client: httpx.Client, app_id: str, path: str) -> str:
    got = client.get(f"/api/apps/{app_id}/files/{path}")
    assert got.status_code == 200, got.text
    return got.text


def vue_app(client: httpx.Client, server: Server, **extra: str) -> str:
    """A vue_project app whose workspace already holds a whole project (plus ``extra``
    files), written where the server keeps workspaces, as if an earlier turn made it."""
    app_id = str(create(client, "A Vue app for the provider replay", "vue_project")["id"])
    workspace = LocalWorkspace(server.data_dir / "workspaces")
    project = vue_project_files("Welcome", "A page to greet people")
    for path, content in {**project, **extra}.items():
        workspace.write(app_id, path, content.encode("utf-8"))
    return app_id


def html_app(client: httpx.Client) -> str:
    """An html app, its mode routed by the model (the replay server answers "html")."""
    app = create(client, "A page for the provider replay")
    assert app["codeGenType"] == "html" and app["name"] == "Provider replay", app
    return str(app["id"])


def tool_messages(request: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


# -- tool calls ------------------------------------------------------------------------------


def test_openai_parallel_calls_both_run_and_the_preview_is_built(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = vue_app(client, server)
    model.reset(fixture_stream("openai_parallel_tool_calls.sse"))
    said = talk(client, app_id, "Put a café heading on the page")
    assert said.results() == [
        ("write_file", "index.html", True),
        ("read_file", "src/App.vue", True),
    ]
    assert [b["status"] for b in said.turn.builds] == ["running", "succeeded"], said.turn.builds
    assert said.status == "succeeded" and said.text == FINAL and not said.turn.errors
    assert read(client, app_id, "index.html") == '<h1>Café ☕</h1>\n<p>"quoted"</p>'
    first, after = model.generations
    assert first.body["model"] == AGENT and first.body["stream"] is True
    assert first.body["stream_options"] == {"include_usage": True} and first.body["tools"]
    results = tool_messages(after.body)
    assert set(results) == {"call_Wt1aVq7T3mXo2bKc9LpR4sD6", "call_Zq8nB2vM5xC7kL1pT9rW3yH0"}
    assert "<template>" in results["call_Zq8nB2vM5xC7kL1pT9rW3yH0"]  # App.vue, as it is
    messages = context(client, app_id)
    calls = [c for m in messages for c in m.get("tool_calls") or ()]
    assert [c["function"]["name"] for c in calls] == ["write_file", "read_file"]
    assert json.loads(calls[0]["function"]["arguments"])["content"].startswith("<h1>Café ☕")
    assert messages[-1] == {"role": "assistant", "content": FINAL}


def test_ollama_whole_calls_run_although_it_says_stop(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = vue_app(client, server)
    model.reset(fixture_stream("ollama_whole_tool_calls.sse"))
    said = talk(client, app_id, "What is in the project?")
    assert said.results() == [("read_dir", "src", True), ("read_file", "src/App.vue", True)]
    assert said.status == "succeeded" and not said.turn.builds  # nothing changed
    results = tool_messages(model.generations[1].body)
    assert "src/views/HomeView.vue" in results["call_k3v9x1qa"]
    assert "<template>" in results["call_p0m2c7zt"]
    context(client, app_id)


def test_ollama_calls_without_index_are_two_calls(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = vue_app(client, server)
    model.reset(fixture_stream("ollama_no_index.sse"))
    said = talk(client, app_id, "Which packages does it use?")
    assert said.results() == [("read_dir", ".", True), ("read_file", "package.json", True)]
    assert said.status == "succeeded" and not said.turn.builds
    results = tool_messages(model.generations[1].body)
    assert set(results) == {"call_a1b2c3d4", "call_e5f6g7h8"}
    assert '"vue-router"' in results["call_e5f6g7h8"]
    context(client, app_id)


def test_fragments_without_index_write_and_delete(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = vue_app(client, server, **{"old.txt": "stale\n"})
    model.reset(fixture_stream("no_index_fragments.sse"))
    said = talk(client, app_id, "Add notes, drop the old file")
    assert said.text == "Writing two files.\n\n" + FINAL  # two model calls: two paragraphs
    assert said.results() == [("write_file", "README.md", True), ("delete_file", "old.txt", True)]
    assert [b["status"] for b in said.turn.builds] == ["running", "succeeded"], said.turn.builds
    assert said.status == "succeeded"
    assert read(client, app_id, "README.md") == "# Notes\n"
    assert "old.txt" not in files(client, app_id)
    messages = context(client, app_id)
    step = next(m for m in messages if m.get("tool_calls"))
    assert step["content"] == "Writing two files."
    assert [c["id"] for c in step["tool_calls"]] == ["call_one", "call_two"]


def test_whole_calls_sharing_an_index_each_get_their_real_result(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = vue_app(client, server, **{"a.txt": "first\n"})  # no b.txt
    model.reset(fixture_stream("same_index_whole_calls.sse"))
    said = talk(client, app_id, "Read a and b")
    assert said.results() == [("read_file", "a.txt", True), ("read_file", "b.txt", False)]
    missing = said.turn.results[1]["summary"]
    assert "b.txt does not exist" in missing
    # A tool that failed after the last change fails the turn (docs/engine.md), honestly.
    assert said.status == "failed" and not said.turn.errors and not said.turn.builds
    results = tool_messages(model.generations[1].body)
    assert results["call_aaa"] == "first\n" and "does not exist" in results["call_bbb"]
    entry = history(client, app_id)[0]
    assert entry["status"] == "failed" and "✗" in entry["content"]
    context(client, app_id)


# -- thinking models -------------------------------------------------------------------------


def test_deepseek_reasoning_is_shown_as_thinking_never_kept_nor_sent_back(
    client: httpx.Client, model: ReplayModel
) -> None:
    app_id = html_app(client)
    model.reset(fixture_stream("deepseek_reasoner.sse"), fixture_stream("no_done_sentinel.sse"))
    said = talk(client, app_id, "你好")
    reasoning = "Okay, the user greets me in Chinese: 你好. I should answer briefly 🙂"
    assert "".join(said.thinking) == reasoning
    assert said.text == "你好！有什么可以帮你？" and "Okay" not in said.text
    order = said.turn.order
    assert order.index("message") > max(i for i, e in enumerate(order) if e == "thinking")
    assert said.status == "succeeded" and files(client, app_id) == set()
    assert "Okay, the user" not in json.dumps(context(client, app_id), ensure_ascii=False)
    assert "Okay, the user" not in str(history(client, app_id))
    # The next turn sends the answer back, never the reasoning (DeepSeek refuses it: a 400).
    again = talk(client, app_id, "And then?")
    assert again.text == "Hello there." and again.status == "succeeded" and not again.thinking
    sent = model.generations[1].text
    assert "你好！有什么可以帮你？" in sent
    assert "Okay, the user" not in sent and "reasoning" not in sent


def test_qwen_thinking_then_a_tool_call_changes_the_page(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = vue_app(client, server)
    assert read(client, app_id, "src/views/HomeView.vue").count("Welcome") == 1
    model.reset(fixture_stream("qwen_thinking_tool_call.sse"))
    said = talk(client, app_id, "Say welcome in Chinese")
    assert "".join(said.thinking) == "I need to change the heading in HomeView.vue."
    assert "heading" not in said.text and said.text == FINAL
    assert said.results() == [("modify_file", "src/views/HomeView.vue", True)]
    assert [b["status"] for b in said.turn.builds] == ["running", "succeeded"], said.turn.builds
    assert said.status == "succeeded"
    assert "<h1>欢迎</h1>" in read(client, app_id, "src/views/HomeView.vue")
    first, after = model.generations
    assert first.body["model"] == AGENT and after.messages[: len(first.messages)] == first.messages
    assert "call_3f9c0e1a2b4d4c5e8f7a6b9c" in tool_messages(after.body)
    # The thinking never goes back (the system prompt may well say "heading" itself).
    thought = "change the heading in HomeView"
    assert thought not in after.text and "reasoning" not in after.text
    assert thought not in json.dumps(context(client, app_id))


def test_ollama_reasoning_field_is_thinking_too(client: httpx.Client, model: ReplayModel) -> None:
    app_id = html_app(client)
    model.reset(fixture_stream("ollama_thinking.sse"))
    said = talk(client, app_id, "Hi")
    assert "".join(said.thinking) == "The user wants a greeting. Keep it short."
    assert said.text == "Hi!" and said.status == "succeeded"
    messages = context(client, app_id)
    assert messages[-1] == {"role": "assistant", "content": "Hi!"}
    assert "greeting" not in json.dumps(messages)


# -- usage (issue 43) ------------------------------------------------------------------------


def test_each_providers_usage_reaches_done_and_the_history(
    client: httpx.Client, model: ReplayModel
) -> None:
    """DeepSeek's cache-hit fields, vLLM's usage in a last chunk without choices, and a server
    that reports no usage at all: done says the provider's counts (cached included), or the
    platform's own count marked estimated; the stored reply says the same."""
    for fixture, text, told in (
        ("deepseek_cache_hit.sse", "Done.", (2048, 31, 1920)),
        ("vllm_usage_last_chunk.sse", "Hello there.", (356, 24, 0)),
        ("no_usage.sse", "Saved.", None),
    ):
        app_id = html_app(client)
        model.reset(fixture_stream(fixture))
        said = talk(client, app_id, "Hello")
        assert said.text == text and said.status == "succeeded", fixture
        assert said.turn.done is not None
        usage = said.turn.done["usage"]
        assert usage["requests"] == 1, fixture
        if told is None:
            assert usage["estimated"] is True and usage["inputTokens"] > 0
            assert usage["outputTokens"] > 0
        else:
            counts = (usage["inputTokens"], usage["outputTokens"], usage["cachedTokens"])
            assert counts == told and usage["estimated"] is False, fixture
        (entry,) = [e for e in history(client, app_id) if e["role"] == "ai"]
        assert entry["usage"] == usage, fixture


# -- endings ---------------------------------------------------------------------------------


def test_a_finish_reason_without_done_is_a_whole_answer(
    client: httpx.Client, model: ReplayModel
) -> None:
    app_id = html_app(client)
    model.reset(fixture_stream("no_done_sentinel.sse"))
    said = talk(client, app_id, "Hello")
    assert said.text == "Hello there." and said.status == "succeeded" and not said.turn.errors
    assert len(model.generations) == 1
    assert context(client, app_id)[-1] == {"role": "assistant", "content": "Hello there."}


def test_a_cut_off_stream_is_a_model_error_and_saves_nothing(
    client: httpx.Client, model: ReplayModel
) -> None:
    app_id = html_app(client)
    model.reset(fixture_stream("cut_off.sse"))
    said = talk(client, app_id, "A page")
    assert said.text == "<!DOCTYPE html>\n<html><body><h1>"  # shown as it came
    assert said.error_codes == ["model_error"] and said.status == "failed"
    message = said.turn.errors[0]["message"]
    assert "cut off" in message and "while answering" in message
    assert len(model.generations) == 1, "text was shown: a retry would show it twice"
    assert files(client, app_id) == set()
    assert history(client, app_id)[0]["status"] == "failed"
    assert "cut off" in json.dumps(context(client, app_id))  # the model is told


def test_finish_length_is_continued_and_joined(client: httpx.Client, model: ReplayModel) -> None:
    app_id = html_app(client)
    rest = "ck</h1>\n</body>\n</html>"
    model.reset(fixture_stream("openai_finish_length.sse"), text_stream(rest))
    said = talk(client, app_id, "A clock page")
    partial = '<!DOCTYPE html>\n<html lang="en">\n<body>\n<h1>Clo'
    assert said.text == partial + rest and said.status == "succeeded"
    first, second = model.generations
    assert second.messages[:-2] == first.messages and "tools" not in first.body
    assert second.messages[-2] == {"role": "assistant", "content": partial}
    assert second.messages[-1]["role"] == "user" and "cut off" in second.messages[-1]["content"]
    assert context(client, app_id)[-1] == {"role": "assistant", "content": partial + rest}


def test_finish_length_every_time_is_cut_off(client: httpx.Client, model: ReplayModel) -> None:
    app_id = html_app(client)
    cut = fixture_stream("openai_finish_length.sse")
    model.reset(cut, cut, cut)
    said = talk(client, app_id, "A clock page")
    assert said.error_codes == ["cut_off"] and said.status == "failed"
    assert len(model.generations) == 3 and files(client, app_id) == set()
    context(client, app_id)


# -- errors inside the stream ----------------------------------------------------------------


def test_an_error_object_mid_stream_fails_the_turn_clearly(
    client: httpx.Client, model: ReplayModel
) -> None:
    app_id = html_app(client)
    model.reset(fixture_stream("error_mid_stream.sse"))
    said = talk(client, app_id, "A page")
    assert said.text == "Working on it"
    assert said.error_codes == ["model_error"] and said.status == "failed"
    assert said.turn.errors[0]["message"] == (
        f"The model ({CODER}) failed while answering (the partial answer is incomplete): "
        "the endpoint reported an error (server_error): The server had an error while "
        "processing your request. Sorry about that!"
    )
    assert len(model.generations) == 1
    entry = history(client, app_id)[0]
    assert entry["status"] == "failed" and "server_error" in entry["content"]
    context(client, app_id)


def test_an_error_event_before_any_text_is_retried(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = vue_app(client, server)
    model.reset(fixture_stream("error_before_text.sse"))
    said = talk(client, app_id, "Anything new?")
    assert said.text == FINAL and said.status == "succeeded" and not said.turn.errors
    first, retry = model.generations
    assert first.messages == retry.messages  # the same request, again
    context(client, app_id)


def test_a_persistent_error_event_fails_after_the_retries(
    client: httpx.Client, model: ReplayModel
) -> None:
    app_id = html_app(client)
    overloaded = fixture_stream("error_before_text.sse")
    model.reset(overloaded, overloaded, overloaded)
    said = talk(client, app_id, "A page")
    assert said.error_codes == ["model_error"] and said.status == "failed" and said.text == ""
    message = said.turn.errors[0]["message"]
    assert message.startswith(f"The model ({CODER}) failed after 3 attempts: ")
    assert "engine is currently overloaded" in message
    assert len(model.generations) == 3
    context(client, app_id)


# -- HTTP errors -----------------------------------------------------------------------------


def test_429_waits_as_retry_after_says_then_succeeds(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = vue_app(client, server)
    limited = fixture_error("openai_429_retry_after.json", retry_after="1")
    model.reset(limited, fixture_stream("ollama_whole_tool_calls.sse"))
    said = talk(client, app_id, "What is in the project?")
    assert said.status == "succeeded" and not said.turn.errors
    assert said.results() == [("read_dir", "src", True), ("read_file", "src/App.vue", True)]
    refused, retried, after_tools = model.generations
    assert retried.at - refused.at >= 0.9  # Retry-After, not the 0.5 s backoff
    assert refused.messages == retried.messages
    assert len(tool_messages(after_tools.body)) == 2
    context(client, app_id)


def test_a_persistent_429_says_rate_limited(client: httpx.Client, model: ReplayModel) -> None:
    app_id = html_app(client)
    limited = fixture_error("openai_429_retry_after.json", retry_after="0.5")
    model.reset(limited, limited, limited)
    said = talk(client, app_id, "A page")
    assert said.error_codes == ["model_error"] and said.status == "failed"
    assert said.turn.errors[0]["message"].startswith(
        f"The model ({CODER}) failed after 3 attempts: rate limited (HTTP 429: Rate limit reached"
    )
    assert len(model.generations) == 3
    context(client, app_id)


def test_a_429_for_quota_is_not_retried(client: httpx.Client, model: ReplayModel) -> None:
    app_id = html_app(client)
    model.reset(fixture_error("openai_429_insufficient_quota.json"))
    said = talk(client, app_id, "A page")
    assert said.error_codes == ["model_error"] and said.status == "failed"
    message = said.turn.errors[0]["message"]
    assert "out of quota (HTTP 429: You exceeded your current quota" in message
    assert len(model.generations) == 1
    context(client, app_id)


def test_a_401_echoing_a_key_does_not_repeat_it(
    client: httpx.Client, server: Server, model: ReplayModel
) -> None:
    app_id = html_app(client)
    model.reset(fixture_error("openai_401_masked_key.json"))
    said = talk(client, app_id, "A page")
    assert said.error_codes == ["model_error"] and said.status == "failed"
    assert said.turn.errors[0]["message"] == (
        f"The model ({CODER}) failed after 1 attempt: HTTP 401: Incorrect API key provided: "
        "[redacted]. You can find your API key at "
        "https://platform.openai.com/account/api-keys."
    )
    assert "Xy9Z" not in said.raw and len(model.generations) == 1
    shown = str(history(client, app_id)) + json.dumps(context(client, app_id))
    assert KEY not in shown and "Xy9Z" not in shown
    assert server.log is not None and KEY not in server.log.read_text(errors="replace")


def test_a_long_string_is_not_retried_with_a_smaller_window(
    client: httpx.Client, model: ReplayModel
) -> None:
    app_id = html_app(client)
    model.reset(fixture_error("openai_400_string_too_long.json"))
    said = talk(client, app_id, "A page")
    assert said.error_codes == ["model_error"] and said.status == "failed"
    message = said.turn.errors[0]["message"]
    assert "HTTP 400: Invalid 'messages[2].content': string too long" in message
    assert "context" not in message and len(model.generations) == 1
    context(client, app_id)


CONTEXT_ERRORS = [
    "openai_400_context_length.json",
    "deepseek_400_context_length.json",
    "vllm_400_context_length.json",
    "qwen_400_input_length.json",
    "llamacpp_400_context_size.json",
]
# An answer long enough that a window of half the tokens has no room for all of them.
LONG = " ".join(f"Paragraph {i} of a long, careful answer about the page." for i in range(60))


def with_history(client: httpx.Client, model: ReplayModel, turns: int = 3) -> str:
    app_id = html_app(client)
    for n in range(turns):
        model.reset(final=text_stream(f"{n}: {LONG}"))
        assert talk(client, app_id, f"Tell me more ({n})").status == "succeeded"
    return app_id


@pytest.mark.parametrize("name", CONTEXT_ERRORS)
def test_context_too_long_once_is_retried_with_a_smaller_window(
    client: httpx.Client, model: ReplayModel, name: str
) -> None:
    app_id = with_history(client, model)
    model.reset(fixture_error(name))
    said = talk(client, app_id, "And the footer?")
    assert said.status == "succeeded" and not said.turn.errors and said.text == FINAL
    refused, smaller = model.generations
    assert len(smaller.messages) < len(refused.messages) and smaller.chars < refused.chars
    assert smaller.messages[0] == refused.messages[0]  # the system prompt stays
    assert smaller.messages[-1] == refused.messages[-1]  # and so does the request
    assert smaller.messages[-1] == {"role": "user", "content": "And the footer?"}
    assert context(client, app_id)[-1] == {"role": "assistant", "content": FINAL}


@pytest.mark.parametrize("name", CONTEXT_ERRORS)
def test_context_too_long_twice_fails_saying_so(
    client: httpx.Client, model: ReplayModel, name: str
) -> None:
    app_id = with_history(client, model, turns=1)
    too_long = fixture_error(name)
    model.reset(too_long, too_long)
    said = talk(client, app_id, "And the footer?")
    assert said.error_codes == ["model_error"] and said.status == "failed"
    message = said.turn.errors[0]["message"]
    assert message.startswith("the conversation is too long for the model's context")
    assert "does not fit the model's context window (HTTP 400: " in message
    refused, smaller = model.generations
    assert smaller.chars < refused.chars
    entry = history(client, app_id)[0]
    assert entry["status"] == "failed" and "too long for the model's context" in entry["content"]
    context(client, app_id)


def test_every_fixture_is_replayed_here() -> None:
    """A new fixture gets an end-to-end test too."""
    source = Path(__file__).read_text(encoding="utf-8")
    names = {p.name for p in FIXTURES.iterdir() if p.suffix in (".sse", ".json")}
    assert names and all(f'"{n}"' in source for n in names), names - {
        n for n in names if f'"{n}"' in source
    }
