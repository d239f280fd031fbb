"""The steps of a turn's work, each ending in one of a closed set of results that the loop
of engine/turn.py dispatches on (docs/engine.md, "A turn").

A step is an async iterator: it streams the turn's events as they happen, then yields its
result last. It records what it did in the turn's :class:`TurnState`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from zerocode import faults
from zerocode.apps.records import App, CodeGenType
from zerocode.engine import answer_guard, code_report, codegen, recovery, repair
from zerocode.engine.build_ahead import Ahead
from zerocode.engine.events import BuildEvent, TextEvent, ThinkingEvent, ToolEvent, TurnEvent
from zerocode.engine.journal import PendingCall, PendingStep
from zerocode.engine.model import (
    ContextTooLong,
    ModelError,
    ModelReply,
    ModelRole,
    TextDelta,
    ThinkingDelta,
)
from zerocode.engine.page_checks import checked
from zerocode.engine.parts import EngineParts, io, kind, over_budget
from zerocode.engine.step_calls import call_path, cut_off_call, not_run, over_limit, result_event
from zerocode.engine.suite_step import SuiteVerdict, apply_checks_block, run_suite
from zerocode.engine.tool_definitions import READ_ONLY_TOOLS
from zerocode.engine.tools import ToolBox, ToolOutcome
from zerocode.engine.turn_state import TurnState
from zerocode.engine.usage import BudgetSpent, cost_of, estimated_usage, keep
from zerocode.errors import ZerocodeError
from zerocode.memory.facade import Turn
from zerocode.memory.images import loaded
from zerocode.memory.messages import AssistantMessage, Message, ToolCall, UserMessage
from zerocode.publishing.builds import REFUSED, Build, BuildState, new_build_id
from zerocode.storage_refusal import refusal

log = logging.getLogger("zerocode.engine.turn")

CUT_OFF = "the answer was cut off by the output limit"
SAVING = "saving the generated files"


@dataclass(frozen=True, kw_only=True)
class ToolsRan:
    """A step of tool calls ran and was committed; the model is asked again."""

    changed: bool  # one of its calls changed a file


@dataclass(frozen=True, kw_only=True)
class Answered:
    """The model's work of this round is done: its closing text (committed once the preview
    stands) and whether this last step changed files (the html / multi-file files saved,
    or the calls of the step that called ``exit``)."""

    answer: str
    changed: bool


@dataclass(frozen=True)
class Failed:
    """The work failed (an answer cut off, code that cannot be saved): reported as
    ``event: error`` ``code``, and the turn is closed with the answer and ``reason``."""

    code: str
    reason: str
    answer: str


@dataclass(frozen=True)
class Built:
    """The preview was built (and checked): what fails in it, or None when it stands."""

    failure: repair.Failure | None


StepResult = ToolsRan | Answered | Failed | Built
RESULTS = (ToolsRan, Answered, Failed, Built)
Step = AsyncIterator[TurnEvent | StepResult]


class TurnSteps:
    """The steps of one turn: a model call (whole, continued when cut off), an agent step
    with its tools, a one-shot generation, the preview build."""

    def __init__(
        self, engine: EngineParts, app: App, system: str, toolbox: ToolBox, state: TurnState
    ) -> None:
        self.engine, self.app, self.system = engine, app, system
        self.toolbox, self.state = toolbox, state

    def ask(self, turn: Turn) -> Step:
        """The model's next step: a Vue agent step, or an html / multi-file answer."""
        if self.app.code_gen_type is CodeGenType.VUE_PROJECT:
            return self.agent_step(turn)
        return self.generate()

    async def agent_step(self, turn: Turn, role: ModelRole = ModelRole.VUE) -> Step:
        """One model call with tools; its calls run and the step is committed (M2)."""
        e, st = self.engine, self.state
        got = _Reply()
        async for event in got.passing(self._whole_text(role, self.toolbox.definitions)):
            yield event
        reply = got.reply()
        message = reply.message
        if not message.tool_calls:
            if reply.finish_reason == "length":
                yield Failed("cut_off", CUT_OFF, message.content or "")
            else:
                yield Answered(answer=message.content or "", changed=False)
            return
        outcomes: list[ToolOutcome] = []
        if len(message.tool_calls) > e.limits.max_calls_per_step:
            message, outcomes = over_limit(message, e.limits.max_calls_per_step)
            for outcome in outcomes:
                st.record(outcome)
                yield result_event(outcome.result.tool_call_id, outcome.result.name, outcome)
        else:
            st.phase = "running tools"
            calls = tuple(PendingCall(c.name, call_path(c)) for c in message.tool_calls)
            st.pending = PendingStep(turn=turn.number, head=turn.head, calls=calls)
            await io(e.journal.write, self.app.id, st.pending)
            cut = reply.finish_reason == "length"
            for call in message.tool_calls:
                yield ToolEvent(
                    id=call.id,
                    name=call.name,
                    phase="call",
                    ok=None,
                    path=call_path(call),
                    summary="",
                )
                if cut and call.parsed_arguments() is None:
                    outcome = cut_off_call(call)
                else:
                    outcome = await self._run_tool(call)
                faults.point("after_tool")
                outcomes.append(outcome)
                st.record(outcome)
                yield result_event(call.id, call.name, outcome)
        st.phase = "saving the step"
        await io(e.memory.commit_step, turn, message, [o.result for o in outcomes])
        st.pending = None
        faults.point("after_step_commit")
        st.phase = "asking the model"
        changed = any(o.changed and o.result.ok for o in outcomes)
        if any(o.exit for o in outcomes):
            yield Answered(answer=message.content or "Done.", changed=changed)
        else:
            yield ToolsRan(changed=changed)

    async def generate(self) -> Step:
        """One whole answer without tools; its code blocks are saved all-or-nothing (none
        when one would undo the builder's edit, engine/answer_guard.py). The display tells
        what each block did (engine/code_report.py), also when the answer
        never finished (the stream failed, the turn was stopped)."""
        st, start = self.state, len(self.state.text)
        told, multi = len(st.code), self.app.code_gen_type is not CodeGenType.HTML
        try:
            async for item in self._generate(start, multi=multi):
                yield item
        finally:
            if len(st.code) == told:
                saving = st.phase == SAVING
                why = code_report.ENDED_SAVING if saving else code_report.UNFINISHED
                status = code_report.NOT_KNOWN if saving else code_report.NOT_SAVED
                text, end = "".join(st.text[start:]), len(st.text)
                report = code_report.not_saved(start, end, text, why, multi=multi, status=status)
                st.code.append(report)

    async def _generate(self, start: int, *, multi: bool) -> Step:
        st = self.state
        got = _Reply()
        async for event in got.passing(self._whole_text(ModelRole.CODE, [])):
            yield event
        reply = got.reply()
        text = reply.message.content or ""
        end = len(st.text)
        if reply.finish_reason == "length":  # still cut off: nothing half-written is saved
            st.code.append(code_report.not_saved(start, end, text, CUT_OFF, multi=multi))
            yield Failed("cut_off", CUT_OFF + "; nothing was saved", text)
            return
        await self._apply_checks(text)
        if not codegen.has_code(text):
            st.code.append(code_report.not_saved(start, end, text, "", multi=multi))
            yield Answered(answer=text, changed=False)  # a question or an explanation: that is fine
            return
        parse = codegen.parse_multi_file if multi else codegen.parse_html
        try:
            files = parse(text)
            guard = self.toolbox.guard  # in a repair round: the builder's edit is kept
            args = (guard, self.engine.workspace, self.app.id, files)
            refused = await io(answer_guard.refused_files, *args)
            if not refused:
                st.phase = SAVING
                st.saving = tuple(files)
                saved = await io(codegen.save_files, self.engine.workspace, self.app.id, files)
                st.saving = ()
                st.saved.extend(saved)
        except ZerocodeError as exc:
            reason = f"the generated code could not be saved: {exc.message}"
            st.code.append(code_report.not_saved(start, end, text, exc.message, multi=multi))
            yield Failed(exc.code, reason, text)
            return
        if refused:  # none of its files is written; the model and the user are told why
            for event in answer_guard.refuse(st, refused, start, end, text, multi=multi):
                yield event
            yield Answered(answer=text, changed=False)
            return
        report = code_report.saved(start, end, text, multi=multi, before=saved, after=files)
        st.code.append(report)
        st.changed = st.unbuilt = True
        for path in saved:
            st.steps.append(f"✓ saved `{path}`")
            yield ToolEvent(
                id=f"save:{path}",
                name="save_file",
                phase="result",
                ok=True,
                path=path,
                summary=f"saved {path}",
            )
        yield Answered(answer=text, changed=True)

    async def _apply_checks(self, text: str) -> None:
        """An answer's ```checks block, applied to the suite; what it did is shown now and
        told to the model in a note once the turn is closed (it has no tool result)."""
        st, store = self.state, self.engine.checks
        raw = codegen.checks_block(text)
        if raw is None or store is None or st.turn is None:
            return
        st.phase = "saving the acceptance checks"
        lines = await io(apply_checks_block, store, self.app.id, st.turn.number, raw)
        st.checks_note.extend(lines)
        for line in lines:
            done = line.startswith(("- added", "- retired"))
            st.steps.append(("✓ " if done else "✗ ") + line[2:])
            st.suite_changed |= done

    async def accept(self, build: Build | None) -> Step:
        """The app's acceptance checks against the preview (``build``, or what it shows)."""
        async for item in run_suite(self.engine, self.app, self.state, build):
            if isinstance(item, SuiteVerdict):
                yield Built(item.failure)
            else:
                yield item

    async def build(self, ahead: Ahead | None = None) -> Step:
        """The preview build (the same Builder a deploy uses; the preview flips on
        success), or the one started ahead of the files as they are (engine/build_ahead.py),
        then the page in a browser: its runtime check and acceptance suite
        (engine/page_checks.py)."""
        st = self.state
        st.phase = "building the preview"
        build_id = ahead.build_id if ahead is not None else new_build_id()
        st.builds += 1
        st.unbuilt = False
        yield BuildEvent(status="running", buildId=build_id)
        if ahead is None:
            build = await self.engine.preview(self.app, build_id)
        else:
            build = await self._adopt(ahead)
        st.build = build
        lines = build.log_tail.splitlines()
        tail = "\n".join(lines[-15:])
        if build.state is not BuildState.SUCCEEDED:
            st.build_failures += 1
            why = build.error or "the build failed"
            kind = "refused" if why.startswith(REFUSED) else "build"  # the platform's: no repair
            st.steps.append("✗ preview " + ("not built" if kind == "refused" else "build failed"))
            yield BuildEvent(status="failed", buildId=build_id, log_tail=tail, error=why)
            yield Built(repair.Failure(kind, why, repair.relevant(lines)))
            return
        st.steps.append(f"✓ preview built in {build.seconds or 0:.1f} s")
        yield BuildEvent(status="succeeded", buildId=build_id, log_tail=tail)
        # The runtime check, with the suite meanwhile (told once the page stands).
        async for item in checked(self.engine, self.app, st, build):
            yield Built(item.failure) if isinstance(item, SuiteVerdict) else item

    async def _adopt(self, ahead: Ahead) -> Build:
        """The build started ahead, shown in the preview when it succeeded."""
        build = await ahead.task
        stages = self.engine.preview_stages
        if build.state is BuildState.SUCCEEDED and stages is not None:
            await stages.show_preview(self.app, build)
        return build

    async def _run_tool(self, call: ToolCall) -> ToolOutcome:
        """The call's outcome however it ends: a tool that raises becomes a failed result
        (the step, with the calls that worked, is still committed), except when storage
        refused its write: that ends the turn, its step told as one that may have run."""
        try:
            return await io(self.toolbox.run, call)
        except Exception as exc:
            if refusal(exc) is not None:
                raise  # storage refused the write: no later call can do better (turn.py)
            log.exception("tool %s raised app=%s", call.name, self.app.id)
            why = f"the tool failed inside the platform ({kind(exc)}); its effect is unknown"
            if call.name in recovery.CHANGING_TOOLS:
                why += ": read the file before relying on it"
            return not_run(call, why)

    async def _within_budget(self) -> None:
        """Each request asks whether the account's token budget is still there: one that
        ran out ends the turn here, between steps, so the last step is whole (issue 43)."""
        spent = await io(over_budget, self.engine, self.app.owner)
        if spent is not None:
            raise BudgetSpent(spent.message)

    async def _count(
        self, reply: ModelReply, sent: int, extra: Sequence[Message], tools: object
    ) -> None:
        """One request's tokens: the provider's word, or the platform's count where it said
        nothing; in the turn's tally and the ledger (engine/usage.py)."""
        st, e = self.state, self.engine
        counted, estimated = reply.usage, False
        if counted is None:
            counted, estimated = estimated_usage(sent, extra, tools, reply.message), True
        cost = cost_of(e.prices, reply.model, counted)  # None: no price, no cost claimed
        st.spent(counted, estimated=estimated, cost_micros=cost)
        if e.usage is not None and st.turn is not None:
            at = (self.app, st.turn.number, st.round)
            await keep(e.usage, at, counted, reply.model, estimated=estimated, cost_micros=cost)

    async def _stream(
        self,
        role: ModelRole,
        tools: list[dict[str, Any]],
        extra: Sequence[Message] = (),
    ) -> AsyncIterator[TurnEvent | ModelReply]:
        """One model call over the window (plus ``extra`` messages not in the transcript).
        A model that refuses the window as too long for its context is asked once more
        with a window of half the tokens; a second refusal fails the turn, saying so."""
        st, e = self.state, self.engine
        await self._within_budget()
        st.phase = "asking the model"
        budget: int | None = None
        # An earlier call's text, parted from this one's; never a cut-off answer's, which a
        # continuation (``extra``: the cut answer and the ask to go on) carries on exactly.
        before = "" if extra else next((t for t in reversed(st.text) if t), "")
        while True:
            window = await io(e.memory.window, self.app.id, self.system, budget)
            sent = (*window.messages, *extra)
            if e.images is not None:  # the images the window shows, loaded for this call
                sent = await io(loaded, sent, self.app.id, e.images)
            said = tools
            if not tools and any(isinstance(m, AssistantMessage) and m.tool_calls for m in sent):
                # An Ask turn's read-only calls in a window of a turn that has no tools: they
                # are declared (some endpoints refuse calls of undeclared tools) but not offered.
                said = READ_ONLY_TOOLS
                stream = e.model.stream(role, sent, said, tool_choice="none")
            else:
                stream = e.model.stream(role, sent, tools)
            try:
                async for event in stream:
                    if isinstance(event, TextDelta):
                        if before and event.text:
                            gap = paragraph_gap(before, event.text)
                            before = ""
                            if gap:
                                st.text.append(gap)
                                yield TextEvent(gap)
                        st.text.append(event.text)
                        yield TextEvent(event.text)
                        faults.point("mid_stream")
                    elif isinstance(event, ThinkingDelta):
                        yield ThinkingEvent(event.text)  # shown, never kept: not the answer
                    else:
                        await self._count(event, window.total_tokens, extra, said)
                        yield event
                return
            except ContextTooLong as exc:
                if budget is not None:
                    raise ModelError(
                        "the conversation is too long for the model's context, even with "
                        f"the window shrunk to {window.total_tokens} tokens ({exc.message})"
                    ) from exc
                budget = window.total_tokens // 2
                log.warning(
                    "model refused a %d-token window as too long; retrying with %d app=%s",
                    window.total_tokens,
                    budget,
                    self.app.id,
                )

    async def _whole_text(
        self, role: ModelRole, tools: list[dict[str, Any]]
    ) -> AsyncIterator[TurnEvent | ModelReply]:
        """A model reply whose text the output limit cut off is continued: the model is
        shown its partial answer and asked to go on (at most MAX_CONTINUATIONS times), and
        the parts are joined into one reply. The transcript keeps the joined answer; a
        reply still cut off after that is returned with finish_reason "length"."""
        parts: list[str] = []
        for _ in range(repair.MAX_CONTINUATIONS + 1):
            extra: tuple[Message, ...] = ()
            if parts:
                extra = (AssistantMessage("".join(parts)), UserMessage(repair.continue_message()))
            got = _Reply()
            async for event in got.passing(self._stream(role, tools, extra)):
                yield event
            reply = got.reply()
            message = reply.message
            if reply.finish_reason != "length" or message.tool_calls:
                if parts:
                    message = replace(message, content="".join(parts) + (message.content or ""))
                    reply = replace(reply, message=message)
                yield reply
                return
            parts.append(message.content or "")
        yield replace(reply, message=AssistantMessage("".join(parts) or "(no text)"))


class _Reply:
    """The model's reply at the end of a stream whose other items are passed on."""

    def __init__(self) -> None:
        self._reply: ModelReply | None = None

    async def passing(
        self, source: AsyncIterator[TurnEvent | ModelReply]
    ) -> AsyncIterator[TurnEvent]:
        async for item in source:
            if isinstance(item, ModelReply):
                self._reply = item
            else:
                yield item

    def reply(self) -> ModelReply:
        assert self._reply is not None, "a model stream ended without its reply"
        return self._reply


def paragraph_gap(before: str, after: str) -> str:
    """What goes between one model call's text and the next call's in the turn's answer: a
    paragraph break unless either side has whitespace there (issue 38: a model's sentences
    from two steps, "…the files.Now the checks", ran together)."""
    if before[-1:].isspace() or after[:1].isspace():
        return ""
    return "\n\n"
