"""What a turn reports while it runs, and its SSE encoding (docs/api.md)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Literal


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
    kind: str = "build"  # build | runtime | acceptance


@dataclass(frozen=True, kw_only=True)
class CheckEvent:
    """One acceptance check's verdict on the new preview (docs/api.md)."""

    id: str
    description: str
    status: Literal["passed", "failed", "not_run"]
    round: int
    run: int  # the stored run's number (0 when it could not be stored)
    evidence: dict[str, str | None] | None = None
    note: str | None = None  # why a check was not run


@dataclass(frozen=True)
class ErrorEvent:
    code: str  # server_error | storage_unavailable | model_error | stopped | ...
    message: str
    phase: str | None = None  # what the turn was doing (a platform failure)
    kind: str | None = None  # what failed: storage_refusal.Kind, or "internal" for a bug


@dataclass(frozen=True)
class DoneEvent:
    status: Literal["succeeded", "failed", "interrupted"]
    turn: int
    checks: dict[str, int] | None = None  # the newest run's tally, when the suite ran
    # The turn's model requests and tokens (engine/usage.py), with each repair round's under
    # "rounds"; absent where the turn's own count is not known (a turn closed after a crash).
    usage: dict[str, Any] | None = None
    mode: str | None = None  # "ask": the turn answered a question (engine/ask.py)


TurnEvent = (
    TextEvent
    | ThinkingEvent
    | ToolEvent
    | BuildEvent
    | RepairEvent
    | CheckEvent
    | ErrorEvent
    | DoneEvent
)

_NAMES: dict[type, str] = {
    ThinkingEvent: "thinking",
    ToolEvent: "tool",
    BuildEvent: "build",
    RepairEvent: "repair",
    CheckEvent: "check",
    ErrorEvent: "error",
    DoneEvent: "done",
}


def event_name(event: TurnEvent) -> str:
    """The SSE event name of ``event``; "" for text, which is sent unnamed."""
    return "" if isinstance(event, TextEvent) else _NAMES[type(event)]


def event_data(event: TurnEvent) -> str:
    """The JSON ``data`` of ``event``'s SSE frame."""
    if isinstance(event, TextEvent):
        payload: dict[str, object] = {"d": event.text}
    else:
        payload = asdict(event)
        if isinstance(event, BuildEvent) and event.error is None:
            del payload["error"]
        if isinstance(event, DoneEvent):
            payload = {k: v for k, v in payload.items() if v is not None or k == "checks"}
            if event.checks is None:
                del payload["checks"]
        if isinstance(event, CheckEvent) and event.note is None:
            del payload["note"]
        if isinstance(event, ErrorEvent):
            payload = {k: v for k, v in payload.items() if v is not None}
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def sse(event: TurnEvent) -> bytes:
    """One SSE frame. Text goes as an unnamed ``data: {"d": ...}`` event for EventSource."""
    name = event_name(event)
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {event_data(event)}\n\n".encode()
