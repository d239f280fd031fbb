"""Closing a turn that did not finish by itself (M7), saying what it did
(:mod:`zerocode.engine.recovery`).

- :func:`close_crashed`: the turn a dead server left open, closed by the next turn or
  restore.
- :func:`interrupt`: the running turn's interrupted note, even after a write of its own that
  was still in flight.
- :func:`close_abandoned`: the turn was stopped (by its user, or the server is stopping)
  or its stream dropped; what the turn did and why it stopped go to the display.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from zerocode.engine import recovery
from zerocode.engine.journal import PendingStep
from zerocode.engine.parts import EngineParts
from zerocode.engine.usage import kept_usage
from zerocode.engine.version_record import record_version
from zerocode.errors import Conflict
from zerocode.memory.display import DisplayRole, DisplayStatus
from zerocode.memory.facade import Turn
from zerocode.memory.transcript import EntryKind

log = logging.getLogger("zerocode.engine.turn")

STOPPED_BY_USER = "stopped by the user"
SERVER_STOPPED = "the server stopped before the turn ended"


def close_crashed(e: EngineParts, app_id: str) -> str | None:
    """Close the turn a dead server left open (M7): the transcript's note (returned, for
    the next write of the transcript) and the display's entry say what it did. A turn
    closed in the transcript but not in the display (the server died during the preview
    build) gets its display entry too. The files it changed become a version."""
    head = e.memory.head(app_id)
    if head.turn == 0 or head.kind is EntryKind.NOTE:  # a note is whole, and written last
        return None
    newest = e.display.page(app_id, limit=1).entries
    shown = bool(newest) and newest[0].turn == head.turn and newest[0].role != DisplayRole.USER
    if not head.turn_open and shown:
        return None
    pending = e.journal.read(app_id)
    if pending is not None and (
        pending.turn != head.turn
        or pending.head != head.seq
        or pending.restore is not None
        or pending.edit is not None
    ):
        pending = None  # that step was committed: the transcript has it
    did = recovery.report(e.memory.units(app_id), head.turn, pending)
    if head.turn_open:
        why = "**Interrupted:** the server stopped before this turn finished; it was "
        why += "closed when the next turn began."
    else:
        why = "**Interrupted:** the server stopped after the answer, while building the "
        why += "preview; the preview was not updated."
    # What its requests cost, as the ledger kept them while it ran (the turn's own count
    # went with the server).
    spent = kept_usage(e.usage.of_turn(app_id, head.turn)) if e.usage is not None else None
    e.display.append(
        app_id,
        DisplayRole.ERROR,
        f"{why}\n\n{did.for_people()}",
        status=DisplayStatus.INTERRUPTED,
        turn=head.turn,
        usage=spent,
    )
    e.journal.clear(app_id)
    record_version(e, app_id, head.turn, f"turn {head.turn} (interrupted: the server stopped)")
    return did.for_model() if head.turn_open else None


def did(
    e: EngineParts,
    turn: Turn,
    pending: PendingStep | None,
    saved: Sequence[str] = (),
    saving: Sequence[str] = (),
) -> str:
    """What a running turn did, for its interrupted note: its committed steps, and the calls
    of a step that was running (a tool in a worker thread may still finish it); the files
    an answer saved or was saving (recovery.report)."""
    units = e.memory.units(turn.app_id)
    return recovery.report(units, turn.number, pending, saved, saving).for_model()


def interrupt(
    e: EngineParts,
    turn: Turn,
    reason: str,
    pending: PendingStep | None,
    saved: Sequence[str] = (),
    saving: Sequence[str] = (),
) -> None:
    """Close the turn even if a write of ours was still in flight when the stream was
    cancelled (a worker thread finishes it): catch up with the store's head, then close
    the turn only if it is still ours and still open."""
    try:
        e.memory.mark_interrupted(turn, reason, did(e, turn, pending, saved, saving))
    except Conflict:
        head = e.memory.head(turn.app_id)
        if head.turn != turn.number or not head.turn_open:
            return  # closed by that last write, or a newer turn began: nothing to close
        turn.head, turn.head_uid = head.seq, head.uid
        e.memory.mark_interrupted(turn, reason, did(e, turn, pending, saved, saving))
    e.journal.clear(turn.app_id)


def close_abandoned(
    e: EngineParts,
    turn: Turn,
    pending: PendingStep | None,
    *,
    shown: Callable[[str | None], str],
    changed: bool,
    summary: str,
    reason: str = SERVER_STOPPED,
    usage: dict[str, Any] | None = None,
) -> None:
    """Close a turn stopped before its end, for ``reason`` (told to the model in the
    transcript's note and to people in the display). ``shown`` is what the display entry
    says the turn did, given the version it made; ``changed``: record the files as a
    version; ``usage``: its tokens so far, for its display entry. Synchronous: a stream
    cancelled from outside may not await anything any more."""
    if not turn.closed:
        interrupt(e, turn, reason, pending)
    made = record_version(e, turn.app_id, turn.number, summary) if changed else None
    running = "\n\n" + recovery.report((), turn.number, pending).for_people() if pending else ""
    e.display.append(
        turn.app_id,
        DisplayRole.ERROR,
        shown(made) + running + f"\n\n**Interrupted:** {reason}.",
        status=DisplayStatus.INTERRUPTED,
        turn=turn.number,
        usage=usage,
    )
