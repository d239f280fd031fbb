"""The running summary's parts on their own: the turn lines, the request, the bound, and
the model summarizer over the offline model and over a failing one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.factories import final, step, turn_entries, user
from zerocode.bootstrap import parts
from zerocode.bootstrap.settings import Settings
from zerocode.engine.model import ModelError, ModelEvent, ModelRole, ToolChoice
from zerocode.engine.summary import ModelSummarizer, request, turn_lines
from zerocode.memory.facade import interrupted_note
from zerocode.memory.messages import AssistantMessage, Message
from zerocode.memory.summary import CUT_MARK, SUMMARY_PREFIX, previous_text, stored_text
from zerocode.memory.tokens import count_tokens
from zerocode.memory.transcript import Entry, EntryKind, Unit, group_units

PAGE = "Here is **Newts**.\n\n```html\n<!doctype html>\n<h1>Newts</h1>\n```\n\nEnjoy."


def units(entries: list[Entry]) -> list[Unit]:
    return group_units("a", entries)


# -- turn lines --------------------------------------------------------------------------


def test_a_vue_turn_line_names_the_request_the_written_paths_and_the_outcome() -> None:
    [line] = turn_lines(units(turn_entries(1, 1, steps=1, calls=2)))
    assert line == ("Turn 1: asked: request 1; changed: src/f0.vue, src/f1.vue; outcome: ok: Done.")


def test_a_failed_write_is_not_a_change_and_shows_in_the_outcome() -> None:
    entries = [
        user(1, 1, "add a footer"),
        *step(2, 1, 1, calls=2, failed=(1,)),
        final(5, 1, 1, "Added most of it."),
    ]
    [line] = turn_lines(units(entries))
    assert "changed: src/f0.vue;" in line
    assert "outcome: ok after failures: disk full" in line


def test_an_html_turn_changes_the_files_of_its_code_blocks() -> None:
    [line] = turn_lines(units([user(1, 1, "a page about newts"), final(2, 1, 1, PAGE)]))
    assert line == (
        "Turn 1: asked: a page about newts; changed: index.html; outcome: ok: Here is **Newts**."
    )


def test_an_interrupted_turn_says_why() -> None:
    note = Entry(
        seq=3,
        turn=1,
        unit=3,
        turn_start=1,
        kind=EntryKind.INTERRUPTED,
        message=AssistantMessage(interrupted_note(1, "the model endpoint failed")),
    )
    [line] = turn_lines(units([user(1, 1, "make it red"), note]))
    assert line.endswith("changed: none; outcome: failed: interrupted (the model endpoint failed)")


def test_a_partly_evicted_turn_and_long_requests() -> None:
    long = "make " + "it really nice " * 40
    entries = [*turn_entries(1, 1, steps=0), user(3, 2, long), *step(4, 2, 3, calls=1)]
    first, second = turn_lines(units(entries)[1:])  # turn 1's request left earlier
    assert first.startswith("Turn 1: asked: (see above); changed: none; outcome: ok")
    asked = second.split("asked: ", 1)[1].split("; changed:", 1)[0]
    assert len(asked) == 200 and asked.endswith("…")
    assert second.endswith("changed: src/f0.vue; outcome: still in the window")


def test_the_request_folds_in_the_previous_summary() -> None:
    evicted = units(turn_entries(1, 3, steps=0))
    assert request(None, evicted) == "Turn 3: asked: request 3; changed: none; outcome: ok: Done."
    stored = SUMMARY_PREFIX + "Earlier in this conversation:\nTurn 1: asked: x"
    text = request(stored, evicted)
    assert text.startswith("Previous summary:\nEarlier in this conversation:\nTurn 1: asked: x")
    assert text.endswith("Turn 3: asked: request 3; changed: none; outcome: ok: Done.")
    assert previous_text(None) is None


# -- the bound ---------------------------------------------------------------------------


def test_a_summary_within_the_bound_is_stored_as_before() -> None:
    assert stored_text("made a todo app", 400) == SUMMARY_PREFIX + "made a todo app"


def test_a_long_summary_keeps_its_newest_lines_within_the_bound() -> None:
    lines = [
        f"Turn {n}: asked: change the title to number {n}; changed: index.html"
        for n in range(1, 60)
    ]
    text = stored_text("Earlier in this conversation:\n" + "\n".join(lines), 120)
    assert count_tokens(text) <= 120
    assert text.startswith(SUMMARY_PREFIX + CUT_MARK) and text.endswith(lines[-1])
    assert lines[0] not in text


def test_one_long_line_is_cut_by_characters_keeping_its_end() -> None:
    text = stored_text("word " * 1000 + "THE END", 50)
    assert count_tokens(text) <= 50 and text.endswith("THE END")


# -- the model summarizer ----------------------------------------------------------------


def test_the_offline_model_summarises_deterministically(tmp_path: Path) -> None:
    model = parts.chat_model(Settings(data_dir=tmp_path))
    summarizer = ModelSummarizer(model)
    evicted = units(turn_entries(1, 1) + turn_entries(5, 2))
    first = asyncio.run(summarizer.summarize(None, evicted))
    assert first == asyncio.run(summarizer.summarize(None, evicted))
    assert first.splitlines() == ["Earlier in this conversation:", *turn_lines(evicted)]
    # The next summary carries the earlier turns forward.
    later = asyncio.run(
        summarizer.summarize(SUMMARY_PREFIX + first, units(turn_entries(9, 3, steps=0)))
    )
    assert [line.split(":")[0] for line in later.splitlines()[1:]] == ["Turn 1", "Turn 2", "Turn 3"]


class Broken:
    description = "broken"

    def __init__(self, exc: Exception | None = None, *, hang: bool = False) -> None:
        self.exc, self.hang = exc, hang
        self.asked: list[Sequence[Message]] = []

    async def stream(
        self,
        role: ModelRole,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[ModelEvent]:
        assert role is ModelRole.ROUTING
        self.asked.append(messages)
        if self.hang:
            await asyncio.sleep(60)
        if self.exc is not None:
            raise self.exc
        return
        yield  # an async generator that yields nothing


def test_the_summarizer_asks_the_routing_model_with_the_summary_prompt() -> None:
    model = Broken()
    with pytest.raises(ValueError, match="nothing"):
        asyncio.run(ModelSummarizer(model).summarize(None, units(turn_entries(1, 1))))
    system, asked = model.asked[0]
    assert str(system.content).startswith("<!-- zerocode:prompt=summary -->")
    assert asked.content == turn_lines(units(turn_entries(1, 1)))[0]


def test_the_summarizer_passes_model_errors_on_and_gives_up_after_its_timeout() -> None:
    evicted = units(turn_entries(1, 1))
    with pytest.raises(ModelError):
        asyncio.run(ModelSummarizer(Broken(ModelError("down"))).summarize(None, evicted))
    with pytest.raises(TimeoutError):
        asyncio.run(ModelSummarizer(Broken(hang=True), timeout=0.05).summarize(None, evicted))
