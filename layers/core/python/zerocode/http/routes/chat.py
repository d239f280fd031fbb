"""The conversation: start a turn (streamed), reattach to it, stop it; its history, the
model's context."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Query, Response

from zerocode.apps.guards import check_element, check_text
from zerocode.apps.image_intake import sniff
from zerocode.apps.records import App
from zerocode.engine.chat_images import (
    ChatImageRules,
    ImagesNotSupported,
    check_images,
    take_images,
)
from zerocode.engine.turn import Engine
from zerocode.engine.turn_log import parse_event_id
from zerocode.engine.window_budget import check_request
from zerocode.errors import InvalidInput, NotFound, PreviewOutOfDate
from zerocode.http.deps import (
    Caller,
    ChatImageRulesDep,
    DisplayDep,
    EngineDep,
    MaxChars,
    OwnedApp,
    PublishingDep,
    QuotaDep,
    TurnsDep,
    on_lambda,
)
from zerocode.http.long_routes import waits
from zerocode.http.sse import TurnStream
from zerocode.http.turn_schemas import (
    CancelOut,
    ChatIn,
    ContextOut,
    CurrentTurnOut,
    HistoryOut,
    entry_out,
)
from zerocode.memory.display import KEY_PATTERN
from zerocode.memory.messages import ImageRef
from zerocode.publishing.builds import check_build_id
from zerocode.publishing.service import Publishing

router = APIRouter(prefix="/api/apps/{app_id}", tags=["chat"])


async def check_picked(publishing: Publishing, app: App, build_id: str) -> None:
    """409 ``preview_out_of_date`` unless an element picked in preview build ``build_id``
    names what the app shows now: that build is the preview shown, and it was built from
    the files as they are now. An element of any other build may not be there any more
    (issue 24: a pick made while a turn ran would land on the wrong element)."""
    check_build_id(build_id)
    state = await asyncio.to_thread(publishing.preview_state, app)
    if build_id != state.build_id:
        raise PreviewOutOfDate(
            "the element was picked in an older preview; pick it again "
            f"(it names build {build_id}, the preview shows {state.build_id or 'none yet'})"
        )
    if not state.up_to_date:
        raise PreviewOutOfDate(
            "the preview is older than the app's files, so the element picked in it may not be "
            "there any more: rebuild the preview (POST /api/apps/{id}/preview) and pick again"
        )


@router.post(
    "/chat",
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "SSE stream of the turn"}
    },
    openapi_extra=waits("turn"),
)
async def chat_post(
    app: OwnedApp,
    body: ChatIn,
    user: Caller,
    turns: TurnsDep,
    publishing: PublishingDep,
    quota: QuotaDep,
    max_chars: MaxChars,
    engine: EngineDep,
    image_rules: ChatImageRulesDep,
    hold: Annotated[bool, Depends(on_lambda)],
) -> Response:
    """Start a turn and stream it. POST only: no GET starts a turn or changes state, so
    a link, an image or a hidden frame on another page can never start one. The turn runs
    to its end whatever becomes of this stream; each event carries its id, and
    ``GET /turns/{turn}/events`` resumes after the last one seen."""
    element = body.element.model_dump(exclude_none=True) if body.element else None
    text = check_text(body.message, field="message", max_chars=max_chars)
    if element:
        check_element(element)
    check_request(text, element, max_chars)
    urls = body.images or []
    check_images(urls, image_rules)  # a model without vision: refused before anything
    if element:
        await check_picked(publishing, app, element["buildId"])
    turns.refuse_if_stopping()  # before the quota: a refused chat costs nothing
    await quota.charge("chat", user.id)
    images = await asyncio.to_thread(_kept, engine, app, urls, image_rules)
    running = await turns.start(app, text, element or None, images, body.mode)
    return TurnStream(running.follow(), hold=running.ended.wait if hold else None)


def _kept(engine: Engine, app: App, urls: list[str], rules: ChatImageRules) -> tuple[ImageRef, ...]:
    """The message's images, checked, re-encoded and kept (none without a store)."""
    if not urls:
        return ()
    if engine.images is None:
        raise ImagesNotSupported("this platform keeps no images of messages")
    return take_images(engine.images, app.id, urls, rules)


@router.get("/images/{sha256}", responses={200: {"content": {"image/png": {}}}})
def message_image(
    app_id: str,
    app: OwnedApp,
    engine: EngineDep,
    sha256: Annotated[str, Path(pattern="^[0-9a-f]{64}$")],
) -> Response:
    """An image a message of the app carried, as kept (for the console's history): typed by
    its content, never rendered as a document."""
    if engine.images is None:
        raise NotFound("this platform keeps no images of messages")
    data = engine.images.get(app.id, sha256)
    kind = sniff(data)
    return Response(
        data,
        media_type=kind[1] if kind else "application/octet-stream",
        headers={
            "Cache-Control": "private, max-age=86400, immutable",  # content-addressed
            "Content-Security-Policy": "default-src 'none'; sandbox",
            "Content-Disposition": "inline",
        },
    )


@router.get(
    "/turns/current",
    response_model=CurrentTurnOut,
    responses={204: {"description": "no turn is running for this app"}},
)
async def current_turn(app: OwnedApp, turns: TurnsDep) -> Response | CurrentTurnOut:
    """The turn running for the app, for a client that (re)opens it; 204 when none runs."""
    current = await turns.current(app.id)
    if current is None:
        return Response(status_code=204)
    return CurrentTurnOut(turn=current.turn, status="running", lastEventId=current.last_event_id)


@router.get(
    "/turns/{turn}/events",
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "SSE stream of the turn"}
    },
    openapi_extra=waits("turn"),
)
async def turn_events(
    app: OwnedApp,
    turns: TurnsDep,
    turn: Annotated[int, Path(ge=1, le=1_000_000)],
    after: Annotated[int | None, Query(ge=0, description="replay after this seq")] = None,
    last_event_id: Annotated[str | None, Header(max_length=40)] = None,
) -> Response:
    """The turn's events after ``after`` (or after the ``Last-Event-ID`` header, as an
    EventSource sends it), then live until its ``done``: no gap, no duplicate. Works for a
    finished turn too (its log is kept a day). Reads only: it starts and changes nothing."""
    if after is None and last_event_id:
        after = parse_event_id(last_event_id, turn)
        if after is None:
            raise InvalidInput(f"Last-Event-ID must be an id of turn {turn} ({turn}:<seq>)")
    await turns.exists(app.id, turn)
    return TurnStream(turns.follow(app.id, turn, after or 0))


@router.post("/turns/{turn}/cancel", status_code=202, response_model=CancelOut)
async def cancel_turn(
    app: OwnedApp, turns: TurnsDep, turn: Annotated[int, Path(ge=1, le=1_000_000)]
) -> CancelOut:
    """Stop the running turn: it ends interrupted, "stopped by the user", told to the model
    and shown in the history, its stream ending with ``done: interrupted``. 409 when that
    turn is not running."""
    await turns.cancel(app.id, turn)
    return CancelOut(turn=turn, status="stopping")


@router.get("/history", response_model=HistoryOut)
def history(
    app: OwnedApp,
    display: DisplayDep,
    before: Annotated[str | None, Query(json_schema_extra={"pattern": KEY_PATTERN})] = None,
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
