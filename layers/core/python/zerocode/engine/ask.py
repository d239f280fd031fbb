"""Ask mode (issue 43): a message sent as a question. The model gets read-only tools, and the
turn's work is its steps and answer only: no file change, no build, no version, by structure
(the toolbox has no writing tool, and :class:`AskWork` has no build step). The question and
answer stay in the transcript as a normal turn, so the next Build turn sees them. How the
question and the prompt are worded for the model: engine/prompts (``asked``, ``asking``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Literal

from zerocode.apps.records import App, CodeGenType
from zerocode.engine.events import ErrorEvent, TurnEvent
from zerocode.engine.model import ModelRole
from zerocode.engine.parts import EngineParts, io
from zerocode.engine.turn_state import TurnState
from zerocode.engine.turn_steps import RESULTS, Answered, Failed, StepResult, ToolsRan, TurnSteps
from zerocode.engine.turn_work import TurnWork
from zerocode.memory.facade import Turn

Mode = Literal["build", "ask"]

NO_ANSWER = "(The model gave no answer.)"


def role(app: App) -> ModelRole:
    """The model that made the app answers about it."""
    return ModelRole.VUE if app.code_gen_type is CodeGenType.VUE_PROJECT else ModelRole.CODE


class AskWork(TurnWork):
    """An Ask turn's work: read-only tool steps until the model answers. It has no build, no
    repair round and records no version: nothing it may run changes a file. (A TurnWork for
    how a turn that ran out of steps or failed is closed, with no build ahead.)"""

    def __init__(self, engine: EngineParts, app: App, state: TurnState, steps: TurnSteps) -> None:
        super().__init__(engine, app, state, steps, None)

    async def run(self, turn: Turn) -> AsyncIterator[TurnEvent]:
        asked = 0
        while True:
            result: StepResult | None = None
            async for item in self.steps.agent_step(turn, role(self.app)):
                if isinstance(item, RESULTS):
                    result = item
                else:
                    yield item
            match result:
                case ToolsRan():
                    asked += 1
                    if asked >= self.engine.limits.max_tool_calls + 2:
                        yield await self._out_of_steps(turn)
                        return
                case Answered(answer=answer):
                    # A read that failed or a write refused fails its call, not the answer:
                    # no change was asked for, and the answer says what the tools said.
                    self.state.failure_after_change = False
                    self.state.phase = "saving the answer"
                    await io(self.engine.memory.commit_final, turn, answer or NO_ANSWER)
                    return
                case Failed(code=code, reason=reason, answer=answer):
                    self.state.error = reason
                    yield ErrorEvent(code, reason)
                    await self._close_failed_work(turn, answer, f"[zerocode: {reason}]")
                    return
                case _:
                    raise AssertionError(f"an ask step ended without a result: {result!r}")
