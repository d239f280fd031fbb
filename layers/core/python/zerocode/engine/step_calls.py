"""A tool step's calls as the platform answers them when their tool does not (split from
engine/turn_steps.py): a call cut off by the output limit, a step over the per-step call
limit, a call that did not run; the path a call names; a call's result event."""

from __future__ import annotations

from zerocode.apps.workspace import PathRefused, clean_path
from zerocode.engine.events import ToolEvent
from zerocode.engine.tools import ToolOutcome
from zerocode.memory.messages import AssistantMessage, ToolCall, ToolResult


def result_event(call_id: str, name: str, outcome: ToolOutcome) -> ToolEvent:
    return ToolEvent(
        id=call_id,
        name=name,
        phase="result",
        ok=outcome.result.ok,
        path=outcome.path,
        summary=outcome.summary,
    )


def cut_off_call(call: ToolCall) -> ToolOutcome:
    why = (
        "not run: your answer was cut off by the output limit while writing this call, so "
        "its arguments are incomplete; write it again (split a large file into parts)"
    )
    return not_run(call, why)


def over_limit(message: AssistantMessage, limit: int) -> tuple[AssistantMessage, list[ToolOutcome]]:
    """A step asking for more calls than one step may hold: none runs. The step is kept with
    its first ``limit`` calls, each answered that it did not run, and a note saying how
    many calls were asked for (the whole step would not fit one transcript write)."""
    asked = len(message.tool_calls)
    kept = message.tool_calls[:limit]
    why = (
        f"not run: this step asked for {asked} tool calls and one step may make at most "
        f"{limit}; none of them ran. Ask for at most {limit} at a time."
    )
    note = (
        f"[zerocode: this step asked for {asked} tool calls; only the first {limit} are kept "
        "here, and none of them ran.]"
    )
    content = f"{message.content}\n\n{note}" if message.content else note
    slim = AssistantMessage(content, tool_calls=kept)
    return slim, [not_run(c, why) for c in kept]


def not_run(call: ToolCall, why: str) -> ToolOutcome:
    """A call answered by the platform, not by its tool: it failed and changed nothing."""
    return ToolOutcome(
        result=ToolResult.failure(call, why),
        path=call_path(call),
        summary=why,
        changed=False,
        exit=False,
    )


def call_path(call: ToolCall) -> str | None:
    """The path a call names, as the tool will see it (None if absent or refused)."""
    raw = (call.parsed_arguments() or {}).get("path")
    try:
        return clean_path(raw) if isinstance(raw, str) else None
    except PathRefused:
        return None
