"""The app's own data, for its builder (issue 39, point 6; docs/data.md): each space's
collections and counts, records (paged, searched, exported), the app's end users, and the
preview's data reset to its seed records (told to the model, M9)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Path, Query, Request, Response

from zerocode.bootstrap.platform import Platform
from zerocode.engine.data_edit import change_data
from zerocode.engine.user_edit import finish_interrupted_work
from zerocode.errors import NotFound
from zerocode.http.data_schemas import DataOut, EndUsersOut, RecordsOut, ResetOut
from zerocode.http.deps import EngineDep, OwnedApp
from zerocode.publishing.data_view import DataView, check_space
from zerocode.publishing.download import content_disposition

router = APIRouter(prefix="/api/apps/{app_id}/data", tags=["data"])
SpaceName = Annotated[str, Path(json_schema_extra={"enum": ["preview", "live"]})]
Name = Annotated[str, Path(max_length=40)]
Fields = Annotated[dict[str, Any], Body(description="the record's fields")]


def data_view(request: Request) -> DataView:
    p: Platform = request.app.state.platform
    if p.backend is None:
        raise NotFound("this platform keeps no app data yet (docs/data.md)")
    return DataView(p.backend, p.publishing.publisher)


def maybe_data_view(request: Request) -> DataView | None:
    p: Platform = request.app.state.platform
    return DataView(p.backend, p.publishing.publisher) if p.backend is not None else None


ViewDep = Annotated[DataView, Depends(data_view)]
MaybeDataView = Annotated[DataView | None, Depends(maybe_data_view)]


@router.get("/{space}", response_model=DataOut)
def overview(app_id: str, space: SpaceName, app: OwnedApp, view: ViewDep) -> DataOut:
    """The collections of the data model in force in ``space``, each with its count."""
    return DataOut.model_validate(view.overview(app, check_space(space)))


@router.delete("/preview", response_model=ResetOut)
async def reset_preview(app_id: str, app: OwnedApp, view: ViewDep, engine: EngineDep) -> ResetOut:
    """Delete the preview's records and end users; the seed records are back (the live
    space is never emptied from here). Told to the model; 409 while a turn runs."""

    def reset() -> ResetOut:
        deleted, users = view.reset_preview(app)
        return ResetOut(deleted=deleted, users=users)

    what = "reset the preview's data to its seed records"
    return await change_data(engine, app, what, reset, finish_interrupted_work)


@router.get("/{space}/users", response_model=EndUsersOut)
def users(
    app_id: str,
    space: SpaceName,
    app: OwnedApp,
    view: ViewDep,
    cursor: Annotated[str | None, Query(max_length=40)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> EndUsersOut:
    """The app's own end users in ``space``, by username."""
    return EndUsersOut.model_validate(view.users(app, check_space(space), cursor, limit))


@router.delete("/{space}/users/{user_id}", status_code=204)
def remove_user(
    app_id: str, space: SpaceName, user_id: Name, app: OwnedApp, view: ViewDep
) -> Response:
    """The end user and every session of theirs are gone at once (their records stay)."""
    view.remove_user(app, check_space(space), user_id)
    return Response(status_code=204)


@router.get("/{space}/{collection}", response_model=RecordsOut)
def records(
    app_id: str,
    space: SpaceName,
    collection: Name,
    request: Request,
    app: OwnedApp,
    view: ViewDep,
) -> RecordsOut:
    """A page of records: ``limit`` (1-100), ``cursor``, ``sort`` (``createdAt`` or
    ``-createdAt``), ``q`` (text in any field) and any field for equality."""
    params = dict(request.query_params)
    return RecordsOut.model_validate(view.records(app, check_space(space), collection, params))


@router.post("/{space}/{collection}", status_code=201)
async def add_record(
    app_id: str,
    space: SpaceName,
    collection: Name,
    body: Fields,
    app: OwnedApp,
    view: ViewDep,
    engine: EngineDep,
) -> dict[str, Any]:
    """A record added by hand: held to the collection's fields (400 naming them), not to
    its rules; no owner. Told to the model; 409 while a turn runs."""
    where = check_space(space)
    what = f"added a record to {collection} in the {_space_name(where)}: {_said(body)}"
    return await change_data(
        engine, app, what, lambda: view.add(app, where, collection, body), finish_interrupted_work
    )


@router.patch("/{space}/{collection}/{record_id}")
async def change_record(
    app_id: str,
    space: SpaceName,
    collection: Name,
    record_id: Name,
    body: Fields,
    app: OwnedApp,
    view: ViewDep,
    engine: EngineDep,
) -> dict[str, Any]:
    """Some fields of a record changed by hand (``null`` removes one). Told to the model."""
    where = check_space(space)
    what = (
        f"changed the record {record_id} of {collection} in the {_space_name(where)}: {_said(body)}"
    )
    return await change_data(
        engine,
        app,
        what,
        lambda: view.change(app, where, collection, record_id, body),
        finish_interrupted_work,
    )


@router.delete("/{space}/{collection}/{record_id}", status_code=204)
async def delete_record(
    app_id: str,
    space: SpaceName,
    collection: Name,
    record_id: Name,
    app: OwnedApp,
    view: ViewDep,
    engine: EngineDep,
) -> Response:
    """A record deleted by hand. Told to the model."""
    where = check_space(space)
    what = f"deleted the record {record_id} of {collection} in the {_space_name(where)}"
    await change_data(
        engine,
        app,
        what,
        lambda: view.delete(app, where, collection, record_id),
        finish_interrupted_work,
    )
    return Response(status_code=204)


def _space_name(space: str) -> str:
    return "preview's data" if space == "preview" else "live site's data"


def _said(body: dict[str, Any]) -> str:
    """The fields as the model is told them: compact JSON, cut at 300 characters."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= 300 else text[:299] + "…"


@router.get(
    "/{space}/{collection}/export",
    responses={200: {"content": {"application/json": {}, "text/csv": {}}}},
)
def export(
    app_id: str,
    space: SpaceName,
    collection: Name,
    app: OwnedApp,
    view: ViewDep,
    format: Annotated[str, Query(pattern="^(json|csv)$")] = "json",
) -> Response:
    """Every record of the collection, oldest first, as a download."""
    body, media = view.export(app, check_space(space), collection, format)
    name = f"{collection}-{space}"  # a collection of the model: a plain name
    return Response(
        body,
        media_type=media,
        headers={
            "Content-Disposition": content_disposition(name, "data", f".{format}"),
            "Cache-Control": "no-store",
        },
    )
