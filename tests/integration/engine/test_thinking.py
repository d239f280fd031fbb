"""A thinking model's reasoning is streamed as ``thinking`` events and kept nowhere."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from zerocode.apps.records import CodeGenType
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.engine.events import DoneEvent, TextEvent, ThinkingEvent, sse
from zerocode.engine.model import ModelReply, TextDelta, ThinkingDelta
from zerocode.memory.messages import AssistantMessage

REASONING = "The user wants a page about owls; a heading and a paragraph will do."
ANSWER = "```html\n<!doctype html><html><body><h1>Owls</h1></body></html>\n```"


class ThinkingModel:
    description = "test model that thinks aloud"

    async def stream(
        self, role: Any, messages: Any, tools: Any = (), *, tool_choice: Any = "auto"
    ) -> Any:
        self.seen = messages
        for part in REASONING.split(" "):
            yield ThinkingDelta(part + " ")
        yield TextDelta(ANSWER)
        yield ModelReply(message=AssistantMessage(ANSWER), usage=None, finish_reason="stop")


def test_reasoning_is_streamed_but_never_stored_or_sent_back(tmp_path: Path) -> None:
    model = ThinkingModel()
    p = wiring.platform(Settings(data_dir=tmp_path), model=model)
    app = asyncio.run(p.create_app("local", "A page about owls", CodeGenType.HTML))

    async def turn() -> list[Any]:
        return [e async for e in p.engine.start(app, "A page about owls", None).events()]

    events = asyncio.run(turn())
    thought = "".join(e.text for e in events if isinstance(e, ThinkingEvent))
    assert thought.strip() == REASONING
    assert sse(ThinkingEvent("x")) == b'event: thinking\ndata: {"text":"x"}\n\n'
    assert "".join(e.text for e in events if isinstance(e, TextEvent)) == ANSWER
    assert isinstance(events[-1], DoneEvent) and events[-1].status == "succeeded"
    stored = [str(m) for u in p.memory.units(app.id) for m in u.messages]
    assert not any("wants a page" in m for m in stored)
    shown = p.display.page(app.id).entries
    assert not any("wants a page" in e.content for e in shown)
    asyncio.run(turn())  # the next request carries no reasoning either
    assert not any("wants a page" in str(m) for m in model.seen)
