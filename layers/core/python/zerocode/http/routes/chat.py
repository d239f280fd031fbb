"""The conversation: start a turn (streamed), its history, the model's context."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query, Response

from zerocode.apps.guards import check_element, check_text
from zerocode.engine.window_budget import check_request
from zerocode.http.deps import Caller, DisplayDep, EngineDep, MaxChars, OwnedApp, QuotaDep
from zerocode.http.schemas import ChatIn, ContextOut, HistoryOut, entry_out
from zerocode.http.sse import event_stream

router = APIRouter(prefix="/api/apps/{app_id}", tags=["chat"])


@router.post(
    "/chat",
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "SSE stream of the turn"}
    },
)
async def chat_post(
    app: OwnedApp,
    body: ChatIn,
    user: Caller,
    engine: EngineDep,
    quota: QuotaDep,
    max_chars: MaxChars,
) -> Response:
    """Start a turn and stream it. POST only: no GET starts a turn or changes state, so
    a link, an image or a hidden frame on another page can never start one."""
    element = body.element.model_dump(exclude_none=True) if body.element else None
    text = check_text(body.message, field="message", max_chars=max_chars)
    if element:
        check_element(element)
    check_request(text, element, max_chars)
    await quota.charge("chat", user.id)
    run = await asyncio.to_thread(engine.start, app, text, element or None)
    return event_stream(run.events())


@router.get("/history", response_model=HistoryOut)
def history(
    app: OwnedApp,
    display: DisplayDep,
    before: str | None = None,
    limit: Annotated[int, Query(ge=1, le=50)] = 20,
) -> HistoryOut:
    page = display.page(app.id, before, limit)
    return HistoryOut(entries=[entry_out(e) for e in page.entries], nextCursor=page.next_cursor)


@router.get("/context", response_model=ContextOut)
def context(app: OwnedApp, engine: EngineDep) -> ContextOut:
    window = engine.window(app)
    return ContextOut(
        messages=window.openai(),
        tokens=list(window.tokens),
        totalTokens=window.total_tokens,
        evictedUnits=window.evicted_units,
        elidedPayloads=window.elided_payloads,
        summaryIncluded=window.summary_included,
    )
