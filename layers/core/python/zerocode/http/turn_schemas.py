"""A chat turn's bodies: the message (with the element picked in the preview), the turn
running now, its cancellation, the display's history and the model's context. Apart from
http/schemas.py, by domain."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from zerocode.apps.guards import MAX_MESSAGE
from zerocode.http.schemas import ElementIn, text_rule
from zerocode.memory.display import DisplayEntry


class ChatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    message: str = Field(json_schema_extra=text_rule(MAX_MESSAGE))
    element: ElementIn | None = None
    # Images the message carries, each the image itself as a data URL (as OpenAI's API
    # takes them): PNG, JPEG, WebP or GIF, bounded (413 naming the limit); 400
    # images_not_supported when the model answering does not see images.
    images: list[Annotated[str, Field(max_length=2_500_000)]] | None = Field(
        None,
        max_length=8,
        description="data:image/...;base64,... URLs (at most ZEROCODE_CHAT_IMAGES_MAX, "
        "4 by default, each at most ZEROCODE_CHAT_IMAGE_MAX_BYTES decoded)",
    )
    mode: Literal["build", "ask"] = Field(
        "build",
        description='"ask" sends the message as a question: the model reads the app with '
        "read-only tools and answers; no file changes, no build, no version",
    )


class ImageOut(BaseModel):
    """An image a message carried: GET /api/apps/{id}/images/{sha256} gives it."""

    sha256: str
    type: str
    width: int
    height: int
    bytes: int


class HistoryEntryOut(BaseModel):
    id: str
    role: str
    content: str
    status: str
    turn: int
    createdAt: float
    element: dict[str, Any] | None
    images: list[ImageOut] | None = None  # a user message's attached images
    # A reply's model requests and tokens, as its done said them (issue 43; docs/api.md).
    usage: dict[str, Any] | None = None
    # "ask": a question sent in Ask mode, or its answer (issue 43); absent for Build.
    mode: Literal["ask"] | None = None


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
        images=[ImageOut(**i) for i in e.images] if e.images else None,
        usage=e.usage,
        mode="ask" if e.mode == "ask" else None,
    )
