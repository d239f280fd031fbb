"""Deleting an app: gone for users first; a failure midway is remembered and retried."""

from __future__ import annotations

import asyncio
from pathlib import Path

from zerocode.apps.records import CodeGenType
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.data.records import SPACES, new_record
from zerocode.engine.journal import PendingCall, PendingStep


class FlakyDelete:
    """The real workspace, whose delete_app fails the first ``failures`` times."""

    def __init__(self, inner: object, failures: int) -> None:
        self.inner, self.failures = inner, failures

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def delete_app(self, app_id: str) -> int:
        if self.failures:
            self.failures -= 1
            raise OSError("disk unavailable")
        return int(self.inner.delete_app(app_id))  # type: ignore[attr-defined]


def test_a_failed_deletion_is_unreachable_at_once_and_finished_by_a_retry(tmp_path: Path) -> None:
    p = wiring.platform(Settings(data_dir=tmp_path))
    app = asyncio.run(p.create_app("owner-1", "A page about sloths", CodeGenType.HTML))
    p.workspace.write(app.id, "index.html", b"<h1>Sloths</h1>")
    p.memory.begin_turn(app.id, "hello")
    p.workspace = FlakyDelete(p.workspace, failures=2)  # type: ignore[assignment]

    assert p.delete_app(app) is False
    assert p.apps.get(app.id) is None  # users can no longer reach it
    assert p.memory.units(app.id) == []  # steps before the failing one did run
    assert (tmp_path / "workspaces" / app.id / "index.html").exists()
    assert p.deletions.pending() == [app.id]

    assert p.retry_deletions() == 0  # still failing: still pending, attempts counted
    assert p.deletions.pending() == [app.id]
    assert p.retry_deletions() == 1
    assert not (tmp_path / "workspaces" / app.id).exists()
    assert p.deletions.pending() == []


def test_a_deletion_interrupted_by_a_crash_resumes_on_the_next_start(tmp_path: Path) -> None:
    p = wiring.platform(Settings(data_dir=tmp_path))
    app = asyncio.run(p.create_app("owner-1", "A page about otters", CodeGenType.HTML))
    p.workspace.write(app.id, "index.html", b"<h1>Otters</h1>")
    p.deletions.add(app.id)  # the process died right after recording the intent
    p.apps.delete(app.id)
    restarted = wiring.platform(Settings(data_dir=tmp_path))
    assert restarted.retry_deletions() == 1
    assert not (tmp_path / "workspaces" / app.id).exists()


def test_deleting_an_app_clears_its_step_journal_record(tmp_path: Path) -> None:
    """The journal keeps the app's last step (its tools and paths) after the turn; the
    app's deletion removes it with the rest of its data (M8)."""
    p = wiring.platform(Settings(data_dir=tmp_path))
    app = asyncio.run(p.create_app("owner-1", "A page about otters", CodeGenType.HTML))
    other = asyncio.run(p.create_app("owner-1", "A page about sloths", CodeGenType.HTML))
    step = PendingStep(turn=1, head=1, calls=(PendingCall("write_file", "index.html"),))
    p.engine.journal.write(app.id, step)
    p.engine.journal.write(other.id, step)
    assert p.delete_app(app) is True
    assert p.engine.journal.read(app.id) is None
    assert p.engine.journal.read(other.id) == step


def test_deleting_an_app_deletes_its_records_users_and_models_and_no_other_apps(
    tmp_path: Path,
) -> None:
    """The app's own data (docs/data.md) goes with the app (M8), in both spaces: records,
    end users, their sessions and the builds' data models; another app's stays."""
    p = wiring.platform(Settings(data_dir=tmp_path))
    backend = p.backend
    assert backend is not None
    app = asyncio.run(p.create_app("owner-1", "A guestbook about otters", CodeGenType.HTML))
    other = asyncio.run(p.create_app("owner-1", "A guestbook about sloths", CodeGenType.HTML))
    sessions = {}
    for app_id in (app.id, other.id):
        backend.build_models.put(app_id, "b1", b"{}")
        for space in SPACES:
            backend.records.create(app_id, space, "entries", new_record(None, {"m": "hi"}), 10)
            body = {"username": "ada", "password": "correct horse"}
            session, _ = backend.end_users.sign_up(app_id, space, body, None)
            sessions[app_id, space] = session.token
    assert p.delete_app(app) is True
    for app_id, kept in ((app.id, 0), (other.id, 1)):
        assert [backend.records.count(app_id, s, "entries") for s in SPACES] == [kept] * 2
        assert [len(backend.users.list(app_id, s, None, 10)[0]) for s in SPACES] == [kept] * 2
        signed_in = [backend.end_users.visitor(app_id, s, sessions[app_id, s]) for s in SPACES]
        assert [u is not None for u in signed_in] == [bool(kept)] * 2
        assert (backend.build_models.get(app_id, "b1") is not None) is bool(kept)
