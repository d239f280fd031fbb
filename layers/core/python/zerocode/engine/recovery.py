"""What a turn that did not finish did: told to the model and to the user (M7).

A turn can end without its own closing: the server died (the next turn closes it), the
client went away, or the server failed mid-turn. Whoever closes it says what happened from
the record, not from hope: the files its committed steps changed (the transcript), and the
calls of a step that was running, which may have changed files with no result recorded
(the step journal, :mod:`zerocode.engine.journal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from zerocode.engine.journal import PendingStep
from zerocode.memory.messages import AssistantMessage, ToolResult
from zerocode.memory.transcript import EntryKind, Unit

CHANGING_TOOLS = frozenset({"write_file", "modify_file", "delete_file"})


@dataclass(frozen=True)
class Report:
    changed: tuple[str, ...]  # "path (tool)" of committed calls that changed a file
    maybe: tuple[str, ...]  # "path (tool)" of calls of a running step, results unknown

    def for_model(self) -> str:
        """The detail of the transcript's interrupted note."""
        parts = [
            "Files its recorded steps changed: " + ", ".join(self.changed) + "."
            if self.changed
            else "Its recorded steps changed no files."
        ]
        if self.maybe:
            parts.append(
                "A step was running when it stopped; these calls of it may have run, with "
                "no result recorded: " + ", ".join(self.maybe) + ". Read those files before "
                "relying on them."
            )
        else:
            parts.append("Nothing else was done.")
        return " ".join(parts)

    def for_people(self) -> str:
        """Lines of the display entry."""
        lines = []
        if self.changed:
            lines.append("Changed before it stopped: " + ", ".join(f"`{c}`" for c in self.changed))
        if self.maybe:
            lines.append(
                "A step was running; these calls may have changed files, with no result "
                "recorded: " + ", ".join(f"`{c}`" for c in self.maybe)
            )
        if not lines:
            lines.append("_No files were changed._")
        return "\n\n".join(lines)


def report(
    units: Sequence[Unit],
    turn: int,
    pending: PendingStep | None,
    saved: Sequence[str] = (),
    saving: Sequence[str] = (),
) -> Report:
    """What turn ``turn`` did, from its units in the transcript and a pending step; with
    the files an html / multi-file answer ``saved`` (it is not in the transcript until
    the turn ends) and those it was ``saving`` when it stopped."""
    changed: list[str] = [f"{path} (saved from the answer)" for path in saved]
    for unit in units:
        if unit.turn != turn or unit.kind is not EntryKind.CALL:
            continue
        call_message = unit.messages[0]
        results = {m.tool_call_id: m for m in unit.messages[1:] if isinstance(m, ToolResult)}
        if not isinstance(call_message, AssistantMessage):
            continue
        for call in call_message.tool_calls:
            result = results.get(call.id)
            if call.name in CHANGING_TOOLS and result is not None and result.ok:
                path = (call.parsed_arguments() or {}).get("path")
                changed.append(f"{path} ({call.name})" if isinstance(path, str) else call.name)
    maybe = tuple(
        f"{c.path} ({c.tool})" if c.path else c.tool
        for c in (pending.calls if pending and pending.turn == turn else ())
        if c.tool in CHANGING_TOOLS
    ) + tuple(f"{path} (being saved from the answer)" for path in saving)
    return Report(tuple(dict.fromkeys(changed)), tuple(dict.fromkeys(maybe)))
