"""The window's budget rules (issue 13): the current turn is elided, never dropped; tokens,
not the message bound, set the window; a turn keeps its request while any of its units show."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.factories import final, step, turn_entries, user
from zerocode.engine import prompts
from zerocode.entrypoints.sample_session import file_body, vue_editing_session
from zerocode.memory.messages import AssistantMessage, Message, ToolCall, ToolResult, UserMessage
from zerocode.memory.tokens import REPLY_PRIMING, message_tokens
from zerocode.memory.transcript import Entry, EntryKind, group_units
from zerocode.memory.validation import validate
from zerocode.memory.window import (
    DEFAULT_MAX_MESSAGES,
    Window,
    WindowPolicy,
    build_window,
    elide,
    elision_stub,
)

VUE = prompts.load("vue_project")


class Transcript:
    """Entries as Memory writes them: a user message, steps, a closing text, per turn."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.turn = 0
        self.start = 0

    @property
    def seq(self) -> int:
        return len(self.entries) + 1

    def ask(self, text: str) -> None:
        self.turn += 1
        self.start = self.seq
        self.entries.append(
            Entry(
                seq=self.seq,
                turn=self.turn,
                unit=self.seq,
                turn_start=self.seq,
                kind=EntryKind.USER,
                message=UserMessage(text),
            )
        )

    def step(self, call: AssistantMessage, results: Sequence[ToolResult]) -> None:
        first = self.seq
        self.entries.append(
            Entry(
                seq=first,
                turn=self.turn,
                unit=first,
                turn_start=self.start,
                kind=EntryKind.CALL,
                message=call,
            )
        )
        for result in results:
            self.entries.append(
                Entry(
                    seq=self.seq,
                    turn=self.turn,
                    unit=first,
                    turn_start=self.start,
                    kind=EntryKind.RESULT,
                    message=result,
                )
            )

    def add_step(self, messages: Sequence[Message]) -> None:
        call, *results = messages
        assert isinstance(call, AssistantMessage)
        self.step(call, [r for r in results if isinstance(r, ToolResult)])

    def close(self, text: str) -> None:
        self.entries.append(
            Entry(
                seq=self.seq,
                turn=self.turn,
                unit=self.seq,
                turn_start=self.start,
                kind=EntryKind.FINAL,
                message=AssistantMessage(text),
            )
        )

    def window(self, system: str = VUE, **policy: Any) -> Window:
        return build_window(system, group_units("a", self.entries), WindowPolicy(**policy))


def project_step(files: int, version: int = 0) -> tuple[AssistantMessage, list[ToolResult]]:
    """One write_file call per file of a Vue project (3–4 KB each), and their results."""
    calls = tuple(
        ToolCall(
            f"w{version}_{i}",
            "write_file",
            json.dumps(
                {"path": f"src/components/Part{i}.vue", "content": file_body(f"p{i}", version)}
            ),
        )
        for i in range(files)
    )
    return AssistantMessage(None, calls), [ToolResult.success(c, "written") for c in calls]


def read_step(tag: str, path: str) -> list[Message]:
    """A read_file step of a 3–4 KB file: the call, then its result."""
    call = ToolCall(tag, "read_file", json.dumps({"path": path}))
    return [AssistantMessage(None, (call,)), ToolResult.success(call, file_body(path, 1))]


def cost(messages: Sequence[Message]) -> int:
    return sum(message_tokens(m) for m in messages)


def session(turns: int) -> Transcript:
    t = Transcript()
    for turn in vue_editing_session(turns):
        t.ask(turn.request)
        for s in turn.steps:
            t.step(s.call, s.results)
        t.close(turn.reply)
    return t


def requests_shown(w: Window, entries: Sequence[Entry]) -> bool:
    by_seq = {e.seq: e for e in entries}
    shown = {by_seq[seq].turn for seq in w.kept_units}
    asked = {by_seq[seq].turn for seq in w.kept_units if by_seq[seq].kind is EntryKind.USER}
    return shown <= asked


# -- the current turn --------------------------------------------------------------------


def test_a_24_file_write_step_is_kept_elided_at_a_small_budget() -> None:
    """The issue's case: a step writing a whole project (~24k tokens) used to leave the
    window as [system, user], and the model re-created the project until its tool limit."""
    t = session(3)
    t.ask("Rebuild the shop as 24 components.")
    call, results = project_step(24)
    t.step(call, results)
    assert cost([call, *results]) > 20_000
    w = t.window(max_tokens=4_000)
    validate(w.messages)
    assert w.total_tokens <= 4_000
    assert w.messages[-25:] == (elide(call, 512), *results)  # every call, every result
    shown = w.messages[-25]
    assert isinstance(shown, AssistantMessage) and len(shown.tool_calls) == 24
    for original, slim in zip(call.tool_calls, shown.tool_calls, strict=True):
        args = json.loads(slim.arguments)
        assert slim.id == original.id and slim.name == "write_file"
        assert args["path"] == json.loads(original.arguments)["path"]
        assert args["content"] == elision_stub(json.loads(original.arguments)["content"])
    assert w.messages[-26] == UserMessage("Rebuild the shop as 24 components.")
    # Roomy enough, the same step is shown in full.
    roomy = t.window(max_tokens=40_000)
    assert roomy.messages[-25:] == (call, *results)


def test_a_newer_step_of_the_turn_stays_full_while_the_big_one_is_elided() -> None:
    t = session(2)
    t.ask("Rebuild the shop as 24 components.")
    big, written = project_step(24)
    t.step(big, written)
    read = read_step("r1", "src/components/Part3.vue")
    t.add_step(read)
    w = t.window(max_tokens=6_000)
    assert w.total_tokens <= 6_000
    assert w.messages[-2:] == tuple(read)  # the newest, in full
    assert w.messages[-27:-2] == (elide(big, 512), *written)


def test_the_newest_step_is_kept_elided_even_over_the_budget() -> None:
    t = session(2)
    t.ask("Rebuild the shop as 60 components.")
    call, results = project_step(60)
    t.step(call, results)
    w = t.window(system="You build apps.", max_tokens=1_000)
    slim = (elide(call, 512), *results)
    assert w.messages[1:] == (UserMessage("Rebuild the shop as 60 components."), *slim)
    # Over the budget only by what is never dropped: the window is exactly its floor.
    assert w.total_tokens > 1_000
    assert w.total_tokens == REPLY_PRIMING + cost(w.messages)


def test_the_current_turns_units_are_elided_newest_first_then_the_walk_stops() -> None:
    t = session(4)
    t.ask("Read every part.")
    reads = [read_step(f"r{i}", f"src/components/Part{i}.vue") for i in range(8)]
    for read in reads:
        t.add_step(read)
    full_read = cost(reads[-1])
    slim_read = cost([elide(m, 512) for m in reads[0]])
    base = t.window(max_tokens=100_000, full_turns=1)
    request_and_system = cost(base.messages[:1]) + message_tokens(UserMessage("Read every part."))
    # Room for the newest read in full and three more elided, not for a fourth.
    budget = REPLY_PRIMING + request_and_system + full_read + 3 * slim_read + slim_read // 2
    w = t.window(max_tokens=budget)
    validate(w.messages)
    assert w.total_tokens <= budget
    assert w.messages[1] == UserMessage("Read every part.")  # nothing older than the turn
    body = w.messages[2:]
    assert body[-2:] == tuple(reads[-1])
    assert body[:-2] == tuple(elide(m, 512) for read in reads[-4:-1] for m in read)


def test_no_older_turn_is_shown_while_a_unit_of_the_current_turn_is_out() -> None:
    t = session(6)
    t.ask("Read every part.")
    for i in range(30):
        t.add_step(read_step(f"r{i}", f"src/components/Part{i}.vue"))
    for budget in (2_500, 4_000, 8_000):  # above the Vue prompt (about 2,040 tokens)
        w = t.window(max_tokens=budget)
        current = {e.seq for e in t.entries if e.turn == t.turn and e.seq == e.unit}
        kept = set(w.kept_units)
        if current - kept:
            assert kept <= current
        assert w.total_tokens <= budget


# -- tokens decide ----------------------------------------------------------------------


def test_the_default_message_bound_does_not_bind_before_the_token_budget() -> None:
    """The issue: at the old 60-message default a 24k budget used ~3k tokens. Now the
    window of a long ordinary session stops because the next turn would cross the budget."""
    t = session(120)
    w = t.window()
    assert len(w.messages) < DEFAULT_MAX_MESSAGES
    assert w.total_tokens > 24_000 - 1_000  # the budget, not the bound, is what is full
    assert requests_shown(w, t.entries)


# -- a turn keeps its request -------------------------------------------------------------


def test_an_older_turn_partly_shown_keeps_its_request() -> None:
    t = session(30)
    for budget in range(4_000, 12_000, 700):
        w = t.window(max_tokens=budget)
        validate(w.messages)
        assert requests_shown(w, t.entries)
        assert isinstance(w.messages[1], UserMessage)  # never starts mid-turn


def test_a_turn_whose_request_is_before_the_tail_read_is_left_out() -> None:
    entries = turn_entries(1, 1, steps=3) + turn_entries(12, 2, steps=1)
    tail = entries[3:]  # turn 1's request and first step were not read
    w = build_window("s", group_units("a", tail), WindowPolicy())
    assert [m.role for m in w.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert w.messages[1] == UserMessage("request 2")
    assert w.evicted_units == 3  # turn 1's remaining two steps and its final


def test_an_unreadable_current_request_is_not_replaced_by_an_older_one() -> None:
    entries = [*turn_entries(1, 1, steps=1), *step(6, 2, 5), final(9, 2, 5)]  # seq 5 lost
    w = build_window("s", group_units("a", entries), WindowPolicy())
    assert [m.role for m in w.messages].count("user") == 1
    assert w.messages[1] == UserMessage("request 1")
    assert w.messages[-1] == AssistantMessage("Done.")  # the current turn's units are shown
    assert w.kept_units[-2:] == (6, 9)


def test_a_turn_is_not_shown_by_its_request_alone() -> None:
    entries = [user(1, 1, "first"), *step(2, 1, 1, payload="p" * 4000), user(4, 2, "second")]
    w = build_window("s", group_units("a", entries), WindowPolicy(max_tokens=60))
    assert w.messages[1:] == (UserMessage("second"),)
