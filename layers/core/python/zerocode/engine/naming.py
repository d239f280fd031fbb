"""Routing and naming a new app with the model: the app service's ``Namer``
(``zerocode.apps.service``), the ``routing`` and ``naming`` prompts asked of the routing role."""

from __future__ import annotations

from zerocode.engine import prompts
from zerocode.engine.model import ChatModel, ModelReply, ModelRole, TextDelta
from zerocode.memory.messages import Message, SystemMessage, UserMessage


class ModelNamer:
    def __init__(self, model: ChatModel) -> None:
        self.model = model

    async def route(self, prompt: str) -> str:
        """The model's answer naming the mode (``zerocode.apps.service.parse_mode`` reads it)."""
        return await self._ask("routing", prompt)

    async def name(self, prompt: str) -> str:
        """The model's answer naming the app (checked, with a fallback, by the app service)."""
        return await self._ask("naming", prompt)

    async def _ask(self, prompt_name: str, text: str) -> str:
        messages: list[Message] = [SystemMessage(prompts.load(prompt_name)), UserMessage(text)]
        parts: list[str] = []
        async for event in self.model.stream(ModelRole.ROUTING, messages):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, ModelReply) and not parts:
                parts.append(event.message.content or "")
        return "".join(parts)
