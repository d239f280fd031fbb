"""A turn's tokens (issue 43): tallies per request and round, the provider's word or the
platform's estimate, and how ``done`` says them."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from zerocode.accounts.usage import Price
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
        "costUsd": None,  # no price was given: no cost is claimed
        "unpricedRequests": 3,
    }
    assert state.rounds[0] == UsageTally(2, 2200, 120, 800, estimated=False, unpriced=2)
    assert state.rounds[1] == UsageTally(1, 1500, 30, 0, estimated=True, unpriced=1)
    assert (state.tokens_in, state.tokens_out) == (3700, 150)


def test_a_price_makes_a_cost_and_its_absence_claims_none() -> None:
    """$2.50 per million input tokens, $1.25 cached, $10 output: 1,000 input of which 800
    cached, 100 output = 200 x 2.5 + 800 x 1.25 + 100 x 10 = 2,500 micro-dollars."""
    price = Price(input=2.5, output=10, cached=1.25)
    assert price.micros(1000, 100, 800) == 2500
    assert Price(input=2.5, output=10).micros(1000, 100, 800) == 3500  # cached at input rate
    tally = UsageTally()
    tally.add(Usage(1000, 100, 800), cost_micros=2500)
    assert tally.to_json()["costUsd"] == 0.0025 and tally.to_json()["unpricedRequests"] == 0
    tally.add(Usage(10, 1))  # a model with no price
    assert tally.to_json()["costUsd"] == 0.0025 and tally.to_json()["unpricedRequests"] == 1
    assert UsageTally.from_json(tally.to_json()) == tally


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


costs = st.none() | st.integers(min_value=0, max_value=10**9)


@given(st.lists(st.tuples(counts, counts, counts, st.booleans(), costs), max_size=20))
def test_a_tally_reads_back_as_it_was_written(
    requests: list[tuple[int, int, int, bool, int | None]],
) -> None:
    tally = UsageTally()
    for prompt, completion, cached, estimated, cost in requests:
        usage = Usage(prompt, completion, min(cached, prompt))
        tally.add(usage, estimated=estimated, cost_micros=cost)
    assert UsageTally.from_json(json.loads(json.dumps(tally.to_json()))) == tally


def test_an_unreadable_stored_tally_counts_nothing() -> None:
    assert UsageTally.from_json("x") == UsageTally()
    odd = {"requests": -1, "inputTokens": True, "outputTokens": 2.5, "estimated": "yes"}
    assert UsageTally.from_json(odd) == UsageTally()
