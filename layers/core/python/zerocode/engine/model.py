"""ChatModel port: stream one chat completion with tools.

The engine only sees text deltas (and a reasoning model's thinking deltas) and, at
the end, one complete assistant message with its tool calls assembled (arguments
joined from their fragments).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, Protocol

from zerocode.errors import ZerocodeError
from zerocode.memory.messages import AssistantMessage, Message

ToolChoice = Literal["auto", "none"]


class ModelRole(StrEnum):
    """Which configured model answers: each role may use a different model name."""

    ROUTING = "routing"  # choose the generation mode, name the app
    CODE = "code"  # html / multi_file generation
    VUE = "vue"  # the Vue project agent (tool calls)


@dataclass(frozen=True)
class Usage:
    """What one model request cost, as its provider reported it: input (prompt) tokens, of
    which ``cached_tokens`` came from the provider's prompt cache (billed lower where the
    provider says so), and output tokens."""

    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """A reasoning model's thinking as it streams (DeepSeek's and Qwen's ``reasoning_content``).

    It may be shown while the model thinks, but it is never the answer: the ModelReply's
    message does not contain it, so it is neither stored as the answer nor sent back.
    """

    text: str


@dataclass(frozen=True, kw_only=True)
class ModelReply:
    """The end of a stream: the whole assistant message as the transcript will keep it."""

    message: AssistantMessage
    usage: Usage | None
    finish_reason: str | None
    model: str = ""  # the model name the request went to (for usage by model)


ModelEvent = TextDelta | ThinkingDelta | ModelReply


class ModelError(ZerocodeError):
    """The model endpoint failed after retries (or mid-stream); the turn fails visibly."""

    status = 502
    code = "model_error"


class ContextTooLong(ModelError):
    """The endpoint refused the request because the messages do not fit the model's context
    window; the same request will fail again, a shorter one may not."""

    code = "context_too_long"


class ChatModel(Protocol):
    @property
    def description(self) -> str:
        """What answers, for /api/health and the start-up banner (never a secret)."""
        ...

    def stream(
        self,
        role: ModelRole,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] = (),
        *,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[ModelEvent]:
        """Text and thinking deltas as they arrive, then exactly one ModelReply. With
        ``tool_choice`` "none" the tools are declared (the messages hold calls of them) but
        the model may not call one.

        Raises ModelError; ContextTooLong when the messages do not fit the model's context.
        """
        ...
