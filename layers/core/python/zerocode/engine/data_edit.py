"""A builder's change of the app's data, told to the model (issue 39, point 6; M9).

The model knows the app's data model (a file of the app) but not its records; a change of
the data the builder makes by hand outside any turn (a record added, changed or deleted, the
preview's data reset to its seed records) is still told to it as a note, as an edit of a
file is, so its next answer does not rest on data that is gone. It holds the app's turn
lease (409 beside a turn) and is journaled: the journal says what is about to change before
it changes; a server killed before the note is written leaves the record, and the next
turn, edit or restore tells the model that the change was asked for and may or may not have
landed (never that it did). A change refused before it wrote anything (a bad field, no such
record) tells nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeVar

from zerocode.apps.records import App
from zerocode.engine.journal import PendingStep
from zerocode.engine.parts import EngineParts, app_lease
from zerocode.errors import ZerocodeError
from zerocode.memory.display import DisplayRole

log = logging.getLogger(__name__)

BUSY = "a turn is running for this app; change its data once it has finished"
T = TypeVar("T")


def note_of(what: str) -> str:
    return f"[zerocode: the user {what} outside any turn.]"


async def change_data(
    engine: EngineParts,
    app: App,
    what: str,
    change: Callable[[], T],
    finish: Callable[[EngineParts, App], None],
) -> T:
    """Make ``change`` (what the builder asked: ``what``, e.g. "reset the preview's data to
    its seed records") and tell the model; ``finish``: what finishes a dead server's work
    first (engine/user_edit.py's)."""
    async with app_lease(engine, app.id, BUSY):
        await asyncio.to_thread(finish, engine, app)
        return await asyncio.to_thread(_change, engine, app, what, change)


def _change(engine: EngineParts, app: App, what: str, change: Callable[[], T]) -> T:
    head = engine.memory.head(app.id)
    engine.journal.write(app.id, PendingStep(turn=head.turn, head=head.seq, calls=(), data=what))
    try:
        done = change()
    except ZerocodeError as exc:
        if exc.status < 500:  # refused before anything was written (a bad field, a 404)
            engine.journal.clear(app.id)
        raise
    turn = engine.memory.record_note(app.id, note_of(what))
    _tell_people(engine, app, what, turn)
    engine.journal.clear(app.id)
    return done


def finish_interrupted_data(engine: EngineParts, app: App) -> None:
    """A data change a dead server left untold: told now, as asked for and unconfirmed."""
    pending = engine.journal.read(app.id)
    if pending is None or pending.data is None:
        return
    if engine.memory.head(app.id).seq == pending.head:  # the note was not written
        said = (
            f"asked to {pending.data.removeprefix('asked to ')} outside any turn; the server "
            "stopped before it was confirmed, so the data may or may not have changed"
        )
        turn = engine.memory.record_note(app.id, f"[zerocode: the user {said}.]")
        _tell_people(engine, app, said, turn)
    engine.journal.clear(app.id)


def _tell_people(engine: EngineParts, app: App, what: str, turn: int) -> None:
    try:
        engine.display.append(app.id, DisplayRole.NOTE, f"**You {what}.**", turn=turn)
    except Exception as exc:  # the transcript has it; the display is best effort here
        log.error("could not record a data change of app=%s in the display: %s", app.id, exc)
