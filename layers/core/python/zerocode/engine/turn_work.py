"""A turn's work: the model's steps, then the preview, then repair rounds (engine/repair.py)
until it stands or none is left; the turn is closed here (split from engine/turn.py, which
starts a turn and ends it however it ends)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial

from zerocode.apps.records import App, CodeGenType
from zerocode.engine import repair
from zerocode.engine.build_ahead import Ahead, BuildAhead
from zerocode.engine.closing import did
from zerocode.engine.edit_guard import edit_guard, repair_note
from zerocode.engine.events import ErrorEvent, RepairEvent, TurnEvent
from zerocode.engine.parts import EngineParts, io
from zerocode.engine.turn_state import TurnState
from zerocode.engine.turn_steps import (
    RESULTS,
    Answered,
    Built,
    Failed,
    StepResult,
    ToolsRan,
    TurnSteps,
)
from zerocode.memory.facade import Turn


@dataclass
class _Progress:
    """Where the work of a turn stands between its steps: the loop state of :meth:`TurnWork.run`."""

    attempt: int = 0  # repair rounds used
    asked: int = 0  # tool steps of this round
    unbuilt: bool = False  # this round changed files since the preview was built
    failure: repair.Failure | None = None  # what fails in the newest preview
    closed: bool = False  # the turn is closed: no further step


class TurnWork:
    """The work of one turn, over the turn's state, steps and build ahead."""

    def __init__(
        self,
        engine: EngineParts,
        app: App,
        state: TurnState,
        steps: TurnSteps,
        ahead: BuildAhead | None,
    ) -> None:
        self.engine, self.app, self.state = engine, app, state
        self.steps, self.ahead = steps, ahead

    async def _take_ahead(self) -> Ahead | None:
        return await self.ahead.take() if self.ahead is not None else None

    async def run(self, turn: Turn) -> AsyncIterator[TurnEvent]:
        """The model's work, then the preview; a preview that fails is shown to the model,
        which gets ``repair_rounds`` more tries inside the turn (engine/repair.py). The turn
        is closed here: its final answer once the preview stands (or nothing needed
        building), else a note saying what still fails."""
        work = _Progress()
        while not work.closed:
            result: StepResult | None = None
            async for item in self.steps.ask(turn):
                if isinstance(item, RESULTS):
                    result = item
                else:
                    yield item
            async for event in self._after(turn, result, work):
                yield event

    async def _after(
        self, turn: Turn, result: StepResult | None, work: _Progress
    ) -> AsyncIterator[TurnEvent]:
        """What a step's result leads to: another step, the turn closed, or the preview."""
        match result:
            case ToolsRan(changed=changed):
                work.unbuilt |= changed
                work.asked += 1
                if changed and self.ahead is not None:
                    await self.ahead.start()
                if work.asked >= self.engine.limits.max_tool_calls + 2:
                    work.closed = True
                    yield await self._out_of_steps(turn)
            case Failed(code=code, reason=reason, answer=answer):
                work.closed = True
                self.state.error = reason
                yield ErrorEvent(code, reason)
                await self._close_failed_work(turn, answer, f"[zerocode: {reason}]")
            case Answered(answer=answer, changed=changed):
                work.unbuilt |= changed
                if changed and self.ahead is not None:
                    self.ahead.drop()  # the closing step changed files: build them afresh
                async for event in self._answered(turn, answer, work):
                    yield event
            case _:
                raise AssertionError(f"a step ended without a result: {result!r}")

    async def _answered(self, turn: Turn, answer: str, work: _Progress) -> AsyncIterator[TurnEvent]:
        """The round's work is done: build the preview if files changed, then commit the
        answer, give up, or start a repair round."""
        suite = self.state.suite_changed  # checks added or retired: run them
        if not (work.unbuilt or work.attempt or suite):  # nothing to build, check or repair
            work.closed = True
            await self._commit_final(turn, answer)
            return
        if work.unbuilt or suite:
            if work.unbuilt:
                steps = self.steps.build(await self._take_ahead())
            else:
                steps = self.steps.accept(self.state.build)
            async for item in steps:
                if isinstance(item, Built):
                    work.failure = item.failure
                elif not isinstance(item, RESULTS):
                    yield item
        failure = work.failure
        if failure is None:
            work.closed = True
            await self._commit_final(turn, answer or "Done.")
        elif failure.kind == "refused":  # the platform could not build: no repair round
            work.closed = True
            self.state.error = f"the preview was not built: {failure.summary}"
            await self._close_failed_work(turn, answer, repair.refused_message(failure))
        elif work.attempt >= self.engine.limits.repair_rounds:
            work.closed = True
            await self._give_up(turn, answer, failure, work.attempt)
        else:
            work.attempt = self.state.round = work.attempt + 1
            yield self._repair_event(failure, work.attempt)
            await self._ask_repair(turn, answer, failure, work.attempt)
            work.asked, work.unbuilt = 0, False

    async def _commit_final(self, turn: Turn, answer: str) -> None:
        self.state.phase = "saving the answer"
        await io(self.engine.memory.commit_final, turn, answer)

    def _repair_event(self, failure: repair.Failure, attempt: int) -> RepairEvent:
        rounds = self.engine.limits.repair_rounds
        self.state.steps.append(f"↻ repair {attempt}/{rounds}: {failure.summary}")
        return RepairEvent(attempt, rounds, failure.summary, failure.kind)

    async def _ask_repair(
        self, turn: Turn, answer: str, failure: repair.Failure, attempt: int
    ) -> None:
        """The failure shown to the model as a feedback unit, for another round."""
        message = self.state.take_refused() + repair.repair_message(
            failure, attempt, self.engine.limits.repair_rounds, tools=self._tools
        )
        if failure.kind == "acceptance":
            message += await self._keep_edit(turn)
        self.state.phase = "saving the repair request"
        await io(self.engine.memory.commit_feedback, turn, answer, message)

    async def _keep_edit(self, turn: Turn) -> str:
        """Checks the builder's own edit broke, failing now: the repair message says the
        edit is final and the check is to change; writes undoing it are refused, by a
        tool or in an answer's code blocks (issue 38)."""
        self.state.phase = "reading the builder's edits"
        run = self.state.suite_run
        failing = {r.check_id for r in run.failed()} if run is not None else set()
        guard = await io(edit_guard, self.engine, self.app.id, turn.number)
        if guard is None or not guard.broke & failing:
            return ""
        self.steps.toolbox.guard = partial(guard.refusal, tools=self._tools)
        return "\n\n" + repair_note(guard, tools=self._tools)

    async def _out_of_steps(self, turn: Turn) -> ErrorEvent:
        """The model kept calling tools past the per-turn limit: the turn is closed."""
        reason = "the model kept calling tools past the per-turn limit"
        self.state.error = reason
        note = did(self.engine, turn, self.state.pending)
        await io(self.engine.memory.mark_interrupted, turn, reason, note)
        return ErrorEvent("tool_limit", reason)

    async def _give_up(
        self, turn: Turn, answer: str, failure: repair.Failure, attempts: int
    ) -> None:
        """The preview still fails and no repair round is left: the turn fails, and the
        model and the user are told what still fails."""
        what = repair.GIVING_UP[failure.kind]
        after = f" after {attempts} repair round{'s' if attempts != 1 else ''}" if attempts else ""
        self.state.error = f"the {what}{after}: {failure.summary}"
        message = repair.repair_message(failure, attempts + 1, attempts, tools=self._tools)
        await self._close_failed_work(turn, answer, message + "\n(No repair round is left.)")

    @property
    def _tools(self) -> bool:
        return self.app.code_gen_type is CodeGenType.VUE_PROJECT

    async def _close_failed_work(self, turn: Turn, answer: str, feedback: str) -> None:
        """Close a turn whose work failed: the model's answer (if any) with the platform's
        word on it, then the interrupted note with the reason. Never a final answer that
        reads as if it worked."""
        st, memory = self.state, self.engine.memory
        assert st.error is not None
        st.phase = "saving the answer"
        if answer:  # an answer refused for undoing the builder's edit is told with it
            await io(memory.commit_feedback, turn, answer, st.take_refused() + feedback)
        await io(memory.mark_interrupted, turn, st.error, did(self.engine, turn, st.pending))
