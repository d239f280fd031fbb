"""The Checks tab's bodies as issue 38 extends them (kept apart from http/schemas.py, which
is full): whether a run of the checks is under way. New fields are optional: no client of
``GET /api/apps/{id}/checks`` breaks."""

from __future__ import annotations

from zerocode.http import schemas


class ChecksOut(schemas.ChecksOut):  # the same name: the same schema in the OpenAPI document
    running: bool = False  # a run of the checks is under way (the tab polls until it ends)
