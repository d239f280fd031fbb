"""What a deploy's data model would hide of the live records (publishing/data_view.py,
``hidden_by``): a collection or a field gone, a field of another type, enum values gone,
where live records are kept; nothing where there are none, or the model only grows."""

from __future__ import annotations

import json
from typing import Any

from tests.unit.data.test_model import NOTES
from zerocode.data.model import DataModel, parse
from zerocode.publishing.data_view import hidden_by

LIVE = parse(json.dumps(NOTES).encode())


def changed(edit: Any) -> DataModel:
    model = json.loads(json.dumps(NOTES))
    edit(model["collections"])
    return parse(json.dumps(model).encode())


def test_what_a_new_model_hides_is_named_with_its_records() -> None:
    def edit(collections: dict[str, Any]) -> None:
        del collections["guestbook"]
        notes = collections["notes"]["fields"]
        del notes["mail"]
        notes["stars"] = {"type": "text"}
        notes["tag"]["values"] = ["home"]

    found = hidden_by(changed(edit), LIVE, {"notes": 3, "guestbook": 1})
    assert found == [
        "the field notes.stars, now text, was number (3 live records)",
        "the field notes.mail (3 live records)",
        "the values work of notes.tag (3 live records)",
        "the collection guestbook (1 live record)",
    ]
    assert hidden_by(None, LIVE, {"notes": 3}) == ["the collection notes (3 live records)"]


def test_nothing_is_hidden_without_live_records_or_when_the_model_grows() -> None:
    def grow(collections: dict[str, Any]) -> None:
        collections["notes"]["fields"]["colour"] = {"type": "text"}
        collections["notes"]["fields"]["tag"]["values"].append("garden")
        collections["extra"] = collections["guestbook"]

    assert hidden_by(changed(grow), LIVE, {"notes": 3, "guestbook": 2}) == []
    assert hidden_by(None, LIVE, {}) == []
    assert hidden_by(None, None, {"notes": 3}) == []
