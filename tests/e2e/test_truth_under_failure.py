"""Failures inside a turn, through the real server (issue 13): a tool that throws, a step
with too many calls, an oversized step, a store that fails mid-turn. Each is told to the
client (SSE), to the user (history) and to the model (/context), and nothing is lost."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, signed_in
from zerocode.memory.messages import from_openai_list
from zerocode.memory.validation import validate


def context(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = client.get(f"/api/apps/{app_id}/context").json()["messages"]
    validate(from_openai_list(messages))
    return messages


def history(client: httpx.Client, app_id: str) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = client.get(f"/api/apps/{app_id}/history").json()["entries"]
    return entries


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "data")
    server.data_dir.mkdir()
    yield server
    server.stop()


def test_a_tool_that_throws_is_a_failed_result_and_the_turn_goes_on(own_server: Server) -> None:
    own_server.env["ZEROCODE_REPAIR_ROUNDS"] = "0"  # two notes are no project to build
    own_server.start()
    client = signed_in(own_server)
    app = create(client, "A Vue notes app", "vue_project")
    turn = chat(client, app["id"], "Write two notes [[surrogate]]")
    assert [r["ok"] for r in turn.results] == [True, False]
    assert "failed inside the platform (UnicodeEncodeError)" in turn.results[1]["summary"]
    assert turn.done is not None and turn.done["status"] == "failed"
    assert not turn.errors  # a failed tool is not a failed server
    files = client.get(f"/api/apps/{app['id']}/files/notes/ok.txt")
    assert files.status_code == 200 and files.text == "fine\n"
    messages = context(client, app["id"])
    results = [m["content"] for m in messages if m["role"] == "tool"]
    assert len(results) == 2 and results[-2].startswith("created notes/ok.txt")
    assert results[-1].startswith("ERROR: ") and "its effect is unknown" in results[-1]
    assert not any("disconnected" in (m.get("content") or "") for m in messages)


def test_a_step_over_the_call_limit_runs_nothing_and_fits_one_write(client: httpx.Client) -> None:
    app = create(client, "A Vue notes app", "vue_project")
    turn = chat(client, app["id"], "Write notes [[many-calls=99]]")
    assert len(turn.results) == 32 and not any(r["ok"] for r in turn.results)
    assert "asked for 99 tool calls" in turn.results[0]["summary"]
    assert turn.done is not None and turn.done["status"] == "failed"
    listed = client.get(f"/api/apps/{app['id']}/files").json()
    assert not any(f["path"].startswith("notes/") for f in listed["files"])
    calls = [m for m in context(client, app["id"]) if m.get("tool_calls")]
    assert len(calls[-1]["tool_calls"]) == 32 and "none of them ran" in calls[-1]["content"]


def test_an_oversized_step_stays_in_a_small_window_elided(own_server: Server) -> None:
    own_server.env["ZEROCODE_WINDOW_MAX_TOKENS"] = "6000"
    # A small window needs a small request bound (8,000 characters would not fit in 6,000),
    # and no images on a message (four would take 5,780 of it).
    own_server.env["ZEROCODE_MAX_MESSAGE_CHARS"] = "1000"
    own_server.env["ZEROCODE_CHAT_IMAGES_MAX"] = "0"
    own_server.env["ZEROCODE_REPAIR_ROUNDS"] = "0"  # 16 components are no project to build
    own_server.start()
    client = signed_in(own_server)
    app = create(client, "A Vue notes app", "vue_project")
    turn = chat(client, app["id"], "Build it big [[big-step]]")
    assert len(turn.results) == 16 and all(r["ok"] for r in turn.results)
    got = client.get(f"/api/apps/{app['id']}/context").json()
    messages = got["messages"]
    validate(from_openai_list(messages))
    assert got["totalTokens"] <= 6000
    assert any(m["role"] == "user" and "[[big-step]]" in m["content"] for m in messages)
    step = next(m for m in messages if m.get("tool_calls"))
    assert len(step["tool_calls"]) == 16  # the whole step, its payloads elided
    assert "content elided" in step["tool_calls"][0]["function"]["arguments"]
    assert sum(m["role"] == "tool" for m in messages) == 16


def test_a_store_failing_mid_turn_ends_the_stream_with_error_then_done(
    own_server: Server,
) -> None:
    own_server.env["ZEROCODE_FAULT_FAIL"] = "transcript:2"  # the first step's commit
    own_server.start()
    client = signed_in(own_server)
    app = create(client, "A Vue notes app", "vue_project")
    turn = chat(client, app["id"], "A Vue notes app")
    # The error, then the files its tools wrote built into the preview, then done.
    assert turn.order[-1] == "done" and turn.order.count("error") == 1
    assert turn.order[turn.order.index("error") + 1 : -1] == ["build", "build", "check"]
    # The check told is the platform's own of the notes' rules (their file was written):
    # this server runs no browser, so it is told as not run, never as passed.
    assert [(c["id"], c["status"]) for c in turn.checks] == [("access-notes", "not_run")]
    assert turn.errors[0]["code"] == "server_error"
    assert turn.errors[0]["message"] == "the server failed while saving the step (OSError)"
    assert turn.done is not None and turn.done["status"] == "failed"
    shown = history(client, app["id"])[0]
    assert shown["role"] == "error" and "saving the step (OSError)" in shown["content"]
    note = context(client, app["id"])[-1]
    assert "was interrupted (the server failed while saving the step (OSError))" in note["content"]
    assert "may have run" in note["content"]  # its tools ran; their step was never saved
    again = chat(client, app["id"], "A Vue notes app")
    assert again.done is not None and again.done["status"] == "succeeded"


def test_a_site_pointer_write_failing_during_the_preview_is_told(own_server: Server) -> None:
    own_server.env["ZEROCODE_FAULT_FAIL"] = "site_pointer:1"
    own_server.start()
    client = signed_in(own_server)
    app = create(client, "A page about owls", "html")
    turn = chat(client, app["id"], app["initPrompt"])
    assert turn.order[-2:] == ["error", "done"]
    assert turn.errors[0] == {
        "code": "server_error",
        "message": "the server failed while building the preview (OSError)",
        "phase": "building the preview",
        "kind": "internal",  # an OSError without an errno: not a storage refusal
    }
    assert turn.done is not None and turn.done["status"] == "failed"
    assert "building the preview (OSError)" in history(client, app["id"])[0]["content"]
    context(client, app["id"])


def test_a_lone_surrogate_in_the_request_is_refused_and_nothing_is_stored(
    client: httpx.Client,
) -> None:
    app = create(client, "A page about owls", "html")
    for body in (
        {"message": "half \ud800 a pair"},
        {
            "message": "ok",
            "element": {"tag": "h1", "text": "x \udc00", "buildId": "b0000000000000000000"},
        },
    ):
        got = client.post(  # escaped, as a JSON client sends it
            f"/api/apps/{app['id']}/chat",
            content=json.dumps(body),
            headers={"content-type": "application/json"},
        )
        assert got.status_code in (400, 422), got.text  # invalid_input / validation_error
        message = got.json()["error"]["message"]
        assert "surrogate" in message or "unicode" in message
    assert history(client, app["id"]) == []
