"""Routing and naming a new app with the model (engine/naming.py, the app service's Namer)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from zerocode.apps.service import Namer, parse_mode
from zerocode.engine import prompts
from zerocode.engine.model import ModelEvent, ModelReply, ModelRole, TextDelta
from zerocode.engine.naming import ModelNamer
from zerocode.memory.messages import AssistantMessage, Message, SystemMessage, UserMessage


class Scripted:
    """Answers each call with the next script: text deltas (or none), then the reply."""

    description = "scripted"

    def __init__(self, *scripts: tuple[list[str], str]) -> None:
        self.scripts = list(scripts)
        self.calls: list[tuple[ModelRole, list[Message]]] = []

    async def stream(
        self, role: ModelRole, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncIterator[ModelEvent]:
        self.calls.append((role, list(messages)))
        deltas, reply = self.scripts.pop(0)
        for text in deltas:
            yield TextDelta(text)
        yield ModelReply(message=AssistantMessage(reply), usage=None, finish_reason="stop")


def test_routes_and_names_with_the_routing_model_and_its_prompts() -> None:
    model = Scripted((["a vue", "_project"], "ignored"), ([], "Todo list"))
    namer: Namer = ModelNamer(model)
    assert parse_mode(asyncio.run(namer.route("A todo app"))).value == "vue_project"
    assert asyncio.run(namer.name("A todo app")) == "Todo list"  # no deltas: the reply's text
    assert [role for role, _ in model.calls] == [ModelRole.ROUTING, ModelRole.ROUTING]
    assert model.calls[0][1] == [SystemMessage(prompts.load("routing")), UserMessage("A todo app")]
    assert model.calls[1][1] == [SystemMessage(prompts.load("naming")), UserMessage("A todo app")]
