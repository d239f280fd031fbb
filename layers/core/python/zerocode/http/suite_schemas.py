"""The Checks tab's bodies as issue 38 extends them (apart from http/check_schemas.py,
whose bodies they extend): whether a run of the checks is under way, and which checks a
builder's own edit changed. New fields are optional: no client of
``GET /api/apps/{id}/checks`` breaks."""

from __future__ import annotations

from pydantic import BaseModel

from zerocode.http import check_schemas


class EditChangedOut(BaseModel):
    """A check that fails on the files of the builder's own edit and passed before: the
    edit's version, the version before it (what undoing the edit restores), and whether
    the platform can update the check to what the page now shows."""

    versionId: str
    beforeId: str | None
    updatable: bool


class SuiteCheckOut(check_schemas.CheckOut):
    editChanged: EditChangedOut | None = None


class ChecksOut(check_schemas.ChecksOut):  # the same name: the same schema in the OpenAPI document
    checks: list[SuiteCheckOut]  # type: ignore[assignment]
    running: bool = False  # a run of the checks is under way (the tab polls until it ends)
