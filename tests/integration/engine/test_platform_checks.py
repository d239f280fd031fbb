"""The platform's access checks in an app's suite (zerocode/engine/platform_checks.py), over
the SQLite check store: derived from the data model the app's files hold (so they follow a
change of the rules), listed beside the stored checks, never stored, never retired (by the
console or a model's checks block), and their verdicts kept in the suite's runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.unit.engine.tools_support import MemoryWorkspace
from zerocode.adapters.model.offline.data_apps import MODEL as GUESTBOOK
from zerocode.adapters.model.offline.data_apps import NOTES_MODEL
from zerocode.adapters.sqlite.checks import SqliteCheckStore
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.data.model import DATA_MODEL
from zerocode.engine.acceptance import parse_check
from zerocode.engine.check_suite import CheckResult, Evidence, SuiteRun
from zerocode.engine.platform_checks import (
    PlatformCheck,
    WithPlatformChecks,
    access_checks,
    model_in_files,
)
from zerocode.engine.suite_step import apply_checks_block
from zerocode.errors import Conflict

CHECK = {
    "description": "The heading says Notes",
    "expect": [{"text": {"css": "h1"}, "equals": "Notes"}],
}


def suite(tmp_path: Path) -> tuple[WithPlatformChecks, MemoryWorkspace, SqliteCheckStore]:
    workspace = MemoryWorkspace(max_file_bytes=300_000)
    stored = SqliteCheckStore(SqliteDatabase(tmp_path / "zc.sqlite3"))
    return WithPlatformChecks(stored, model_in_files(workspace)), workspace, stored


def write_model(workspace: MemoryWorkspace, model: Any) -> None:
    raw = model if isinstance(model, bytes) else json.dumps(model).encode()
    workspace.write("app1", DATA_MODEL, raw)


def test_they_follow_the_rules_in_the_apps_files(tmp_path: Path) -> None:
    store, workspace, stored = suite(tmp_path)
    store.add("app1", parse_check(CHECK), 1)
    assert [c.id for c in store.list("app1")] == ["c1"]  # no data model: none of them
    write_model(workspace, NOTES_MODEL)
    listed = store.list("app1")
    assert [c.id for c in listed] == ["c1", "access-notes"]
    (access,) = [c for c in listed if isinstance(c, PlatformCheck)]
    assert access.live and access.probe.personal and access.rules["read"] == "owner"
    assert "another user can neither read, change nor delete" in access.check.description
    assert "not signed in cannot list or create" in access.check.description
    assert [c.id for c in stored.list("app1")] == ["c1"]  # never stored
    write_model(workspace, GUESTBOOK)  # every rule public: nothing to check
    assert [c.id for c in store.list("app1")] == ["c1"]
    write_model(workspace, b"{not json")  # an old invalid file declares no rules
    assert [c.id for c in store.list("app1")] == ["c1"]


def test_they_cannot_be_retired_by_the_console_or_the_model(tmp_path: Path) -> None:
    store, workspace, _ = suite(tmp_path)
    write_model(workspace, NOTES_MODEL)
    with pytest.raises(Conflict, match=r"change the rules in zerocode\.data\.json"):
        store.retire("app1", "access-notes", "in the way", 2)
    said = apply_checks_block(
        store, "app1", 2, json.dumps({"retire": [{"id": "access-notes", "reason": "noise"}]})
    )
    assert said == [
        "- not retired access-notes: access-notes is the platform's own check of the data "
        "model's rules and cannot be retired; change the rules in zerocode.data.json instead"
    ]
    assert [c.id for c in store.list("app1") if c.live] == ["access-notes"]
    store.add("app1", parse_check(CHECK), 1)
    assert store.retire("app1", "c1", "the heading changed", 2).retired == "the heading changed"


def test_their_verdicts_are_kept_in_the_suites_runs(tmp_path: Path) -> None:
    store, workspace, _ = suite(tmp_path)
    write_model(workspace, NOTES_MODEL)
    evidence = Evidence(where="the platform's access check", expected="refused", actual="read")
    run = store.record_run(
        "app1",
        SuiteRun(
            turn=1,
            round=0,
            build_id="b1",
            digest="d1",
            results=(CheckResult(check_id="access-notes", status="failed", evidence=evidence),),
        ),
    )
    (kept,) = store.runs("app1")
    assert kept.number == run.number and kept.results[0].check_id == "access-notes"
    assert kept.results[0].evidence is not None and kept.results[0].evidence.actual == "read"
    assert access_checks(None) == []
