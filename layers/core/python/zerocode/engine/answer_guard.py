"""An html or multi-file answer that would undo the builder's own edit is not saved (issue
38: "a builder's edit is final; checks follow it").

These apps answer with code blocks, not tool calls, so the failed tool result that refuses
a ``write_file`` (engine/edit_guard.py) has nothing to carry it. In a repair round where the
guard is active, an answer one of whose files would undo the edit is refused by structure:
none of its files is written (an answer's files are saved together or not at all,
engine/codegen.py, so no half of it lands beside code it was written with), and the
refusal is said where each party reads it — a failed step in the stream and the reply,
each block's line in the display ("not saved — refused: …"), and for the model a message
right after that answer: the repair message (the same unit of the transcript as the
answer, so the window never keeps one without the other), or the note after the turn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from zerocode.apps.workspace import FileMissing, Workspace, clean_path
from zerocode.engine import code_report
from zerocode.engine.events import ToolEvent
from zerocode.engine.turn_state import TurnState

# What the turn's ToolBox.guard holds: why writing (path, what it holds, what it would hold)
# undoes the builder's edit, or None.
Guard = Callable[[str, bytes | None, bytes], str | None]

WITH_IT = "it came with a file that would undo the user's own edit"


def refused_files(
    guard: Guard | None, workspace: Workspace, app_id: str, files: Mapping[str, str]
) -> dict[str, str]:
    """Each file of the answer that would undo the builder's edit, with why (empty when
    none would, or when no guard is active)."""
    if guard is None:
        return {}
    refused: dict[str, str] = {}
    for raw, content in files.items():
        path = clean_path(raw)
        try:
            current: bytes | None = workspace.read(app_id, path)
        except FileMissing:
            current = None
        why = guard(path, current, content.encode("utf-8"))
        if why is not None:
            refused[path] = why
    return refused


def refuse(
    st: TurnState, refused: Mapping[str, str], start: int, end: int, text: str, *, multi: bool
) -> Iterator[ToolEvent]:
    """The answer is not saved: recorded for the display and the model, one failed step per
    refused file for the stream (each its own id: a later save of the file does not
    replace it)."""
    st.code.append(code_report.not_saved(start, end, text, WITH_IT, multi=multi, why_of=refused))
    st.refused.append(told(refused))
    for path, why in refused.items():
        # One line, and no fence: the console's markdown would take ``` for a code block.
        summary = f"{path} not saved: {' '.join(why.replace('```', '').split())}"
        st.steps.append(f"✗ `save_file` {summary}")
        yield ToolEvent(
            id=f"refused:{len(st.code)}:{path}",
            name="save_file",
            phase="result",
            ok=False,
            path=path,
            summary=summary,
        )


def told(refused: Mapping[str, str]) -> str:
    """What the model is told of its answer that was not saved, and why."""
    lines = "\n".join(f"- {path}: {why}" for path, why in refused.items())
    return (
        "[zerocode: your last answer was not saved — none of its files was written, because "
        f"it would undo the user's own edit:\n{lines}\n"
        "The files are as they were before that answer.]"
    )
