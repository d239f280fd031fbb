"""A turn's tokens (issue 43): tallies per request and round, the provider's word or the
platform's estimate, and how ``done`` says them."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from zerocode.engine.events import DoneEvent, event_data
from zerocode.engine.model import Usage
from zerocode.engine.turn_state import TurnState
from zerocode.engine.usage import UsageTally, estimated_usage
from zerocode.memory.messages import AssistantMessage, ToolCall, UserMessage
from zerocode.memory.tokens import count_tokens, message_tokens


def test_a_turns_requests_add_up_per_round_and_in_all() -> None:
    state = TurnState()
    state.spent(Usage(1000, 50, cached_tokens=800))
    state.spent(Usage(1200, 70))
    state.round = 1  # a repair round
    state.spent(Usage(1500, 30), estimated=True)
    assert state.usage.to_json() == {
        "requests": 3,
        "inputTokens": 3700,
        "outputTokens": 150,
        "cachedTokens": 800,
        "estimated": True,
    }
    assert state.rounds[0] == UsageTally(2, 2200, 120, 800, estimated=False)
    assert state.rounds[1] == UsageTally(1, 1500, 30, 0, estimated=True)
    assert (state.tokens_in, state.tokens_out) == (3700, 150)


def test_an_estimate_counts_what_was_sent_and_what_came_back() -> None:
    answer = AssistantMessage("Done.", (ToolCall("c1", "write_file", '{"path": "a"}'),))
    extra = [UserMessage("go on")]
    tools = [{"type": "function", "function": {"name": "write_file"}}]
    counted = estimated_usage(900, extra, tools, answer)
    offered = count_tokens(json.dumps(tools))
    made = count_tokens("Done.") + count_tokens("write_file") + count_tokens('{"path": "a"}')
    assert counted == Usage(900 + message_tokens(extra[0]) + offered, made)
    assert counted.completion_tokens > 0 and counted.cached_tokens == 0


def test_done_says_the_usage_and_leaves_it_out_when_not_known() -> None:
    tally = UsageTally(2, 10, 3, 0, estimated=False)
    said = json.loads(event_data(DoneEvent("succeeded", 4, None, dict(tally.to_json()))))
    assert said == {"status": "succeeded", "turn": 4, "usage": tally.to_json()}
    assert json.loads(event_data(DoneEvent("interrupted", 4))) == {
        "status": "interrupted",
        "turn": 4,
    }


counts = st.integers(min_value=0, max_value=10**9)


@given(st.lists(st.tuples(counts, counts, counts, st.booleans()), max_size=20))
def test_a_tally_reads_back_as_it_was_written(requests: list[tuple[int, int, int, bool]]) -> None:
    tally = UsageTally()
    for prompt, completion, cached, estimated in requests:
        tally.add(Usage(prompt, completion, min(cached, prompt)), estimated=estimated)
    assert UsageTally.from_json(json.loads(json.dumps(tally.to_json()))) == tally


def test_an_unreadable_stored_tally_counts_nothing() -> None:
    assert UsageTally.from_json("x") == UsageTally()
    odd = {"requests": -1, "inputTokens": True, "outputTokens": 2.5, "estimated": "yes"}
    assert UsageTally.from_json(odd) == UsageTally()
