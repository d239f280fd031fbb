"""Routing and naming a new app with the model (engine/naming.py, the app service's Namer)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

from zerocode.accounts.usage import Price, Spent, UsageLedger
from zerocode.apps.service import Namer, parse_mode
from zerocode.engine import prompts
from zerocode.engine.model import ModelEvent, ModelReply, ModelRole, TextDelta, ToolChoice
from zerocode.engine.naming import ModelNamer
from zerocode.engine.usage import Meter
from zerocode.memory.messages import AssistantMessage, Message, SystemMessage, UserMessage
from zerocode.memory.tokens import REPLY_PRIMING, count_tokens, message_tokens


class Scripted:
    """Answers each call with the next script: text deltas (or none), then the reply."""

    description = "scripted"

    def __init__(self, *scripts: tuple[list[str], str]) -> None:
        self.scripts = list(scripts)
        self.calls: list[tuple[ModelRole, list[Message]]] = []

    async def stream(
        self,
        role: ModelRole,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[ModelEvent]:
        self.calls.append((role, list(messages)))
        deltas, reply = self.scripts.pop(0)
        for text in deltas:
            yield TextDelta(text)
        yield ModelReply(message=AssistantMessage(reply), usage=None, finish_reason="stop")


def test_routes_and_names_with_the_routing_model_and_its_prompts() -> None:
    model = Scripted((["a vue", "_project"], "ignored"), ([], "Todo list"))
    namer: Namer = ModelNamer(model)
    routed = asyncio.run(namer.route("A todo app", owner="ann", app_id="a1"))
    assert parse_mode(routed).value == "vue_project"
    named = asyncio.run(namer.name("A todo app", owner="ann", app_id="a1"))
    assert named == "Todo list"  # no deltas: the reply's text
    assert [role for role, _ in model.calls] == [ModelRole.ROUTING, ModelRole.ROUTING]
    assert model.calls[0][1] == [SystemMessage(prompts.load("routing")), UserMessage("A todo app")]
    assert model.calls[1][1] == [SystemMessage(prompts.load("naming")), UserMessage("A todo app")]


class Ledger:
    """A usage ledger that keeps requests in a list, or refuses every write."""

    def __init__(self, *, broken: bool = False) -> None:
        self.kept: list[Spent] = []
        self.broken = broken

    def record(self, spent: Spent) -> None:
        if self.broken:
            raise OSError("the ledger's disk is gone")
        self.kept.append(spent)


def test_each_request_is_kept_under_the_new_app_and_turn_0_estimated_without_usage() -> None:
    """The scripted model reports no usage: each request is the platform's count of what was
    sent and what came back, marked estimated, at its model's price where it has one."""
    ledger = Ledger()
    meter = Meter(cast(UsageLedger, ledger), {"": Price(input=1.0, output=2.0)})
    namer = ModelNamer(Scripted(([], "html"), (["Otter", " page"], "x")), meter)
    asyncio.run(namer.route("A page about otters", owner="ann", app_id="a1"))
    asyncio.run(namer.name("A page about otters", owner="ann", app_id="a1"))
    routing, naming = ledger.kept
    assert {(s.account, s.app_id, s.turn, s.round, s.estimated) for s in ledger.kept} == {
        ("ann", "a1", 0, 0, True)
    }
    asked: list[Message] = [
        SystemMessage(prompts.load("routing")),
        UserMessage("A page about otters"),
    ]
    assert routing.input_tokens == sum(message_tokens(m) for m in asked) + REPLY_PRIMING
    assert routing.output_tokens == count_tokens("html")
    assert naming.output_tokens == count_tokens("x")  # the reply's message, as the model kept it
    assert routing.cost_micros == routing.input_tokens + 2 * routing.output_tokens


def test_a_ledger_that_fails_costs_its_record_not_the_answer(caplog: Any) -> None:
    namer = ModelNamer(Scripted(([], "Todo list")), Meter(cast(UsageLedger, Ledger(broken=True))))
    with caplog.at_level(logging.WARNING):
        assert asyncio.run(namer.name("A todo app", owner="ann", app_id="a1")) == "Todo list"
    assert "could not keep a request's usage app=a1: OSError" in caplog.text
