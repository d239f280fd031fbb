"""What a turn reports while it runs, and its SSE encoding (docs/api.md)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Literal


@dataclass(frozen=True)
class TextEvent:
    text: str


@dataclass(frozen=True)
class ThinkingEvent:
    """A thinking model's reasoning, streamed for people to watch; never the answer, never
    stored, never sent back to the model."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ToolEvent:
    id: str
    name: str
    phase: Literal["call", "result"]
    ok: bool | None
    path: str | None
    summary: str


@dataclass(frozen=True, kw_only=True)
class BuildEvent:
    status: Literal["running", "succeeded", "failed"]
    buildId: str  # the wire name (docs/api.md)
    log_tail: str = ""
    error: str | None = None  # why a failed build failed, for people (absent otherwise)


@dataclass(frozen=True)
class RepairEvent:
    """The turn's preview failed and the model is given the failure to repair it."""

    attempt: int
    max: int
    reason: str


@dataclass(frozen=True)
class ErrorEvent:
    code: str
    message: str


@dataclass(frozen=True)
class DoneEvent:
    status: Literal["succeeded", "failed", "interrupted"]
    turn: int


TurnEvent = (
    TextEvent | ThinkingEvent | ToolEvent | BuildEvent | RepairEvent | ErrorEvent | DoneEvent
)

_NAMES: dict[type, str] = {
    ThinkingEvent: "thinking",
    ToolEvent: "tool",
    BuildEvent: "build",
    RepairEvent: "repair",
    ErrorEvent: "error",
    DoneEvent: "done",
}


def sse(event: TurnEvent) -> bytes:
    """One SSE frame. Text goes as an unnamed ``data: {"d": ...}`` event for EventSource."""
    if isinstance(event, TextEvent):
        payload = {"d": event.text}
        return b"data: " + _json(payload) + b"\n\n"
    payload = asdict(event)
    if isinstance(event, BuildEvent) and event.error is None:
        del payload["error"]
    return b"event: " + _NAMES[type(event)].encode() + b"\ndata: " + _json(payload) + b"\n\n"


def _json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
