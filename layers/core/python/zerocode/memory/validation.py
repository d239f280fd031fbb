"""The two OpenAI rules every window must pass before it leaves the memory layer.

1. A ``tool`` message answers an id from the nearest preceding assistant
   ``tool_calls`` that has not been answered yet.
2. Every ``tool_calls`` id is answered before the next non-tool message (or
   the end of the list).
"""

from __future__ import annotations

from collections.abc import Sequence

from zerocode.memory.messages import AssistantMessage, Message, ToolResult


class InvalidWindow(ValueError):
    """A message list the model API would reject; ``index`` names the offending message."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(f"message {index}: {reason}")
        self.index = index
        self.reason = reason


def validate(messages: Sequence[Message]) -> None:
    """Raise :class:`InvalidWindow` at the first message that breaks a rule."""
    pending: dict[str, int] = {}  # unanswered call id -> index of its assistant message
    answered: set[str] = set()
    for index, message in enumerate(messages):
        if isinstance(message, ToolResult):
            call_id = message.tool_call_id
            if call_id in pending:
                del pending[call_id]
                answered.add(call_id)
            elif call_id in answered:
                raise InvalidWindow(index, f"tool result answers {call_id!r} a second time")
            else:
                raise InvalidWindow(
                    index,
                    f"tool result answers {call_id!r}, which no preceding "
                    "assistant tool_calls requested",
                )
            continue
        if pending:
            raise InvalidWindow(
                index,
                f"tool_calls {sorted(pending)} of message "
                f"{min(pending.values())} are not answered before it",
            )
        answered.clear()
        if isinstance(message, AssistantMessage):
            pending = {call.id: index for call in message.tool_calls}
    if pending:
        raise InvalidWindow(
            len(messages),
            f"tool_calls {sorted(pending)} of message {min(pending.values())} are never answered",
        )


def is_valid(messages: Sequence[Message]) -> bool:
    try:
        validate(messages)
    except InvalidWindow:
        return False
    return True
