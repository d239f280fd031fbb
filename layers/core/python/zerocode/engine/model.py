"""ChatModel port: stream one chat completion with tools.

The engine only sees text deltas and, at the end, one complete assistant
message with its tool calls assembled (arguments joined from their fragments).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from zerocode.errors import ZerocodeError
from zerocode.memory.messages import AssistantMessage, Message


class ModelRole(StrEnum):
    """Which configured model answers: each role may use a different model name."""

    ROUTING = "routing"  # choose the generation mode, name the app
    CODE = "code"  # html / multi_file generation
    VUE = "vue"  # the Vue project agent (tool calls)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ModelReply:
    """The end of a stream: the whole assistant message as the transcript will keep it."""

    message: AssistantMessage
    usage: Usage | None
    finish_reason: str | None


ModelEvent = TextDelta | ModelReply


class ModelError(ZerocodeError):
    """The model endpoint failed after retries (or mid-stream); the turn fails visibly."""

    status = 502
    code = "model_error"


class ChatModel(Protocol):
    @property
    def description(self) -> str:
        """What answers, for /api/health and the start-up banner (never a secret)."""
        ...

    def stream(
        self, role: ModelRole, messages: Sequence[Message], tools: Sequence[dict[str, Any]] = ()
    ) -> AsyncIterator[ModelEvent]:
        """Text deltas as they arrive, then exactly one ModelReply; raises ModelError."""
        ...
