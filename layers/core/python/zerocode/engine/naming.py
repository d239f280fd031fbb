"""Routing and naming a new app with the model: the app service's ``Namer``
(``zerocode.apps.service``), the ``routing`` and ``naming`` prompts asked of the routing role.

Each request is counted as it ends (issue 43, :class:`zerocode.engine.usage.Meter`): in the
usage ledger under the new app and turn 0 (its creation, before any turn), for its owner."""

from __future__ import annotations

from zerocode.engine import prompts
from zerocode.engine.model import ChatModel, ModelReply, ModelRole, TextDelta
from zerocode.engine.usage import Meter
from zerocode.memory.messages import Message, SystemMessage, UserMessage

CREATION_TURN = 0  # the turn a new app's routing and naming requests are kept under


class ModelNamer:
    def __init__(self, model: ChatModel, meter: Meter | None = None) -> None:
        self.model, self.meter = model, meter or Meter()

    async def route(self, prompt: str, *, owner: str, app_id: str) -> str:
        """The model's answer naming the mode (``zerocode.apps.service.parse_mode`` reads it)."""
        return await self._ask("routing", prompt, owner, app_id)

    async def name(self, prompt: str, *, owner: str, app_id: str) -> str:
        """The model's answer naming the app (checked, with a fallback, by the app service)."""
        return await self._ask("naming", prompt, owner, app_id)

    async def _ask(self, prompt_name: str, text: str, owner: str, app_id: str) -> str:
        messages: list[Message] = [SystemMessage(prompts.load(prompt_name)), UserMessage(text)]
        parts: list[str] = []
        async for event in self.model.stream(ModelRole.ROUTING, messages):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, ModelReply):
                if not parts:
                    parts.append(event.message.content or "")
                await self.meter.count(
                    event, messages, account=owner, app_id=app_id, turn=CREATION_TURN
                )
        return "".join(parts)
