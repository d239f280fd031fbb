"""The app's data model file (zerocode/data/model.py): what it accepts, and every shape it
refuses, saying where and why."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zerocode.data import model
from zerocode.data.model import DataModelInvalid, parse, record_problems, refusal

NOTES: dict[str, Any] = {
    "collections": {
        "notes": {
            "fields": {
                "title": {"type": "text", "required": True, "max": 200},
                "done": {"type": "bool"},
                "stars": {"type": "number", "min": 0, "max": 5},
                "due": {"type": "datetime"},
                "mail": {"type": "email"},
                "link": {"type": "url"},
                "tag": {"type": "enum", "values": ["home", "work"]},
            },
            "rules": {
                "list": "owner",
                "read": "owner",
                "create": "signed-in",
                "update": "owner",
                "delete": "owner",
            },
            "seed": [{"title": "Try the notes", "tag": "home"}],
        },
        "guestbook": {
            "fields": {"message": {"type": "text", "required": True}},
            "rules": {
                "list": "public",
                "read": "public",
                "create": "public",
                "update": "nobody",
                "delete": "nobody",
            },
        },
    }
}


def raw(value: Any) -> bytes:
    return json.dumps(value).encode()


def problems_of(value: Any) -> list[str]:
    with pytest.raises(DataModelInvalid) as caught:
        parse(value if isinstance(value, bytes) else raw(value))
    return caught.value.problems


def with_notes(**changes: Any) -> dict[str, Any]:
    notes: dict[str, Any] = json.loads(json.dumps(NOTES))
    notes["collections"]["notes"].update(changes)
    return notes


def test_a_full_model_is_read_as_written() -> None:
    found = parse(raw(NOTES))
    notes = found.collection("notes")
    assert notes is not None and found.collection("nobody") is None
    assert [f.name for f in notes.fields] == [
        "title",
        "done",
        "stars",
        "due",
        "mail",
        "link",
        "tag",
    ]
    title = notes.field("title")
    assert title is not None and title.required and title.max == 200
    assert notes.rules["create"] == "signed-in" and notes.rules["list"] == "owner"
    assert notes.seed == ({"title": "Try the notes", "tag": "home"},)
    assert refusal(raw(NOTES)) is None


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe", "not JSON"),
        (b'{"collections": {"a": {"fields": {"n": {"type": "number", "max": NaN}}}}}', "not JSON"),
        (raw([]), "must be a JSON object"),
        (raw({}), "collections: an object of at least one collection"),
        (raw({"collections": {}, "extra": 1}), "extra: not part of a data model"),
        (raw({"collections": {"Notes!": {}}}), "collections.Notes!: a collection's name is"),
        (raw({"collections": {"n": []}}), "collections.n: an object with fields and rules"),
    ],
)
def test_the_file_as_a_whole_is_refused_saying_why(data: bytes, said: str) -> None:
    found = problems_of(data)
    assert any(said in p for p in found), found


def test_a_file_over_its_bound_is_refused_before_it_is_read() -> None:
    big = b" " * (model.MAX_FILE_BYTES + 1)
    assert problems_of(big) == [f"the file is {len(big)} bytes; at most {model.MAX_FILE_BYTES}"]


@pytest.mark.parametrize(
    ("field", "said"),
    [
        ({"type": "string"}, 'fields.title.type: "string" is not one of text, number'),
        ({}, "fields.title.type: nothing is not one of"),
        ("text", 'fields.title: an object such as {"type": "text"}'),
        ({"type": "text", "required": "yes"}, "fields.title.required: true or false"),
        ({"type": "bool", "max": 3}, "fields.title.max: only text and number fields take max"),
        ({"type": "number", "min": "1"}, "fields.title.min: a number"),
        ({"type": "number", "min": 5, "max": 1}, "fields.title: min 5 is above max 1"),
        ({"type": "text", "max": 1.5}, "fields.title.max: a whole number of characters"),
        ({"type": "text", "max": -1}, "fields.title.max: a whole number of characters"),
        ({"type": "enum"}, "fields.title.values: a list of 1 to 100 texts"),
        ({"type": "enum", "values": ["a", "a"]}, "fields.title.values: each value once"),
        ({"type": "enum", "values": [""]}, "fields.title.values: a list of 1 to 100 texts"),
        ({"type": "text", "values": ["a"]}, "fields.title.values: only enum fields take values"),
        ({"type": "text", "default": "x"}, "fields.title.default: not part of a data model"),
    ],
)
def test_every_bad_field_is_refused_where_it_is(field: Any, said: str) -> None:
    notes = with_notes(fields={"title": field}, seed=[])
    found = problems_of(notes)
    assert any(p.startswith("collections.notes.") and said in p for p in found), found


@pytest.mark.parametrize("name", ["id", "createdAt", "updatedAt", "owner"])
def test_the_records_own_names_are_no_fields(name: str) -> None:
    found = problems_of(with_notes(fields={name: {"type": "text"}}, seed=[]))
    assert any(f"fields.{name}: {name} is every record's own" in p for p in found), found


def test_the_platforms_own_collection_names_are_refused() -> None:
    model = json.loads(json.dumps(NOTES))
    model["collections"]["users"] = model["collections"].pop("guestbook")
    found = problems_of(model)
    assert found == [
        "collections.users: users is the platform's (the app's own users, who sign in with "
        "auth.signUp / auth.signIn); name the collection otherwise, e.g. profiles"
    ]


@pytest.mark.parametrize(
    ("rules", "said"),
    [
        (None, "rules: an object with a rule for each of list, read, create, update, delete"),
        ({"list": "public"}, "rules.read: missing (one of public, signed-in, owner, nobody)"),
        (
            {
                "list": "everyone",
                "read": "public",
                "create": "public",
                "update": "public",
                "delete": "public",
            },
            'rules.list: "everyone" is not one of public, signed-in, owner, nobody',
        ),
        (
            {
                "list": "owner",
                "read": "owner",
                "create": "owner",
                "update": "owner",
                "delete": "owner",
            },
            "rules.create: a record has no owner before it is created",
        ),
        (
            {
                "list": "owner",
                "read": "owner",
                "create": "public",
                "update": "owner",
                "delete": "owner",
                "admin": "nobody",
            },
            "rules.admin: not part of a data model",
        ),
    ],
)
def test_every_bad_rule_is_refused(rules: Any, said: str) -> None:
    notes = with_notes(rules=rules)
    found = problems_of(notes)
    assert any(said in p for p in found), found


def test_seed_records_are_held_to_their_fields() -> None:
    seed = [
        {"title": "ok"},
        {"done": True},
        {"title": "x" * 201},
        {"title": "t", "stars": 9},
        {"title": "t", "mail": "not an address"},
        {"title": "t", "link": "javascript:alert(1)"},
        {"title": "t", "due": "tomorrow"},
        {"title": "t", "tag": "play"},
        {"title": "t", "colour": "red"},
        "just text",
    ]
    found = problems_of(with_notes(seed=seed))
    assert found == [
        "collections.notes.seed[1].title: required",
        "collections.notes.seed[2].title: at most 200 characters",
        "collections.notes.seed[3].stars: at most 5",
        "collections.notes.seed[4].mail: an email address",
        "collections.notes.seed[5].link: an http or https address",
        "collections.notes.seed[6].due: a date and time (ISO 8601, e.g. 2026-12-05T10:00:00Z)",
        "collections.notes.seed[7].tag: one of home, work",
        "collections.notes.seed[8].colour: no such field",
        "collections.notes.seed[9]: a record is a JSON object of its fields",
    ]


def test_the_bounds_of_a_model() -> None:
    many = {f"c{i}": NOTES["collections"]["guestbook"] for i in range(model.MAX_COLLECTIONS + 1)}
    assert any("21 collections; at most 20" in p for p in problems_of({"collections": many}))
    fields = {f"f{i}": {"type": "bool"} for i in range(model.MAX_FIELDS + 1)}
    assert any(
        "51 fields; at most 50" in p for p in problems_of(with_notes(fields=fields, seed=[]))
    )
    seed = [{"title": "t"}] * (model.MAX_SEED + 1)
    assert any("101 records; at most 100" in p for p in problems_of(with_notes(seed=seed)))


def test_a_record_over_its_bytes_is_refused() -> None:
    notes = parse(raw(NOTES)).collection("guestbook")
    assert notes is not None
    big = {"message": "é" * (model.MAX_RECORD_BYTES // 2)}
    assert record_problems(notes, big) == [
        f": the record is {model.MAX_RECORD_BYTES + 14} bytes; at most {model.MAX_RECORD_BYTES}"
    ]


def test_an_update_may_leave_out_required_fields_but_not_break_them() -> None:
    notes = parse(raw(NOTES)).collection("notes")
    assert notes is not None
    assert record_problems(notes, {"done": True}, partial=True) == []
    assert record_problems(notes, {"done": True}) == [".title: required"]
    assert record_problems(notes, {"title": 3}, partial=True) == [".title: a text"]
    assert record_problems(notes, {"stars": True}, partial=True) == [".stars: a number"]


def test_many_problems_are_told_at_once_within_a_bound() -> None:
    fields = {f"F{i}": {"type": "nope"} for i in range(30)}
    with pytest.raises(DataModelInvalid) as caught:
        parse(raw(with_notes(fields=fields, seed=[])))
    said = str(caught.value)
    assert said.startswith("zerocode.data.json is not a valid data model: ")
    assert said.count("collections.notes.fields.F") == model.MAX_PROBLEMS
    assert said.endswith(f"(and {len(caught.value.problems) - model.MAX_PROBLEMS} more)")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(json_values)
def test_any_json_is_read_or_refused_never_an_error_of_ours(value: Any) -> None:
    data = raw(value)
    try:
        parse(data)
    except DataModelInvalid as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
