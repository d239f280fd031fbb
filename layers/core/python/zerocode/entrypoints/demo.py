"""``zerocode demo``: conversation memory on the local SQLite store, shown step by step.

Until the platform server exists this is what ``make run`` starts: it records a
Vue editing session the way the engine will, then shows that the window keeps
every tool call, stays within budget, survives a cache loss unchanged, and
closes a crashed turn instead of re-running it.
"""

from __future__ import annotations

from collections.abc import Callable

from zerocode.adapters.inprocess.cache import LruWindowCache
from zerocode.bootstrap import parts
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints.sample_session import vue_editing_session
from zerocode.memory.facade import Memory
from zerocode.memory.messages import AssistantMessage, ToolResult
from zerocode.memory.validation import validate

SYSTEM = "You are zerocode's Vue agent. Change files only through the tools."
APP = "demo-app"


def run_demo(settings: Settings, turns: int = 12, out: Callable[[str], None] = print) -> None:
    transcript, _ = parts.stores(settings)
    memory = parts.memory(settings, transcript)
    memory.delete(APP)
    out(f"zerocode memory demo — transcript in {settings.sqlite_path} (app {APP!r})")
    out(f"policy: {settings.window_policy()}\n")
    out(f"{'turn':>4} {'stored':>7} {'window':>7} {'tokens':>7} {'elided':>7} {'tool calls':>10}")
    for turn in vue_editing_session(turns):
        handle = memory.begin_turn(APP, turn.request)
        for step in turn.steps:
            memory.commit_step(handle, step.call, step.results)
        memory.commit_final(handle, turn.reply)
        w = memory.window(APP, SYSTEM)
        validate(w.messages)
        calls = sum(len(m.tool_calls) for m in w.messages if isinstance(m, AssistantMessage))
        out(
            f"{turn.number:>4} {handle.head:>7} {len(w.messages):>7} {w.total_tokens:>7} "
            f"{w.elided_payloads:>7} {calls:>10}"
        )

    before = memory.window(APP, SYSTEM)
    fresh = Memory(transcript, LruWindowCache(), settings.window_policy())  # a new container
    after = fresh.window(APP, SYSTEM)
    out(f"\ncache lost, window rebuilt from the store: identical = {before == after}")

    crashed = memory.begin_turn(APP, "Add a dark mode toggle.")
    memory.commit_step(crashed, *_first_step(turns + 1))
    out(f"turn {crashed.number} crashed after one step (no final answer written)")
    memory.begin_turn(APP, "Are you there?")
    note = [m for m in memory.window(APP, SYSTEM).messages if isinstance(m, AssistantMessage)]
    out(f"next turn closed it first: {note[-1].content}")
    failed = sum(1 for m in after.messages if isinstance(m, ToolResult) and not m.ok)
    out(f"\nthe model sees {failed} failed tool result(s) as failures, never as success.")


def _first_step(turn: int) -> tuple[AssistantMessage, list[ToolResult]]:
    step = next(t for t in vue_editing_session(turn) if t.number == turn).steps[0]
    return step.call, list(step.results)
