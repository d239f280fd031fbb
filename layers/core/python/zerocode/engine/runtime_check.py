"""Runtime check port: does a built preview work in a browser?

A build can succeed and the page still fail: an uncaught exception, a Vue error, an empty
mount point. The engine asks this port after a successful preview build and, when it finds
problems, gives them to the model to repair (engine/repair.py). Best-effort: an adapter that
cannot start its browser reports no problems rather than failing a turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from zerocode.apps.records import App
from zerocode.publishing.builds import Build


@dataclass(frozen=True)
class NotChecked:
    """The page could not be checked, for a reason of the platform's that the user and the
    model are told (the checking browser was busy, or failed): never a repair round."""

    why: str


class RuntimeCheck(Protocol):
    async def check(self, app: App, build: Build) -> list[str] | NotChecked | None:
        """The problems found loading ``build``'s preview page; empty when it is fine.

        Called right after ``build`` succeeded, when the preview already shows it. Each
        problem is one line for the model (an uncaught exception, a console error, an empty
        mount point, a load that timed out), at most ~10 of at most ~300 characters. Never
        raises for what the page does; the adapter's own trouble (no browser) is no problem:
        None when there was nothing to check, :class:`NotChecked` saying why it was not.
        """
        ...
