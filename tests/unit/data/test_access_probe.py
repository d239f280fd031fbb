"""The platform's access probe, derived from the data model (zerocode/data/access_probe.py):
which collections it probes, a sample record every collection's fields accept, and what a
leak is said as (the browser runs it: tests/e2e/test_data_apps.py)."""

from __future__ import annotations

import json
from typing import Any

from tests.unit.data.test_model import NOTES
from zerocode.data.access_probe import probes, problems, sample
from zerocode.data.model import parse, record_problems

MODEL = parse(json.dumps(NOTES).encode())


def test_personal_and_closed_collections_are_probed_public_ones_are_not() -> None:
    [probe] = probes(MODEL)  # the guestbook is public: nothing to prove
    assert probe.collection == "notes" and probe.personal and probe.creatable
    assert probe.signed_in_only == ("list", "create")


def test_the_sample_record_is_one_the_fields_accept() -> None:
    for collection in MODEL.collections:
        assert record_problems(collection, sample(collection)) == [], collection.name
    raw: dict[str, Any] = json.loads(json.dumps(NOTES))
    raw["collections"]["notes"]["fields"] = {
        "code": {"type": "text", "required": True, "min": 30, "max": 40},
        "stars": {"type": "number", "required": True, "min": 3, "max": 5},
        "kind": {"type": "enum", "required": True, "values": ["a", "b"]},
        "when": {"type": "datetime", "required": True},
        "mail": {"type": "email", "required": True},
        "link": {"type": "url", "required": True},
    }
    raw["collections"]["notes"]["seed"] = []
    notes = parse(json.dumps(raw).encode()).collection("notes")
    assert notes is not None and record_problems(notes, sample(notes)) == []


def test_a_leak_is_said_as_what_another_user_could_do_and_which_rule_lets_them() -> None:
    [probe] = probes(MODEL)
    leaky = {"list": "owner", "read": "public", "create": "signed-in", "update": "owner"}
    seen = {"created": "abc", "other_read": 200, "other_update": 404, "other_delete": 404}
    said = problems(probe, leaky, {**seen, "anonymous_list": 401, "anonymous_create": 401})
    assert said == [
        "access: notes keeps each user's records their own (a rule is owner), but another "
        "signed-in user could read a record someone else created (HTTP 200): its read rule "
        "is public; make it owner"
    ]
    whole = {**seen, "other_read": 404, "anonymous_list": 401, "anonymous_create": 401}
    assert problems(probe, leaky, whole) == []
    assert problems(probe, leaky, {"anonymous_list": 200})[0].startswith(
        "access: a visitor who is not signed in could list notes (HTTP 200)"
    )
