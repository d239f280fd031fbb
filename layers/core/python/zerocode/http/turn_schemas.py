"""A chat turn's bodies: the message (with the element picked in the preview), the turn
running now, its cancellation, the display's history and the model's context. Apart from
http/schemas.py, by domain."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zerocode.apps.guards import MAX_MESSAGE
from zerocode.http.schemas import ElementIn, text_rule
from zerocode.memory.display import DisplayEntry


class ChatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = Field(json_schema_extra=text_rule(MAX_MESSAGE))
    element: ElementIn | None = None


class HistoryEntryOut(BaseModel):
    id: str
    role: str
    content: str
    status: str
    turn: int
    createdAt: float
    element: dict[str, Any] | None


class HistoryOut(BaseModel):
    entries: list[HistoryEntryOut]
    nextCursor: str | None


class CurrentTurnOut(BaseModel):
    turn: int
    status: Literal["running"]
    lastEventId: str = Field(description='the id of its newest event, "" before the first')


class CancelOut(BaseModel):
    turn: int
    status: Literal["stopping"]


class ContextOut(BaseModel):
    messages: list[dict[str, Any]]
    tokens: list[int]
    totalTokens: int
    evictedUnits: int
    elidedPayloads: int
    summaryIncluded: bool


def entry_out(e: DisplayEntry) -> HistoryEntryOut:
    return HistoryEntryOut(
        id=e.id,
        role=e.role.value,
        content=e.content,
        status=e.status.value,
        turn=e.turn,
        createdAt=e.created_at,
        element=e.element,
    )
