"""The data API's operations (zerocode/data/service.py) over the SQLite store: rules,
fields and bounds decide every request; two visitors of one app never see each other's
records under the owner rule; bad input is a clear error that changes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.data.test_model import NOTES
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.records import SqliteRecordStore
from zerocode.data.access import NotAllowed, SignInNeeded
from zerocode.data.model import DataModel, parse
from zerocode.data.records import CollectionFull, Space
from zerocode.data.service import Asked, DataService
from zerocode.errors import InvalidInput, NotFound, PayloadTooLarge, ZerocodeError

MODEL: DataModel = parse(json.dumps(NOTES).encode())


def at(collection: str, visitor: str | None, space: Space = "live") -> Asked:
    return Asked("app1", space, MODEL, collection, visitor)


@pytest.fixture
def data(tmp_path: Path) -> Iterator[DataService]:
    yield DataService(SqliteRecordStore(SqliteDatabase(tmp_path / "zc.sqlite3")), most=5)


def refused(call: Any, *args: Any) -> ZerocodeError:
    with pytest.raises(ZerocodeError) as caught:
        call(*args)
    return caught.value


def test_each_visitor_sees_only_their_own_notes(data: DataService) -> None:
    a = data.create(at("notes", "alice"), {"title": "A's note"})
    b = data.create(at("notes", "bob"), {"title": "B's note"})
    assert a["owner"] == "alice" and a["id"] != b["id"]
    mine = data.list(at("notes", "alice"), {})
    assert [r["title"] for r in mine["records"]] == ["A's note"]
    assert data.get(at("notes", "alice"), a["id"])["title"] == "A's note"
    for call, args in [
        (data.get, (b["id"],)),
        (data.update, (b["id"], {"title": "taken"})),
        (data.delete, (b["id"],)),
    ]:
        error = refused(call, at("notes", "alice"), *args)
        assert isinstance(error, NotFound) and error.message == "no such record in notes"
    assert data.get(at("notes", "bob"), b["id"])["title"] == "B's note"
    anonymous = refused(data.list, at("notes", None), {})
    assert isinstance(anonymous, SignInNeeded) and anonymous.status == 401
    assert refused(data.create, at("notes", None), {"title": "x"}).status == 401


def test_a_public_guestbook_takes_anyone_and_changes_nothing_after(data: DataService) -> None:
    entry = data.create(at("guestbook", None, "preview"), {"message": "Hello"})
    assert entry["owner"] is None
    listed = data.list(at("guestbook", None, "preview"), {})["records"]
    assert [r["message"] for r in listed] == ["Hello"]
    update = refused(data.update, at("guestbook", None, "preview"), entry["id"], {})
    assert isinstance(update, NotAllowed) and update.status == 403
    assert refused(data.delete, at("guestbook", "u1", "preview"), entry["id"]).status == 403
    assert data.list(at("guestbook", None), {})["records"] == []  # its space


def test_bad_records_name_their_fields_and_change_nothing(data: DataService) -> None:
    bad = refused(data.create, at("notes", "u1"), {"done": "yes", "x": 1})
    assert isinstance(bad, InvalidInput) and bad.status == 400
    assert bad.message == "notes: x: no such field; title: required; done: true or false"
    assert refused(data.create, at("notes", "u1"), []).message == (
        "notes: a record is a JSON object of its fields"
    )
    big = refused(data.create, at("guestbook", "u1"), {"message": "x" * 20_000})
    assert isinstance(big, PayloadTooLarge) and big.status == 413
    note = data.create(at("notes", "u1"), {"title": "kept"})
    dropped = refused(data.update, at("notes", "u1"), note["id"], {"title": None})
    assert dropped.message == "notes: title: required"
    assert data.get(at("notes", "u1"), note["id"])["title"] == "kept"
    done = data.update(at("notes", "u1"), note["id"], {"done": True})
    assert (
        done["done"] is True and done["title"] == "kept" and done["updatedAt"] >= note["updatedAt"]
    )
    unknown = refused(data.list, at("people", "u1"), {})
    assert isinstance(unknown, NotFound) and "no collection 'people'" in unknown.message
    assert refused(data.get, at("notes", "u1"), "../x").status == 404


def test_lists_page_sort_and_filter_as_asked(data: DataService) -> None:
    for i in range(4):
        data.create(at("notes", "u1"), {"title": f"n{i}", "done": i % 2 == 1})
    first = data.list(at("notes", "u1"), {"limit": "3"})
    assert [r["title"] for r in first["records"]] == ["n0", "n1", "n2"] and first["cursor"]
    rest = data.list(at("notes", "u1"), {"limit": "3", "cursor": first["cursor"]})
    assert [r["title"] for r in rest["records"]] == ["n3"] and rest["cursor"] is None
    newest = data.list(at("notes", "u1"), {"sort": "-createdAt", "limit": "1"})
    assert [r["title"] for r in newest["records"]] == ["n3"]
    done = data.list(at("notes", "u1"), {"done": "true"})
    assert [r["title"] for r in done["records"]] == ["n1", "n3"]
    for params, said in [
        ({"limit": "0"}, "limit: a whole number from 1 to 100"),
        ({"limit": "101"}, "limit: a whole number from 1 to 100"),
        ({"sort": "title"}, "sort: createdAt (oldest first) or -createdAt (newest first)"),
        ({"cursor": "nope"}, "cursor is not one this API returned"),
        ({"colour": "red"}, "colour: notes has no such field to filter by"),
        ({"done": "yes"}, "done: true or false"),
        ({"stars": "many"}, "stars: a number"),
    ]:
        error = refused(data.list, at("notes", "u1"), params)
        assert isinstance(error, InvalidInput) and error.message == said, params


def test_the_record_past_the_collections_bound_is_a_409_and_nothing_is_lost(
    data: DataService,
) -> None:
    for i in range(5):
        data.create(at("guestbook", None), {"message": str(i)})
    full = refused(data.create, at("guestbook", None), {"message": "6"})
    assert isinstance(full, CollectionFull) and full.status == 409
    listed = data.list(at("guestbook", None), {})["records"]
    assert [r["message"] for r in listed] == ["0", "1", "2", "3", "4"]


def test_a_field_the_model_no_longer_declares_is_kept_not_shown(data: DataService) -> None:
    made = data.create(at("notes", "alice"), {"title": "Flour", "tag": "home"})
    slim = json.loads(json.dumps(NOTES))
    del slim["collections"]["notes"]["fields"]["tag"]
    slim["collections"]["notes"]["seed"] = []
    without = Asked("app1", "live", parse(json.dumps(slim).encode()), "notes", "alice")
    shown = data.get(without, made["id"])
    assert "tag" not in shown and shown["title"] == "Flour"
    assert "tag" not in data.list(without, {})["records"][0]
    changed = data.update(without, made["id"], {"title": "Rye flour"})  # the hidden field:
    assert changed["title"] == "Rye flour" and "tag" not in changed  # never in the way
    again = data.get(at("notes", "alice"), made["id"])  # a model that shows it again
    assert again["tag"] == "home" and again["title"] == "Rye flour"
