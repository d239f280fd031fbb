"""A builder's change of the app's data is told to the model (engine/data_edit.py, M9), on
the real local platform: told once when it lands; when a server dies between the change and
the note, the next turn tells it as asked for and unconfirmed, never as done; so is a change
that failed midway (it may have done part of its work)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from zerocode.apps.records import CodeGenType
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine.data_edit import change_data, finish_interrupted_data, note_of
from zerocode.engine.journal import PendingStep
from zerocode.engine.user_edit import finish_interrupted_work
from zerocode.memory.messages import to_openai

WHAT = "reset the preview's data to its seed records"


@pytest.fixture
def platform(tmp_path: Path) -> Platform:
    return wiring.platform(Settings(data_dir=tmp_path, covers=False))


def told(p: Platform, app_id: str) -> list[str]:
    window = p.memory.window(app_id, "system")
    return [str(to_openai(m)["content"]) for m in window.messages if m.role == "user"]


def test_a_change_is_told_once(platform: Platform) -> None:
    app = asyncio.run(platform.create_app("owner-1", "A guestbook about newts", CodeGenType.HTML))
    done = asyncio.run(change_data(platform.engine, app, WHAT, lambda: 7, finish_interrupted_work))
    assert done == 7
    assert told(platform, app.id) == [note_of(WHAT)]
    assert platform.engine.journal.read(app.id) is None
    shown = platform.display.page(app.id, None, 5).entries[0]
    assert shown.content == f"**You {WHAT}.**"


def test_a_change_cut_by_a_dead_server_is_told_unconfirmed(platform: Platform) -> None:
    app = asyncio.run(platform.create_app("owner-1", "A guestbook about toads", CodeGenType.HTML))
    head = platform.memory.head(app.id)
    pending = PendingStep(turn=head.turn, head=head.seq, calls=(), data=WHAT)
    platform.engine.journal.write(app.id, pending)  # as a server killed mid-change left it
    finish_interrupted_data(platform.engine, app)
    [note] = told(platform, app.id)
    assert "asked to reset the preview's data" in note
    assert "may or may not have changed" in note and platform.engine.journal.read(app.id) is None
    finish_interrupted_data(platform.engine, app)  # nothing pending: nothing more
    assert len(told(platform, app.id)) == 1


def test_a_change_that_fails_is_told_unconfirmed_never_as_done(platform: Platform) -> None:
    app = asyncio.run(platform.create_app("owner-1", "A guestbook about frogs", CodeGenType.HTML))

    def broken() -> None:
        raise RuntimeError("the store is down")

    with pytest.raises(RuntimeError):
        asyncio.run(change_data(platform.engine, app, WHAT, broken, finish_interrupted_work))
    assert told(platform, app.id) == []
    # The journal still says it was asked for: the next turn tells it, unconfirmed.
    finish_interrupted_work(platform.engine, app)
    assert "may or may not have changed" in told(platform, app.id)[0]
