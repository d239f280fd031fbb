"""The builder's view of the app's data (``/api/apps/{id}/data/...``; docs/data.md)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class FieldOut(BaseModel):
    name: str
    type: str
    required: bool
    values: list[str] | None = None


class CollectionOut(BaseModel):
    name: str
    fields: list[FieldOut]
    rules: dict[str, str] = Field(description="list, read, create, update, delete: each rule")
    count: int = Field(description="records kept in this space")


class DataOut(BaseModel):
    space: str = Field(description="preview or live")
    buildId: str | None = Field(description="the build whose data model is in force here")
    collections: list[CollectionOut]


class RecordsOut(BaseModel):
    records: list[dict[str, Any]] = Field(
        description="each record's fields, and its id, createdAt, updatedAt and owner"
    )
    cursor: str | None = Field(description="the next page's cursor; null on the last page")


class EndUserOut(BaseModel):
    id: str
    username: str
    createdAt: str


class EndUsersOut(BaseModel):
    users: list[EndUserOut]
    cursor: str | None


class ResetOut(BaseModel):
    deleted: int = Field(description="records deleted (the seed records are back)")
    users: int = Field(description="end users of the preview deleted")
