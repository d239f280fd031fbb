"""Edits a person makes in the preview without a model turn: a text changed in place."""

from __future__ import annotations

from fastapi import APIRouter

from zerocode.apps.guards import check_element
from zerocode.engine.user_edit import save_text
from zerocode.http.deps import Caller, EngineDep, OwnedApp, PublishingDep, QuotaDep
from zerocode.http.long_routes import waits
from zerocode.http.routes.chat import check_picked
from zerocode.http.version_schemas import EditOut, TextEditIn, edit_out

router = APIRouter(prefix="/api/apps/{app_id}/edits", tags=["files"])


@router.post("/text", response_model=EditOut, openapi_extra=waits("build"))
async def edit_text(
    app_id: str,
    body: TextEditIn,
    app: OwnedApp,
    user: Caller,
    engine: EngineDep,
    publishing: PublishingDep,
    quota: QuotaDep,
) -> EditOut:
    """The one place in the source that writes the picked element's text, changed to
    ``newText``: a version of kind ``edit``, told to the model (M9), the preview rebuilt.
    422 ``text_not_editable`` saying why (code makes the text, it spans elements, or it is
    written in several places) when that place is not clear; a chat turn with the element
    picked can change it instead. 409 ``preview_out_of_date`` when the element was picked
    in another preview than the one shown now, or that one is older than the files."""
    element = body.element.model_dump(exclude_none=True)
    check_element(element)
    await check_picked(publishing, app, element["buildId"])
    await quota.charge("deploy", user.id)  # an edit builds, like a deploy
    done = await save_text(
        engine,
        app,
        old=element.get("text", ""),
        new=body.newText,
        tag=element.get("tag"),
        page=body.page,
    )
    return edit_out(done)
