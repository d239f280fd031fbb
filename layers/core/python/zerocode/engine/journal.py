"""The step journal: what a step was about to do, written before its tools run.

A step's calls and results reach the transcript in one write after the tools ran (M2), so
a server killed in between leaves files changed that the transcript does not know of. The
journal closes that gap: before the tools run, the engine records the step's calls (the
turn, the transcript head it builds on, each call's tool and path); the next turn, closing
a crashed one, reads it and says which calls may have run. One record per app, replaced by
every step; it is only read when the transcript still ends where it was written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class PendingCall:
    tool: str
    path: str | None


@dataclass(frozen=True, kw_only=True)
class PendingStep:
    turn: int
    head: int  # the transcript's head when the step began: still there means uncommitted
    calls: tuple[PendingCall, ...]
    # A version restore about to write files back (its number): redone by the next turn or
    # restore when the transcript still ends at ``head`` (engine/restore.py).
    restore: int | None = None
    # A person's edit of one file about to be written (its path, and the sha256 of what it
    # held before, "" for none): finished by the next turn, edit or restore, which tells the
    # model when the file no longer holds what it did (engine/user_edit.py).
    edit: tuple[str, str] | None = None
    # A builder's change of the app's data about to be made (what it is, for the model):
    # told by the next turn, edit or restore as one that may or may not have landed
    # (engine/data_edit.py).
    data: str | None = None

    def encode(self) -> str:
        raw: dict[str, object] = {
            "turn": self.turn,
            "head": self.head,
            "calls": [[c.tool, c.path] for c in self.calls],
        }
        if self.restore is not None:
            raw["restore"] = self.restore
        if self.edit is not None:
            raw["edit"] = list(self.edit)
        if self.data is not None:
            raw["data"] = self.data
        return json.dumps(raw)

    @classmethod
    def decode(cls, text: str) -> PendingStep | None:
        try:
            raw = json.loads(text)
            calls = tuple(
                PendingCall(str(t), p if isinstance(p, str) else None) for t, p in raw["calls"]
            )
            restore = raw.get("restore")
            edit = raw.get("edit")
            data = raw.get("data")
            return cls(
                turn=int(raw["turn"]),
                head=int(raw["head"]),
                calls=calls,
                restore=int(restore) if restore is not None else None,
                edit=(str(edit[0]), str(edit[1])) if edit is not None else None,
                data=str(data) if data is not None else None,
            )
        except (ValueError, KeyError, TypeError):
            return None  # unreadable: treated as no record, never as a claim


class StepJournal(Protocol):
    def write(self, app_id: str, step: PendingStep) -> None:
        """Record the step about to run (replacing the app's previous record)."""
        ...

    def read(self, app_id: str) -> PendingStep | None: ...

    def clear(self, app_id: str) -> None: ...


class MemoryJournal:
    """In one process only (tests that do not restart)."""

    def __init__(self) -> None:
        self.steps: dict[str, PendingStep] = {}

    def write(self, app_id: str, step: PendingStep) -> None:
        self.steps[app_id] = step

    def read(self, app_id: str) -> PendingStep | None:
        return self.steps.get(app_id)

    def clear(self, app_id: str) -> None:
        self.steps.pop(app_id, None)
