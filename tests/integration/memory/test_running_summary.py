"""The running summary with the setting on: the routing model writes it (the offline model
here), it is stored in the transcript, shown in GET /context, and a failing model never
fails a turn."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from zerocode.bootstrap import parts, wiring
from zerocode.bootstrap.settings import Settings
from zerocode.engine.model import ModelError, ModelEvent, ModelRole, ToolChoice
from zerocode.engine.summary import ModelSummarizer
from zerocode.engine.window_budget import window_minimum
from zerocode.http.app import create_app
from zerocode.memory.facade import Memory
from zerocode.memory.messages import Message, SystemMessage, from_openai_list
from zerocode.memory.summary import SUMMARY_PREFIX, NewSummary
from zerocode.memory.tokens import count_tokens
from zerocode.memory.transcript import EntryKind
from zerocode.memory.validation import validate

SYSTEM = "You build apps."
APP = "app-summary"


def settings(tmp_path: Path, **extra: Any) -> Settings:
    """The summary on, requests of at most 1,000 characters and no images, so the small
    window of these tests (BUDGET) is one the settings accept."""
    extra.setdefault("max_message_chars", 1000)
    extra.setdefault("chat_images_max", 0)
    return Settings(data_dir=tmp_path, covers=False, window_summary=True, **extra)


# The smallest budget the settings accept with the summary on (400 tokens): a few turns of
# FILLER each fill it, so turns leave the window.
BUDGET = window_minimum(1000, 400).tokens
FILLER = "filler " * 900


def turns(memory: Memory, count: int, start: int = 1) -> None:
    for n in range(start, start + count):
        turn = asyncio.run(memory.open_turn(APP, f'change the title to "Title {n}"', system=SYSTEM))
        memory.commit_final(turn, f"Changed it to Title {n}. " + FILLER)


def summaries(memory: Memory) -> list[str]:
    return [
        str(e.message.content)
        for e in memory.store.tail(APP, 10_000)
        if e.kind is EntryKind.SUMMARY and e.message is not None
    ]


def test_the_routing_model_writes_the_summary_into_the_transcript(tmp_path: Path) -> None:
    s = settings(tmp_path, window_max_tokens=BUDGET)
    memory = parts.memory(s, model=parts.chat_model(s))
    turns(memory, 8)
    stored = summaries(memory)
    assert stored, "turns left the window, so a summary was written"
    newest = stored[-1]
    assert newest.startswith(SUMMARY_PREFIX + "Earlier in this conversation:")
    assert 'Turn 1: asked: change the title to "Title 1"; changed: none; outcome: ok' in newest
    assert count_tokens(newest) <= s.window_summary_max_tokens
    # A new turn begins: every turn out of its window is named by the summary it sees.
    asyncio.run(memory.open_turn(APP, "one more", system=SYSTEM))
    window = memory.window(APP, SYSTEM)
    newest = summaries(memory)[-1]
    assert window.summary_included and window.messages[1] == SystemMessage(newest)
    in_window = {str(m.content) for m in window.messages}
    for n in range(1, 9):
        if not any(f'Title {n}"' in text for text in in_window):
            assert f"Turn {n}: " in newest


def test_the_summary_is_bounded_in_tokens(tmp_path: Path) -> None:
    s = settings(
        tmp_path, window_max_tokens=window_minimum(1000, 60).tokens, window_summary_max_tokens=60
    )
    memory = parts.memory(s, model=parts.chat_model(s))
    turns(memory, 10)
    stored = summaries(memory)
    assert stored and all(count_tokens(text) <= 60 for text in stored)
    newest = stored[-1]  # cut at its start: the oldest turns go first
    assert newest.startswith(SUMMARY_PREFIX + "[…] ") and "Turn 1: " not in newest


class Failing:
    description = "failing"

    async def stream(
        self,
        role: ModelRole,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[ModelEvent]:
        raise ModelError("the routing model is down")
        yield  # an async generator


def test_a_failing_summary_model_never_fails_a_turn(tmp_path: Path, caplog: Any) -> None:
    s = settings(tmp_path, window_max_tokens=BUDGET)
    memory = parts.memory(s, model=Failing())
    with caplog.at_level(logging.WARNING):
        turns(memory, 8)  # enough that turns leave the window (BUDGET holds about five)
    assert memory.head(APP).turn == 8 and not summaries(memory)
    assert "running summary skipped" in caplog.text and "routing model is down" in caplog.text
    window = memory.window(APP, SYSTEM)
    assert window.evicted_units > 0 and not window.summary_included
    validate(window.messages)


def test_a_summary_asked_for_at_an_older_head_is_dropped(tmp_path: Path) -> None:
    s = settings(tmp_path, window_max_tokens=BUDGET)
    memory = parts.memory(s, model=parts.chat_model(s))
    turns(memory, 3)
    stale = NewSummary(head=1, text=SUMMARY_PREFIX + "stale", covers=1)
    memory.begin_turn(APP, "next", system=SYSTEM, summary=stale)
    assert SUMMARY_PREFIX + "stale" not in summaries(memory)


def test_context_shows_the_summary_of_evicted_html_turns(tmp_path: Path) -> None:
    """Several html turns with the offline model and a small window, over the API.

    The summary is written when a turn begins, so it names every turn that had left the
    window by then (units the turn's own answer pushes out are summarised when the next
    turn begins)."""
    s = settings(tmp_path, window_max_tokens=BUDGET, rate_chat=100)
    platform = wiring.platform(s)
    messages = ["A page about newts", *(f'change the title to "Newts {n}"' for n in range(2, 9))]
    with TestClient(create_app(platform)) as client:
        assert (
            client.post(
                "/api/users/register", json={"account": "summary-user", "password": "correct horse"}
            ).status_code
            == 201
        )
        token = client.post(
            "/api/users/login", json={"account": "summary-user", "password": "correct horse"}
        ).json()["token"]
        client.cookies.clear()
        auth = {"Authorization": f"Bearer {token}"}
        created = client.post(
            "/api/apps",
            headers=auth,
            json={"initPrompt": "A page about newts", "codeGenType": "html"},
        )
        assert created.status_code == 201, created.text
        app_id = created.json()["id"]

        def context() -> dict[str, Any]:
            got = client.get(f"/api/apps/{app_id}/context", headers=auth)
            assert got.status_code == 200
            data: dict[str, Any] = got.json()
            validate(from_openai_list(data["messages"]))  # the OpenAI rules
            assert data["totalTokens"] <= BUDGET
            return data

        def left_out(data: dict[str, Any], sent: list[str]) -> list[int]:
            kept = {m["content"] for m in data["messages"] if m["role"] == "user"}
            return [n for n, text in enumerate(sent, start=1) if text not in kept]

        for number, message in enumerate(messages, start=1):
            before = context()
            with client.stream(
                "POST", f"/api/apps/{app_id}/chat", headers=auth, json={"message": message}
            ) as stream:
                assert stream.status_code == 200
                body = "".join(stream.iter_text())
            assert '"status":"succeeded"' in body.replace(" ", ""), body[-500:]
            after = context()
            gone = left_out(before, messages[: number - 1])
            if gone:  # the turn began with a summary naming every turn gone by then
                assert after["summaryIncluded"] and after["evictedUnits"] > 0
                summary = after["messages"][1]
                assert summary["role"] == "system"
                assert summary["content"].startswith(
                    SUMMARY_PREFIX + "Earlier in this conversation:"
                )
                for n in gone:  # turn 2n-1: each turn is followed by its checks' note
                    assert (
                        f"Turn {2 * n - 1}: asked: {messages[n - 1]}; changed: index.html; "
                        "outcome: ok" in summary["content"]
                    )
    assert gone, "the window was small enough for turns to leave it"
    assert (
        "Turn 1: asked: A page about newts; changed: index.html; outcome: ok" in summary["content"]
    )


def test_the_summarizer_is_wired_only_with_the_setting_on(tmp_path: Path) -> None:
    on = wiring.platform(settings(tmp_path / "on"))
    assert isinstance(on.memory.summarizer, ModelSummarizer)
    assert on.memory.summarizer.model is on.model
    off = wiring.platform(Settings(data_dir=tmp_path / "off", covers=False))
    assert off.memory.summarizer is None and not off.memory.policy.summary
    # Both modes build their memory through parts.memory with the platform's model.
    store = on.memory.store
    aws = Settings(mode="aws", window_summary=True)
    assert isinstance(parts.memory(aws, store, on.model).summarizer, ModelSummarizer)
    assert parts.memory(aws, store).summarizer is None
