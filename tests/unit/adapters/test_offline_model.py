"""The offline scripted model: the OpenAI wire format it speaks and the answers it scripts."""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
from html.parser import HTMLParser
from typing import Any

import httpx
import pytest

from zerocode.adapters.model.offline.base import Script, ScriptedCall, parse_request
from zerocode.adapters.model.offline.flaws import (
    COMPONENT,
    COUNTER_COMPONENT,
    PAGE_FIXED,
    VUE_FIXED,
    seeded_flaw,
)
from zerocode.adapters.model.offline.names import app_name
from zerocode.adapters.model.offline.script import answer, route
from zerocode.adapters.model.offline.transport import OfflineTransport, argument_pieces
from zerocode.adapters.model.offline.vue import BROKEN_HOME_VIEW, HOME_VIEW, VERSIONS
from zerocode.adapters.model.openai import OFFLINE_DESCRIPTION, build_offline_model
from zerocode.bootstrap.parts import chat_model
from zerocode.bootstrap.settings import Settings
from zerocode.engine import prompts
from zerocode.engine.codegen import CodeParseError, parse_html
from zerocode.engine.repair import Failure, continue_message, repair_message
from zerocode.memory.facade import interrupted_note, user_content
from zerocode.memory.messages import from_openai_list
from zerocode.memory.tokens import REPLY_PRIMING, count_tokens, message_tokens
from zerocode.publishing import toolchain

URL = "http://offline.invalid/v1/chat/completions"


def post(body: dict[str, Any]) -> httpx.Response:
    """One request through the transport; the body is read to the end."""

    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=OfflineTransport()) as client:
            response = await client.post(URL, json=body)
            await response.aread()
            return response

    return asyncio.run(go())


def conversation(kind: str, *turns: str) -> list[dict[str, Any]]:
    messages = [{"role": "system", "content": prompts.load(kind)}]
    return messages + [{"role": "user", "content": t} for t in turns]


def sse_chunks(response: httpx.Response) -> list[dict[str, Any]]:
    """Parse an SSE body strictly: ``data:`` events separated by blank lines, ``[DONE]`` last."""
    assert response.headers["content-type"].startswith("text/event-stream")
    events = response.text.split("\n\n")
    assert events[-1] == "" and events[-2] == "data: [DONE]"
    chunks = []
    for event in events[:-2]:
        assert event.startswith("data: ") and "\n" not in event, event
        chunks.append(json.loads(event[len("data: ") :]))
    return chunks


def streamed(messages: list[dict[str, Any]], **extra: Any) -> list[dict[str, Any]]:
    return sse_chunks(post({"model": "m", "messages": messages, "stream": True, **extra}))


def text_of(chunks: list[dict[str, Any]]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


def code_blocks(text: str) -> dict[str, str]:
    """The answer's files, by language (its ```checks block is no file)."""
    found = re.findall(r"```(\w+)\n(.*?)\n```", text, re.DOTALL)
    return {lang: body for lang, body in found if lang != "checks"}


class Headings(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.h1: list[str] = []
        self._in_h1 = False
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_h1 = tag == "h1"
        if self._in_h1:
            self.h1.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_h1 = self._in_h1 and tag != "h1"

    def handle_data(self, data: str) -> None:
        if self._in_h1:
            self.h1[-1] += data


def headings(page: str) -> list[str]:
    parser = Headings()
    parser.feed(page)
    parser.close()
    return [h.strip() for h in parser.h1]


# -- the wire ------------------------------------------------------------------------------


def test_stream_is_chat_completion_chunks_with_split_tool_arguments() -> None:
    messages = conversation("vue_project", "A recipe book with vue router")
    chunks = streamed(messages, stream_options={"include_usage": True})
    ids = {c["id"] for c in chunks}
    assert len(ids) == 1 and ids.pop().startswith("chatcmpl-")
    assert all(c["object"] == "chat.completion.chunk" and c["model"] == "m" for c in chunks)
    body, usage_chunk = chunks[:-1], chunks[-1]
    assert body[0]["choices"][0]["delta"]["role"] == "assistant"
    calls: dict[int, dict[str, Any]] = {}
    for chunk in body:
        (choice,) = chunk["choices"]
        assert choice["index"] == 0 and chunk["usage"] is None
        for fragment in choice["delta"].get("tool_calls", ()):
            if fragment["index"] not in calls:  # the first fragment names the call
                assert fragment["id"].startswith("call_") and fragment["type"] == "function"
                calls[fragment["index"]] = {
                    "id": fragment["id"],
                    "parts": [],
                    "name": fragment["function"]["name"],
                }
            else:
                assert "id" not in fragment and "name" not in fragment["function"]
            calls[fragment["index"]]["parts"].append(fragment["function"]["arguments"])
    assert [c["choices"][0]["finish_reason"] for c in body][-1] == "tool_calls"
    assert all(c["choices"][0]["finish_reason"] is None for c in body[:-1])
    assert sorted(calls) == list(range(len(calls))) and len(calls) >= 7
    assert len({c["id"] for c in calls.values()}) == len(calls)
    for call in calls.values():
        assert call["name"] == "write_file" and len(call["parts"]) >= 2
        args = json.loads("".join(call["parts"]))
        assert set(args) == {"path", "content"}
    # the usage chunk: no choices, tokens counted with the real tokenizer
    assert usage_chunk["choices"] == []
    usage = usage_chunk["usage"]
    prompt = sum(message_tokens(m) for m in from_openai_list(messages)) + REPLY_PRIMING
    script = answer(messages)
    completion = count_tokens(script.text) + sum(
        count_tokens(c.name) + count_tokens(c.arguments) for c in script.calls
    )
    assert usage == {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def test_without_include_usage_there_is_no_usage_chunk() -> None:
    chunks = streamed(conversation("routing", "a calculator"))
    assert all(c["choices"] and "usage" not in c for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def test_text_arrives_in_several_pieces() -> None:
    chunks = streamed(conversation("html", "A pomodoro timer"))
    pieces = [c["choices"][0]["delta"].get("content") for c in chunks[1:-1]]
    assert len(pieces) > 20 and all(pieces)


def test_the_body_is_streamed_not_buffered() -> None:
    async def go() -> int:
        async with httpx.AsyncClient(transport=OfflineTransport()) as client:
            body = {"model": "m", "messages": conversation("html", "a clock"), "stream": True}
            async with client.stream("POST", URL, json=body) as response:
                return len([part async for part in response.aiter_raw()])

    assert asyncio.run(go()) > 10


def test_non_stream_request_gets_a_chat_completion() -> None:
    messages = conversation("vue_project", "a vue shop")
    response = post({"model": "m", "messages": messages})
    data = response.json()
    assert data["object"] == "chat.completion"
    (choice,) = data["choices"]
    assert choice["finish_reason"] == "tool_calls"
    calls = choice["message"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["write_file"] * len(calls)
    assert data["usage"]["prompt_tokens"] > 0


def test_same_request_gives_the_same_bytes() -> None:
    body = {
        "model": "m",
        "messages": conversation("vue_project", "a vue blog"),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    assert post(body).content == post(body).content
    other = {**body, "messages": conversation("vue_project", "a vue diary")}
    assert post(body).content != post(other).content


@pytest.mark.parametrize(
    ("body", "status"),
    [(b"not json", 400), (b'{"messages": []}', 400), (b'{"messages": "hi"}', 400)],
)
def test_bad_requests_get_an_openai_error_body(body: bytes, status: int) -> None:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=OfflineTransport()) as client:
            return await client.post(URL, content=body)

    response = asyncio.run(go())
    assert response.status_code == status
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_unknown_route_is_404_and_models_are_listed() -> None:
    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(transport=OfflineTransport()) as client:
            return (
                await client.get("http://offline.invalid/v1/nothing"),
                await client.get("http://offline.invalid/v1/models"),
            )

    missing, models = asyncio.run(go())
    assert missing.status_code == 404 and "error" in missing.json()
    assert models.json()["data"][0]["id"] == "zerocode-offline"


def test_argument_pieces_always_split() -> None:
    for arguments in ("{}", '{"path": "."}', json.dumps({"content": "x" * 500})):
        pieces = argument_pieces(arguments)
        assert len(pieces) >= 2 and "".join(pieces) == arguments


# -- routing and naming --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("description", "mode"),
    [
        ("A todo app in Vue with a router", "vue_project"),
        ("A multi-page portfolio", "vue_project"),
        ("A single-page app for notes", "vue_project"),
        ("An SPA for booking rooms", "vue_project"),
        ("A landing page project for my bakery", "vue_project"),
        ("A multi-file landing page", "multi_file"),
        ("A quiz with a separate CSS file", "multi_file"),
        ("A page with style.css and a script", "multi_file"),
        ("A tip calculator", "html"),
        ("A space invaders game", "html"),
        ("A revue of my favourite films", "html"),  # "vue" inside a word is not Vue
        ("做一个待办事项的Vue应用，有关于页面", "vue_project"),
        ("用vue3写一个记账本", "vue_project"),
        ("一个带路由的博客", "vue_project"),
        ("做一个单页应用来管理联系人", "vue_project"),
        ("做一个多页面的公司网站", "multi_file"),
        ("一个个人作品集网站", "multi_file"),
        ("一个多文件的着陆页，CSS 单独放", "multi_file"),
        ("做一个小费计算器", "html"),
    ],
)
def test_routing_answers_one_mode(description: str, mode: str) -> None:
    assert text_of(streamed(conversation("routing", description))) == mode


@pytest.mark.parametrize(
    ("description", "name"),
    [
        ("Build me a simple tip calculator", "Tip Calculator"),
        ("A todo app in Vue with a router", "Todo App"),
        ("做一个番茄钟网页", "番茄钟"),
        ("", "My App"),
        (
            "Create an extraordinarily comprehensive multilingual encyclopaedia browser",
            "Extraordinarily Comprehensive",
        ),
    ],
)
def test_naming_gives_a_short_title(description: str, name: str) -> None:
    answered = text_of(streamed(conversation("naming", description)))
    assert answered == name == app_name(description)
    assert len(answered) <= 30


# -- html and multi_file -------------------------------------------------------------------


def test_html_creation_is_one_parseable_page_with_a_heading() -> None:
    text = text_of(streamed(conversation("html", "A pomodoro timer <for> students & me")))
    blocks = code_blocks(text)
    assert list(blocks) == ["html"]
    page = blocks["html"]
    assert page.startswith("<!DOCTYPE html>") and "<script>" in page and "<style>" in page
    assert headings(page) == ["Pomodoro Timer"]
    assert "&lt;for&gt;" in page and "<for>" not in page  # the description is escaped


def test_multi_file_creation_links_its_three_files() -> None:
    blocks = code_blocks(text_of(streamed(conversation("multi_file", "A weather dashboard"))))
    assert list(blocks) == ["html", "css", "javascript"]
    assert 'href="style.css"' in blocks["html"] and 'src="script.js"' in blocks["html"]
    assert headings(blocks["html"]) == ["Weather Dashboard"]
    assert "addEventListener" in blocks["javascript"]


def change(
    kind: str, description: str, request: str, element: dict[str, Any] | None = None
) -> tuple[str, str]:
    """(the page created for description, the answer to the change request)."""
    messages = conversation(kind, description)
    created = text_of(streamed(messages))
    messages += [
        {"role": "assistant", "content": created},
        {"role": "user", "content": user_content(request, element)},
    ]
    return created, text_of(streamed(messages))


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_selected_element_text_is_replaced(kind: str) -> None:
    element = {"pagePath": "/", "tag": "button", "selector": "main > button", "text": "Try it"}
    created, answered = change(kind, "A pomodoro timer", 'Make it say "Start now"', element)
    before, after = code_blocks(created), code_blocks(answered)
    assert list(after) == list(before)
    assert ">Start now</button>" in after["html"] and "Try it" not in after["html"]
    assert after["html"] == before["html"].replace(">Try it<", ">Start now<")
    assert {k: v for k, v in after.items() if k != "html"} == {
        k: v for k, v in before.items() if k != "html"
    }
    assert answered.startswith("Changed “Try it” to “Start now”.")


def test_element_text_with_quotes_survives_the_repr() -> None:
    messages = conversation("html", "Bob's shop")
    created = text_of(streamed(messages))
    (title,) = headings(code_blocks(created)["html"])
    assert title == "Bob's Shop"
    request = user_content('Rename to "Alice & Co"', {"tag": "h1", "text": title})
    assert 'text: "Bob\'s Shop"' in request
    messages += [{"role": "assistant", "content": created}, {"role": "user", "content": request}]
    page = code_blocks(text_of(streamed(messages)))["html"]
    assert headings(page) == ["Alice & Co"] and "<h1>Alice &amp; Co</h1>" in page


def test_without_element_the_first_heading_changes() -> None:
    _, answered = change("html", "A tip calculator", 'Call it "Tipper"')
    assert headings(code_blocks(answered)["html"]) == ["Tipper"]
    assert "<title>Tip Calculator</title>" in answered  # only the heading was asked for


def test_without_a_quoted_text_nothing_changes() -> None:
    _, answered = change("html", "A tip calculator", "make the title nicer")
    assert code_blocks(answered) == {} and "double quotes" in answered


def test_an_absent_element_is_reported_not_invented() -> None:
    _, answered = change(
        "multi_file", "A tip calculator", 'Change to "X"', {"tag": "p", "text": "No such paragraph"}
    )
    assert code_blocks(answered) == {}
    assert (
        answered == "I could not find “No such paragraph” in the current page, so nothing "
        "was changed."
    )


def test_changes_build_on_the_newest_version() -> None:
    messages = conversation("html", "A tip calculator")
    for new in ("One", "Two"):
        messages.append({"role": "assistant", "content": text_of(streamed(messages))})
        messages.append({"role": "user", "content": f'Title "{new}"'})
    page = code_blocks(text_of(streamed(messages)))["html"]
    assert headings(page) == ["Two"]


# -- vue scripts and triggers --------------------------------------------------------------


def test_vue_creation_files_pin_versions_and_use_hash_history() -> None:
    script = answer(conversation("vue_project", "A recipe book with vue router"))
    files = {a["path"]: a["content"] for a in (json.loads(c.arguments) for c in script.calls)}
    assert set(files) == {
        "package.json",
        "index.html",
        "src/main.js",
        "src/App.vue",
        "src/router/index.js",
        "src/views/HomeView.vue",
        "src/views/AboutView.vue",
    }
    package = json.loads(files["package.json"])
    assert package["scripts"]["build"] == "vite build"
    assert {**package["dependencies"], **package["devDependencies"]} == VERSIONS
    assert toolchain.check_package_json(files["package.json"].encode()) is None
    assert "createWebHistory()" in files["src/router/index.js"]
    assert "<router-view/>" in files["src/App.vue"]
    assert "<h1>Recipe Book</h1>" in files["src/views/HomeView.vue"]


@pytest.mark.parametrize(
    ("trigger", "name", "check"),
    [
        ("[[unknown-tool]]", "format_disk", lambda a: True),
        ("[[escape]]", "write_file", lambda a: json.loads(a)["path"] == "../../outside.txt"),
        ("[[broken-vue]]", "write_file", lambda a: "HomeView" in a),
    ],
)
def test_tool_triggers(trigger: str, name: str, check: Any) -> None:
    script = answer(conversation("vue_project", f"a vue app {trigger}"))
    assert any(c.name == name and check(c.arguments) for c in script.calls)


def test_bad_args_trigger_sends_invalid_json() -> None:
    (call,) = answer(conversation("vue_project", "x [[bad-args]]")).calls
    with pytest.raises(ValueError):
        json.loads(call.arguments)


def test_broken_vue_in_a_creation_is_the_whole_project_with_one_broken_view() -> None:
    script = answer(conversation("vue_project", "a vue app [[broken-vue]]"))
    files = {a["path"]: a["content"] for a in (json.loads(c.arguments) for c in script.calls)}
    assert len(files) == 7 and files["src/views/HomeView.vue"] == BROKEN_HOME_VIEW


def test_pacing_triggers() -> None:
    assert answer(conversation("html", "x [[pace=25]]")).pace == 0.025
    slow = answer(conversation("html", "x [[slow]]"))
    assert slow.slow and not slow.cut
    assert answer(conversation("routing", "x [[slow]]")).slow is False
    assert answer(conversation("html", "x [[stream-error]]")).cut


def test_stream_error_cuts_the_body_before_the_finish() -> None:
    async def go() -> tuple[list[bytes], BaseException | None]:
        parts: list[bytes] = []
        body = {
            "model": "m",
            "messages": conversation("html", "x [[stream-error]]"),
            "stream": True,
        }
        async with (
            httpx.AsyncClient(transport=OfflineTransport()) as client,
            client.stream("POST", URL, json=body) as response,
        ):
            try:
                async for part in response.aiter_raw():
                    parts.append(part)
            except httpx.ReadError as exc:
                return parts, exc
        return parts, None

    parts, error = asyncio.run(go())
    assert error is not None and len(parts) >= 2
    assert not any(b'finish_reason": "stop' in p or b"[DONE]" in p for p in parts)


def test_unmarked_prompt_gets_an_honest_text() -> None:
    script = answer([{"role": "system", "content": "hi"}, {"role": "user", "content": "x"}])
    assert "did not recognise" in script.text and not script.calls


def test_an_interrupted_turn_does_not_make_the_next_request_a_change() -> None:
    messages = conversation("html", "A tip calculator")
    messages += [
        {"role": "assistant", "content": interrupted_note(1, "client gone")},
        {"role": "user", "content": "A tip calculator"},
    ]
    assert list(code_blocks(answer(messages).text)) == ["html"]
    vue_messages = conversation("vue_project", "a vue shop")
    vue_messages += [
        {"role": "assistant", "content": interrupted_note(1, "crash or timeout")},
        {"role": "user", "content": "a vue shop"},
    ]
    assert len(answer(vue_messages).calls) == 7


def test_a_change_whose_creation_left_the_window_is_still_a_change() -> None:
    vue_messages = conversation("vue_project", 'Title "Old"')
    vue_messages += [
        {"role": "assistant", "content": "Changed “A” to “Old” in x."},
        {"role": "user", "content": 'Title "New"'},
    ]
    assert [c.name for c in answer(vue_messages).calls] == ["read_dir"]
    page_messages = conversation("html", 'Title "Old"')
    page_messages += [
        {"role": "assistant", "content": "Changed it."},
        {"role": "user", "content": 'Title "New"'},
    ]
    assert answer(page_messages).text == (
        "I could not find the current version of the page in "
        "our conversation, so nothing was changed."
    )


# -- summary (the running summary of turns evicted from the window) --------------------------

SUMMARY_SYSTEM = "<!-- zerocode:prompt=summary -->\nSummarise the turns below."


def summarise(text: str) -> str:
    script = answer(
        [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": text}]
    )
    assert script.calls == () and script.finish_reason == "stop"
    return script.text


def test_summary_lists_the_turn_lines_in_order_under_a_heading() -> None:
    text = (
        "Summarise these.\nTurn 1: user asked for a shop\n"
        "  Turn 9: indented, not a turn line\nnotes\nTurn 2: assistant wrote index.html\n"
    )
    assert summarise(text) == (
        "Earlier in this conversation:\nTurn 1: user asked for a shop\n"
        "Turn 2: assistant wrote index.html"
    )


def test_summary_cuts_long_lines_to_160_characters_ending_in_an_ellipsis() -> None:
    exact, long = "Turn 1: " + "a" * 152, "Turn 2: " + "b" * 300
    lines = summarise(f"{exact}\n{long}").split("\n")
    assert lines[1] == exact and len(exact) == 160
    assert lines[2] == long[:159] + "…" and len(lines[2]) == 160


def test_summary_keeps_the_last_20_turn_lines() -> None:
    lines = summarise("\n".join(f"Turn {i}: step {i}" for i in range(1, 26))).split("\n")
    assert lines[0] == "Earlier in this conversation:"
    assert lines[1:] == [f"Turn {i}: step {i}" for i in range(6, 26)]


def test_summary_without_turn_lines_is_the_heading_alone() -> None:
    assert summarise("nothing here\nturn 1: lower case") == "Earlier in this conversation:"


def test_summary_streams_as_plain_text_with_no_tool_calls() -> None:
    messages = [
        {"role": "system", "content": SUMMARY_SYSTEM},
        {"role": "user", "content": "Turn 1: a\nTurn 2: b"},
    ]
    chunks = streamed(messages)
    assert text_of(chunks) == "Earlier in this conversation:\nTurn 1: a\nTurn 2: b"
    assert not any(c["choices"] and "tool_calls" in c["choices"][0]["delta"] for c in chunks)
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"


# -- feedback inside a turn, and flaws (issue 14) ---------------------------------------------

BUILD_FAILED = Failure("build", "the project did not build", ("src/views/HomeView.vue:5:0",))
PAGE_FAILS = Failure("runtime", "the page fails in the browser: uncaught TypeError", ("x",))


def tool_step(script: Script, *, ok: Any = True) -> list[dict[str, Any]]:
    """The assistant step of ``script`` and a result for each call, as the engine sends them
    (ids unique per step; ``ok(path)`` says which calls succeed; bad JSON always fails)."""
    step = f"s{hashlib.sha256(repr(script.calls).encode()).hexdigest()[:8]}"
    calls = [
        {
            "id": f"{step}-{i}",
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for i, c in enumerate(script.calls)
    ]
    out: list[dict[str, Any]] = [
        {"role": "assistant", "content": script.text or None, "tool_calls": calls}
    ]
    for call, c in zip(calls, script.calls, strict=True):
        try:
            path = json.loads(c.arguments)["path"]
        except ValueError:
            path = None
        good = path is not None and (ok(path) if callable(ok) else ok)
        content = f"wrote {path}" if good else "ERROR: not run: the arguments are incomplete"
        out.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    return out


def said(text: str, feedback: str) -> list[dict[str, Any]]:
    """The feedback unit: the assistant text it answers, then the platform's message."""
    return [{"role": "assistant", "content": text}, {"role": "user", "content": feedback}]


def written(script: Script) -> dict[str, str]:
    return {a["path"]: a["content"] for a in (json.loads(c.arguments) for c in script.calls)}


def plain_vue() -> dict[str, str]:
    return written(answer(conversation("vue_project", "A vue shop")))


def test_the_request_is_the_newest_user_message_that_is_not_feedback() -> None:
    messages = conversation("vue_project", "A vue shop [[flaw=syntax]]")
    messages += said("Created it.", repair_message(BUILD_FAILED, 1, 2))
    req = parse_request(messages)
    assert req.text == "A vue shop [[flaw=syntax]]" and req.triggers == {"[[flaw=syntax]]"}
    assert req.raw == req.text and req.earlier == messages[:1]
    assert req.feedback == messages[-1]["content"] and req.repairing and not req.continuing
    assert (req.repairs, req.continues, req.since, req.turn) == (1, 0, [], messages[2:])
    messages += said("Fixed it.", repair_message(BUILD_FAILED, 2, 2))
    messages += said("part", continue_message())
    req = parse_request(messages)
    assert (req.repairs, req.continues, req.partial) == (2, 1, "part") and req.continuing


def test_without_feedback_the_request_is_read_as_before() -> None:
    messages = conversation("vue_project", "A vue shop")
    messages += tool_step(answer(messages))
    req = parse_request(messages)
    assert req.feedback is None and (req.repairs, req.continues, req.partial) == (0, 0, "")
    assert req.since == req.turn == messages[2:] and req.earlier == messages[:1]


def test_repair_feedback_without_a_flaw_gets_the_request_answered_again() -> None:
    messages = conversation("html", "A tip calculator")
    first = answer(messages)
    messages += said(first.text, repair_message(PAGE_FAILS, 1, 2))
    again = answer(messages)
    # the same answer, but the checks are not stated twice in a turn
    assert "```checks" in first.text and "```checks" not in again.text
    assert first.text.startswith(again.text) and again.calls == first.calls == ()


@pytest.mark.parametrize(
    ("flaw", "broken", "fix_path", "fixed"),
    [
        ("syntax", "const clicks = ref(0\n", HOME_VIEW, VUE_FIXED["syntax"]),
        ("import", "import ClickCounter from '../components/ClickCounter.vue'", COMPONENT, None),
        ("runtime", "ref(saved.count)", HOME_VIEW, VUE_FIXED["runtime"]),
    ],
)
def test_a_vue_flaw_is_written_then_repaired_on_feedback(
    flaw: str, broken: str, fix_path: str, fixed: str | None
) -> None:
    messages = conversation("vue_project", f"A vue shop [[flaw={flaw}]]")
    first = answer(messages)
    files, plain = written(first), plain_vue()
    assert set(files) == set(plain) and first.finish_reason == "tool_calls"
    assert broken in files[HOME_VIEW] and broken not in plain[HOME_VIEW]
    assert {p: c for p, c in files.items() if p != HOME_VIEW} == {
        p: c for p, c in plain.items() if p != HOME_VIEW
    }
    messages += tool_step(first)
    report = answer(messages)
    assert report.calls == () and report.text.startswith("Created **Shop**")
    messages += said(report.text, repair_message(BUILD_FAILED, 1, 2))
    repair = answer(messages)
    assert list(written(repair)) == [fix_path]
    expected = COUNTER_COMPONENT if flaw == "import" else plain[HOME_VIEW]
    assert written(repair)[fix_path] == expected
    messages += tool_step(repair)
    final = answer(messages)
    assert final.calls == () and final.text == (fixed or VUE_FIXED["import"])
    messages += said(final.text, repair_message(BUILD_FAILED, 2, 2))  # it fails again after all
    assert written(answer(messages)) == written(repair)  # the same fix, deterministically


def test_a_vue_fix_that_fails_is_reported_as_failed() -> None:
    messages = conversation("vue_project", "A vue shop [[flaw=syntax]]")
    messages += tool_step(answer(messages))
    messages += said(answer(messages).text, repair_message(BUILD_FAILED, 1, 2))
    messages += tool_step(answer(messages), ok=False)
    text = answer(messages).text
    assert text.startswith("1 of 1 tool calls failed") and "Fixed" not in text


def test_a_stubborn_vue_model_writes_another_broken_view_on_every_repair() -> None:
    messages = conversation("vue_project", "A vue shop [[flaw=stubborn]]")
    first = answer(messages)
    views = [written(first)[HOME_VIEW]]
    assert "const clicks = ref(0\n" in views[0]
    messages += tool_step(first)
    for attempt in range(1, 6):
        messages += said(answer(messages).text, repair_message(BUILD_FAILED, attempt, 5))
        repair = answer(messages)
        assert list(written(repair)) == [HOME_VIEW]
        views.append(written(repair)[HOME_VIEW])
        messages += tool_step(repair)
        assert answer(messages).text == f"Wrote {HOME_VIEW}."
    plain = plain_vue()[HOME_VIEW]
    assert all(a != b for a, b in itertools.pairwise(views))  # each write changes the file
    assert all(v != plain and "const clicks = ref(0)\n" not in v for v in views)


def test_a_cut_off_vue_step_is_followed_by_the_files_it_did_not_write() -> None:
    messages = conversation("vue_project", "A vue shop [[flaw=cutoff]]")
    first = answer(messages)
    assert first.finish_reason == "length" and len(first.calls) == 4
    plain = plain_vue()
    assert written(Script(calls=first.calls[:3])) == dict(list(plain.items())[:3])
    with pytest.raises(ValueError):
        json.loads(first.calls[3].arguments)
    whole = ScriptedCall.of("write_file", path="src/App.vue", content=plain["src/App.vue"])
    assert whole.arguments.startswith(first.calls[3].arguments)  # cut mid-JSON
    messages += tool_step(first)  # the cut call fails: its arguments are not JSON
    rest = answer(messages)
    assert rest.finish_reason == "tool_calls"
    assert written(rest) == dict(list(plain.items())[3:])
    messages += tool_step(rest)
    final = answer(messages)
    assert final.calls == () and final.text.startswith(
        "Created **Shop**: a Vue 3 + Vite project with 7 files"
    )
    chunks = streamed(conversation("vue_project", "A vue shop [[flaw=cutoff]]"))
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"


@pytest.mark.parametrize("kind", ["html", "multi_file"])
def test_a_cut_off_page_is_continued_with_exactly_the_rest(kind: str) -> None:
    plain = answer(conversation(kind, "A tip calculator")).text
    messages = conversation(kind, "A tip calculator [[flaw=cutoff]]")
    first = answer(messages)
    assert first.finish_reason == "length" and plain.startswith(first.text)
    assert "```html" in first.text and first.text.count("```") == 1  # inside its first block
    with pytest.raises(CodeParseError, match="not closed"):
        parse_html(first.text)
    rest = answer(messages + said(first.text, continue_message()))
    assert rest.finish_reason == "stop" and first.text + rest.text == plain
    chunks = streamed(messages)
    assert text_of(chunks) == first.text
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"
    completion = post({"model": "m", "messages": messages}).json()
    assert completion["choices"][0]["finish_reason"] == "length"


def test_a_page_cut_off_always_never_completes() -> None:
    plain = answer(conversation("html", "A tip calculator")).text
    messages = conversation("html", "A tip calculator [[flaw=cutoff-always]]")
    parts = [answer(messages)]
    for _ in range(4):  # the engine sends everything so far, then one continue message
        so_far = "".join(p.text for p in parts)
        parts.append(answer(messages + said(so_far, continue_message())))
    assert all(p.finish_reason == "length" and p.text for p in parts)
    joined = "".join(p.text for p in parts)
    assert plain.startswith(joined) and len(parts[0].text) < len(plain) // 4
    with pytest.raises(CodeParseError, match="not closed"):
        parse_html(joined)
    # per part in the transcript (one feedback unit each) reads the same
    chain = list(messages)
    for part in parts[:-1]:
        chain += said(part.text, continue_message())
    assert answer(chain) == parts[-1]


@pytest.mark.parametrize("kind", ["html", "multi_file"])
@pytest.mark.parametrize(
    ("flaw", "mark"),
    [("syntax", "clicks += 1"), ("import", "app.js"), ("runtime", "getElementById('start')")],
)
def test_a_page_flaw_is_answered_then_repaired_with_the_whole_unflawed_answer(
    kind: str, flaw: str, mark: str
) -> None:
    plain = code_blocks(answer(conversation(kind, "A tip calculator")).text)
    messages = conversation(kind, f"A tip calculator [[flaw={flaw}]]")
    first = answer(messages)
    blocks = code_blocks(first.text)
    assert list(blocks) == list(plain) and blocks != plain
    if kind == "multi_file" and flaw == "import":
        assert 'src="js/script.js"' in blocks["html"]
    elif flaw == "import":
        assert (
            '<script src="app.js"></script>' in blocks["html"]
            and "addEventListener" not in blocks["html"]
        )
    else:
        script = blocks["html" if kind == "html" else "javascript"]
        assert mark in script and (flaw != "syntax" or "});" not in script)
    repair = answer(messages + said(first.text, repair_message(PAGE_FAILS, 1, 2)))
    assert repair.text.startswith(PAGE_FIXED[flaw]) and code_blocks(repair.text) == plain


def test_a_stubborn_page_keeps_its_broken_script() -> None:
    messages = conversation("html", "A tip calculator [[flaw=stubborn]]")
    first = answer(messages)
    assert "getElementById('start')" in first.text
    for attempt in (1, 2):
        messages += said(answer(messages).text, repair_message(PAGE_FAILS, attempt, 2))
        again = answer(messages)
        assert code_blocks(again.text) == code_blocks(first.text)


def test_flaw_triggers_act_on_creations_only() -> None:
    messages = conversation("html", "A tip calculator")
    messages += [{"role": "assistant", "content": answer(messages).text}]
    change = answer([*messages, {"role": "user", "content": 'Title "X" [[flaw=runtime]]'}])
    assert change == answer([*messages, {"role": "user", "content": 'Title "X"'}])
    assert answer(conversation("routing", "a vue app [[flaw=syntax]]")).text == "vue_project"


# -- the flawed mode -------------------------------------------------------------------------

CREATIONS = [
    f"{what} for {who}"
    for what in ("A todo app", "A vue recipe book", "A weather page", "A multi-file portfolio")
    for who in (
        "students",
        "cats",
        "a bakery",
        "runners",
        "my team",
        "gardeners",
        "a choir",
        "chess players",
        "a library",
        "travellers",
    )
]


def test_the_flawed_mode_flaws_about_half_the_creations_deterministically() -> None:
    assert len(CREATIONS) == 40
    chosen = [seeded_flaw(7, text) for text in CREATIONS]
    assert chosen == [seeded_flaw(7, text) for text in CREATIONS]  # deterministic
    flawed = [c for c in chosen if c is not None]
    assert 12 <= len(flawed) <= 28, chosen
    assert {"syntax", "runtime"} <= set(flawed) and set(flawed) <= {
        "syntax",
        "import",
        "runtime",
        "cutoff",
    }
    assert chosen != [seeded_flaw(8, text) for text in CREATIONS]  # the seed matters
    for text, flaw in zip(CREATIONS, chosen, strict=True):
        messages = conversation(route(text), text)
        seeded, plain = answer(messages, flawed_seed=7), answer(messages)
        assert seeded == answer(messages, flawed_seed=7)
        assert (seeded != plain) == (flaw is not None), (text, flaw)
        # the flaw is the one its trigger makes; [[flaw=none]] turns the mode off
        trigger = f"[[flaw={flaw or 'none'}]]"
        named = [messages[0], {"role": "user", "content": f"{text} {trigger}"}]
        assert answer(named) == (seeded if flaw else plain)
        assert answer(named, flawed_seed=7) == answer(named)


def test_the_flawed_mode_repairs_on_feedback() -> None:
    seed, text = next(
        (seed, t)
        for seed in range(100)
        for t in CREATIONS
        if seeded_flaw(seed, t) == "syntax" and route(t) == "vue_project"
    )
    messages = conversation("vue_project", text)
    first = answer(messages, flawed_seed=seed)
    assert "const clicks = ref(0\n" in written(first)[HOME_VIEW]
    messages += tool_step(first)
    messages += said(answer(messages, flawed_seed=seed).text, repair_message(BUILD_FAILED, 1, 2))
    plain = written(answer(conversation("vue_project", text)))
    assert written(answer(messages, flawed_seed=seed)) == {HOME_VIEW: plain[HOME_VIEW]}


def test_the_flawed_mode_leaves_changes_and_other_triggers_alone() -> None:
    messages = conversation("html", "A todo app for cats")
    messages += [{"role": "assistant", "content": answer(messages).text}]
    messages += [{"role": "user", "content": 'Title "Cats"'}]
    assert answer(messages, flawed_seed=7) == answer(messages)
    vue = conversation("vue_project", "A vue recipe book for cats [[escape]]")
    assert answer(vue, flawed_seed=7) == answer(vue)


def test_the_flawed_mode_over_the_wire_and_from_settings() -> None:
    text = next(t for t in CREATIONS if seeded_flaw(7, t) == "cutoff" and route(t) != "vue_project")
    body = {"model": "m", "messages": conversation(route(text), text)}

    async def go(seed: int | None) -> dict[str, Any]:
        async with httpx.AsyncClient(transport=OfflineTransport(flawed_seed=seed)) as client:
            return (await client.post(URL, json=body)).json()  # type: ignore[no-any-return]

    assert asyncio.run(go(7))["choices"][0]["finish_reason"] == "length"
    assert asyncio.run(go(None))["choices"][0]["finish_reason"] == "stop"
    assert "flawed mode, seed 7" in build_offline_model(7).description
    assert build_offline_model().description == OFFLINE_DESCRIPTION
    assert (
        "flawed mode, seed 3"
        in chat_model(Settings(offline_model="flawed", offline_model_seed=3)).description
    )
    assert chat_model(Settings()).description == OFFLINE_DESCRIPTION
