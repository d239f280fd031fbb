"""The turn engine: one user message in, a stream of true events out (docs/invariants.md).

Everything reported is what happened: each tool's real outcome, the build's
real status, and a ``done`` whose status follows from them. However the turn
ends — finished, failed, model error, client gone — the transcript is valid
and the turn is closed (M2, M7), and the app's lease is released.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from zerocode import faults
from zerocode.apps.lease import Lease
from zerocode.apps.records import App, CodeGenType
from zerocode.apps.versions import Versions
from zerocode.apps.workspace import PathRefused, Workspace, clean_path
from zerocode.engine import codegen, prompts, recovery, repair
from zerocode.engine.events import (
    BuildEvent,
    DoneEvent,
    ErrorEvent,
    RepairEvent,
    TextEvent,
    ThinkingEvent,
    ToolEvent,
    TurnEvent,
)
from zerocode.engine.journal import PendingCall, PendingStep, StepJournal
from zerocode.engine.model import (
    ChatModel,
    ContextTooLong,
    ModelError,
    ModelReply,
    ModelRole,
    TextDelta,
    ThinkingDelta,
)
from zerocode.engine.runtime_check import RuntimeCheck
from zerocode.engine.tools import TOOL_DEFINITIONS, ToolBox, ToolOutcome
from zerocode.errors import Conflict, PayloadTooLarge, ZerocodeError
from zerocode.memory.display import DisplayHistoryStore, DisplayRole, DisplayStatus
from zerocode.memory.facade import Memory, Turn
from zerocode.memory.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolResult,
    UserMessage,
)
from zerocode.observability import APP_ID, TURN, record_turn
from zerocode.publishing.builds import Build, BuildState, built_from, new_build_id, snapshot

# Build the app's current files and, when that works, show them in its preview.
Preview = Callable[[App, str], Awaitable[Build]]

log = logging.getLogger(__name__)

PROMPT_OF = {
    CodeGenType.HTML: "html",
    CodeGenType.MULTI_FILE: "multi_file",
    CodeGenType.VUE_PROJECT: "vue_project",
}


@dataclass(frozen=True)
class EngineLimits:
    max_tool_calls: int = 20
    max_calls_per_step: int = 32  # one step and its results are one transcript write
    turn_timeout: float = 14 * 60
    lease_seconds: float = 30  # renewed every third of it while the turn runs
    repair_rounds: int = 2  # tries the model gets to fix a failing preview in the turn
    max_turns: int = 1000  # per app: past it the history is full (413)


@dataclass
class TurnState:
    """What the turn did, for the honest status and the display entry."""

    text: list[str] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)
    tool_calls: int = 0
    tool_failures: int = 0
    builds: int = 0
    build_failures: int = 0
    failure_after_change: bool = False
    changed: bool = False
    unbuilt: bool = False  # files changed since the last preview build
    error: str | None = None

    def record(self, outcome: ToolOutcome) -> None:
        self.tool_calls += 1
        self.tool_failures += not outcome.result.ok
        mark = "✓" if outcome.result.ok else "✗"
        self.steps.append(f"{mark} `{outcome.result.name}` {outcome.summary}")
        if outcome.changed and outcome.result.ok:
            self.changed = self.unbuilt = True
            self.failure_after_change = False
        elif not outcome.result.ok:
            self.failure_after_change = True

    def display(self) -> str:
        parts = ["".join(self.text).strip()]
        if self.steps:
            parts.append("\n".join(f"- {s}" for s in self.steps))
        if not self.changed and not self.error:
            parts.append("_No files were changed._")
        if self.error:
            parts.append(f"**Failed:** {self.error}")
        return "\n\n".join(p for p in parts if p) or "(no answer)"


class Engine:
    def __init__(
        self,
        *,
        memory: Memory,
        display: DisplayHistoryStore,
        workspace: Workspace,
        preview: Preview,
        model: ChatModel,
        lease: Lease,
        journal: StepJournal,
        limits: EngineLimits = EngineLimits(),
        runtime_check: RuntimeCheck | None = None,
        versions: Versions | None = None,
    ) -> None:
        self.runtime_check, self.versions = runtime_check, versions
        self.memory, self.display, self.workspace = memory, display, workspace
        self.preview, self.model, self.lease = preview, model, lease
        self.journal, self.limits = journal, limits

    def start(self, app: App, message: str, element: dict[str, Any] | None) -> TurnRun:
        """Take the app's lease or raise Conflict (409) before anything is streamed."""
        if self.memory.head(app.id).turn >= self.limits.max_turns:
            raise PayloadTooLarge(
                f"this app has reached {self.limits.max_turns} turns; start a new app to keep going"
            )
        holder = secrets.token_hex(8)
        if not self.lease.acquire(f"turn:{app.id}", holder, self.limits.lease_seconds):
            raise Conflict("a turn is already running for this app; wait for it to finish")
        return TurnRun(self, app, message, element, holder)


class TurnRun:
    def __init__(
        self, engine: Engine, app: App, message: str, element: dict[str, Any] | None, holder: str
    ) -> None:
        self.engine, self.app, self.message, self.element = engine, app, message, element
        self.holder = holder
        self.system = prompts.load(PROMPT_OF[app.code_gen_type])
        self.state = TurnState()
        self.turn: Turn | None = None
        self.pending: PendingStep | None = None  # the step whose tools are running
        self.answer: str | None = None  # the model's closing text, committed with the preview
        self.failure: repair.Failure | None = None  # what fails in the newest preview
        self.build: Build | None = None  # the newest preview build
        self.toolbox = ToolBox(engine.workspace, app.id, max_calls=engine.limits.max_tool_calls)
        self.phase = "starting"  # what the turn is doing, for an honest error
        self.finished = False
        self.started = time.monotonic()
        self.usage = [0, 0]  # model tokens in, out, over the turn's model calls

    async def events(self) -> AsyncIterator[TurnEvent]:
        e, app = self.engine, self.app
        status: Literal["succeeded", "failed", "interrupted"] = "failed"
        self.started = time.monotonic()
        APP_ID.set(app.id)
        keeper = asyncio.create_task(self._keep_lease())
        try:
            try:
                self.phase = "closing the previous turn"
                await _io(self._finish_restore)
                crashed = await _io(self._close_crashed)
                self.phase = "saving your message"
                faults.point("before_user_commit")
                self.turn = await e.memory.open_turn(
                    app.id, self.message, self.element, self.system, crashed
                )
                TURN.set(self.turn.number)
                await _io(
                    e.display.append,
                    app.id,
                    DisplayRole.USER,
                    self.message,
                    turn=self.turn.number,
                    element=self.element,
                )
                faults.point("after_user_commit")
                async with asyncio.timeout(e.limits.turn_timeout):
                    async for event in self._work(self.turn):
                        yield event
                status = (
                    "failed" if self.state.error or self.state.failure_after_change else "succeeded"
                )
            except (ModelError, TimeoutError) as exc:
                reason = (
                    exc.message
                    if isinstance(exc, ModelError)
                    else f"the turn took longer than {e.limits.turn_timeout:.0f} s"
                )
                self.state.error = reason
                await self._close_failed(reason)
                yield ErrorEvent(
                    "model_error" if isinstance(exc, ModelError) else "timeout", reason
                )
            except Exception as exc:  # the platform failed (a store, the disk, a bug)
                log.exception("turn failed app=%s while %s", app.id, self.phase)
                reason = f"the server failed while {self.phase} ({_kind(exc)})"
                self.state.error = reason
                await self._close_failed(reason)
                yield ErrorEvent("server_error", reason)
            if self.turn is not None:
                with _logged("could not record the end of turn app=%s", app.id):
                    await _io(
                        e.display.append,
                        app.id,
                        DisplayRole.AI if status == "succeeded" else DisplayRole.ERROR,
                        self.state.display(),
                        status=DisplayStatus.OK if status == "succeeded" else DisplayStatus.FAILED,
                        turn=self.turn.number,
                    )
            if self.turn is not None and self.state.changed:
                self.phase = "recording the version"
                await _io(
                    record_version, e, app.id, self.turn.number, self._summary(status), self.build
                )
            self.finished = True
            self._record(status)
            yield DoneEvent(status, self.turn.number if self.turn else 0)
        finally:
            keeper.cancel()
            self._close_abandoned()
            with _logged("could not release the lease of app=%s", app.id):
                e.lease.release(f"turn:{app.id}", self.holder)

    async def _keep_lease(self) -> None:
        """Renew the app's lease while the turn runs: a server that dies stops renewing, and
        the app is free again ``lease_seconds`` later."""
        e = self.engine
        while True:
            await asyncio.sleep(e.limits.lease_seconds / 3)
            try:
                held = await _io(
                    e.lease.acquire, f"turn:{self.app.id}", self.holder, e.limits.lease_seconds
                )
            except Exception as exc:  # a store hiccup: try again at the next renewal
                log.warning("could not renew the turn lease of app=%s: %s", self.app.id, exc)
                continue
            if not held:
                log.error("the turn lease of app=%s was taken over", self.app.id)
                return

    def _summary(self, status: str) -> str:
        """A version's summary: the request, and how the turn ended when it did not work."""
        return self.message if status == "succeeded" else f"{self.message} ({status})"

    def _close_crashed(self) -> str | None:
        return close_crashed(self.engine, self.app.id)

    def _finish_restore(self) -> None:
        # engine/restore.py builds on this module; imported here, where it is used
        from zerocode.engine.restore import finish_interrupted_restore

        finish_interrupted_restore(self.engine, self.app)

    async def _close_failed(self, reason: str) -> None:
        """Close the turn in the transcript after an error, saying what it did."""
        if self.turn is None or self.turn.closed:
            return
        with _logged("could not close failed turn app=%s", self.app.id):
            await _io(self._interrupt_latest, reason)

    def _interrupt_latest(self, reason: str) -> None:
        """Close the turn even if a write of ours was still in flight when the stream was
        cancelled (a worker thread finishes it): catch up with the store's head, then close
        the turn only if it is still ours and still open."""
        assert self.turn is not None
        e = self.engine
        try:
            e.memory.mark_interrupted(self.turn, reason, self._did())
        except Conflict:
            head = e.memory.head(self.app.id)
            if head.turn != self.turn.number or not head.turn_open:
                return  # closed by that last write, or a newer turn began: nothing to close
            self.turn.head, self.turn.head_uid = head.seq, head.uid
            e.memory.mark_interrupted(self.turn, reason, self._did())
        self.engine.journal.clear(self.app.id)

    def _did(self) -> str:
        """What this turn did, for its interrupted note: its committed steps, and the calls
        of a step that was running (a tool in a worker thread may still finish it)."""
        assert self.turn is not None
        pending = self.pending
        units = self.engine.memory.units(self.app.id)
        return recovery.report(units, self.turn.number, pending).for_model()

    def _record(self, status: str) -> None:
        """The turn's log line and metrics (tokens, tools, builds, duration)."""
        st = self.state
        log.info(
            "turn %s status=%s tokens_in=%s tokens_out=%s",
            self.turn.number if self.turn else "-",
            status,
            *self.usage,
            extra={
                "status": status,
                "tokens_in": self.usage[0],
                "tokens_out": self.usage[1],
                "tool_calls": st.tool_calls,
                "tool_failures": st.tool_failures,
            },
        )
        record_turn(
            status=status,
            seconds=time.monotonic() - self.started,
            tokens_in=self.usage[0],
            tokens_out=self.usage[1],
            tool_calls=st.tool_calls,
            tool_failures=st.tool_failures,
            builds=st.builds,
            build_failures=st.build_failures,
            errors=int(st.error is not None),
        )

    def _close_abandoned(self) -> None:
        """The client went away (or the server is stopping): close the turn, synchronously,
        because a cancelled stream may not await anything any more."""
        if self.finished or self.turn is None:
            return
        e = self.engine
        try:
            if not self.turn.closed:
                self._interrupt_latest("the client disconnected")
            if self.state.changed:
                record_version(e, self.app.id, self.turn.number, self._summary("interrupted"))
            running = (
                "\n\n" + recovery.report((), self.turn.number, self.pending).for_people()
                if self.pending
                else ""
            )
            e.display.append(
                self.app.id,
                DisplayRole.ERROR,
                self.state.display()
                + running
                + "\n\n**Interrupted:** the connection closed before the turn ended.",
                status=DisplayStatus.INTERRUPTED,
                turn=self.turn.number,
            )
            self._record("interrupted")
        except Exception as exc:
            # The next turn closes it instead (begin_turn sees the open turn).
            log.error("could not close interrupted turn app=%s: %s", self.app.id, exc)

    async def _work(self, turn: Turn) -> AsyncIterator[TurnEvent]:
        """The model's work, then the preview; a preview that fails is shown to the model,
        which gets ``repair_rounds`` more tries inside the turn (engine/repair.py). The turn
        is closed here: its final answer once the preview stands (or nothing needed
        building), else a note saying what still fails."""
        e = self.engine
        rounds = e.limits.repair_rounds
        work = self._agent if self.app.code_gen_type is CodeGenType.VUE_PROJECT else self._generate
        attempt = 0
        while True:
            self.answer = None
            self.state.unbuilt = False
            async for event in work(turn):
                yield event
            if turn.closed:
                return  # the work closed it (the tool limit)
            if self.state.error is not None:
                await self._close_failed_work(turn, f"[zerocode: {self.state.error}]")
                return
            if not (self.state.unbuilt or attempt):
                self.phase = "saving the answer"
                await _io(e.memory.commit_final, turn, self.answer or "")
                return
            failure = self.failure if not self.state.unbuilt else None
            if self.state.unbuilt:
                async for event in self._build():
                    yield event
                failure = self.failure
            if failure is None:
                self.phase = "saving the answer"
                await _io(e.memory.commit_final, turn, self.answer or "Done.")
                return
            if attempt >= rounds:
                await self._give_up(turn, failure, attempt)
                return
            attempt += 1
            self.state.steps.append(f"↻ repair {attempt}/{rounds}: {failure.summary}")
            yield RepairEvent(attempt, rounds, failure.summary)
            self.phase = "saving the repair request"
            await _io(
                e.memory.commit_feedback,
                turn,
                self.answer,
                repair.repair_message(failure, attempt, rounds),
            )

    async def _give_up(self, turn: Turn, failure: repair.Failure, attempts: int) -> None:
        """The preview still fails and no repair round is left: the turn fails, and the
        model and the user are told what still fails."""
        what = "preview build failed" if failure.kind == "build" else "built page fails"
        after = f" after {attempts} repair round{'s' if attempts != 1 else ''}" if attempts else ""
        self.state.error = f"the {what}{after}: {failure.summary}"
        await self._close_failed_work(
            turn,
            repair.repair_message(failure, attempts + 1, attempts) + "\n(No repair round is left.)",
        )

    async def _close_failed_work(self, turn: Turn, feedback: str) -> None:
        """Close a turn whose work failed: the model's answer (if any) with the platform's
        word on it, then the interrupted note with the reason. Never a final answer that
        reads as if it worked."""
        assert self.state.error is not None
        self.phase = "saving the answer"
        if self.answer:
            await _io(self.engine.memory.commit_feedback, turn, self.answer, feedback)
        await _io(self.engine.memory.mark_interrupted, turn, self.state.error, self._did())

    async def _run_tool(self, toolbox: ToolBox, call: ToolCall) -> ToolOutcome:
        """The call's outcome however it ends: a tool that raises becomes a failed result
        (the step, with the calls that worked, is still committed)."""
        try:
            outcome: ToolOutcome = await _io(toolbox.run, call)
        except Exception as exc:
            log.exception("tool %s raised app=%s", call.name, self.app.id)
            why = f"the tool failed inside the platform ({_kind(exc)}); its effect is unknown"
            if call.name in recovery.CHANGING_TOOLS:
                why += ": read the file before relying on it"
            return ToolOutcome(
                ToolResult.failure(call, why), _call_path(call), why, changed=False, exit=False
            )
        return outcome

    async def _stream(
        self,
        role: ModelRole,
        tools: list[dict[str, Any]],
        extra: Sequence[Message] = (),
    ) -> AsyncIterator[TurnEvent | ModelReply]:
        """One model call over the window (plus ``extra`` messages not in the transcript).
        A model that refuses the window as too long for its context is asked once more
        with a window of half the tokens; a second refusal fails the turn, saying so."""
        self.phase = "asking the model"
        e = self.engine
        budget: int | None = None
        while True:
            window = await _io(e.memory.window, self.app.id, self.system, budget)
            try:
                async for event in e.model.stream(role, (*window.messages, *extra), tools):
                    if isinstance(event, TextDelta):
                        self.state.text.append(event.text)
                        yield TextEvent(event.text)
                        faults.point("mid_stream")
                    elif isinstance(event, ThinkingDelta):
                        yield ThinkingEvent(event.text)  # shown, never kept: not the answer
                    else:
                        if event.usage is not None:
                            self.usage[0] += event.usage.prompt_tokens
                            self.usage[1] += event.usage.completion_tokens
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
            reply: ModelReply | None = None
            async for event in self._stream(role, tools, extra):
                if isinstance(event, ModelReply):
                    reply = event
                else:
                    yield event
            assert reply is not None
            message = reply.message
            if reply.finish_reason != "length" or message.tool_calls:
                if parts:
                    message = replace(message, content="".join(parts) + (message.content or ""))
                    reply = replace(reply, message=message)
                yield reply
                return
            parts.append(message.content or "")
        assert reply is not None  # the loop ran at least once
        yield replace(reply, message=AssistantMessage("".join(parts) or "(no text)"))

    async def _agent(self, turn: Turn) -> AsyncIterator[TurnEvent]:
        e = self.engine
        toolbox = self.toolbox
        for _ in range(e.limits.max_tool_calls + 2):
            reply: ModelReply | None = None
            async for event in self._whole_text(ModelRole.VUE, TOOL_DEFINITIONS):
                if isinstance(event, ModelReply):
                    reply = event
                else:
                    yield event
            assert reply is not None
            message = reply.message
            if not message.tool_calls:
                self.answer = message.content or ""
                if reply.finish_reason == "length":
                    self.state.error = CUT_OFF
                    yield ErrorEvent("cut_off", CUT_OFF)
                return
            outcomes: list[ToolOutcome] = []
            if len(message.tool_calls) > e.limits.max_calls_per_step:
                message, outcomes = _over_limit(message, e.limits.max_calls_per_step)
                for outcome in outcomes:
                    self.state.record(outcome)
                    yield ToolEvent(
                        outcome.result.tool_call_id,
                        outcome.result.name,
                        "result",
                        False,
                        outcome.path,
                        outcome.summary,
                    )
            else:
                self.phase = "running tools"
                self.pending = PendingStep(
                    turn.number,
                    turn.head,
                    tuple(PendingCall(c.name, _call_path(c)) for c in message.tool_calls),
                )
                await _io(e.journal.write, self.app.id, self.pending)
                cut = reply.finish_reason == "length"
                for call in message.tool_calls:
                    yield ToolEvent(call.id, call.name, "call", None, _call_path(call), "")
                    if cut and call.parsed_arguments() is None:
                        outcome = _cut_off_call(call)
                    else:
                        outcome = await self._run_tool(toolbox, call)
                    faults.point("after_tool")
                    outcomes.append(outcome)
                    self.state.record(outcome)
                    yield ToolEvent(
                        call.id,
                        call.name,
                        "result",
                        outcome.result.ok,
                        outcome.path,
                        outcome.summary,
                    )
            self.phase = "saving the step"
            await _io(e.memory.commit_step, turn, message, [o.result for o in outcomes])
            self.pending = None
            faults.point("after_step_commit")
            self.phase = "asking the model"
            if any(o.exit for o in outcomes):
                self.answer = message.content or "Done."
                return
        reason = "the model kept calling tools past the per-turn limit"
        self.state.error = reason
        await _io(e.memory.mark_interrupted, turn, reason, self._did())
        yield ErrorEvent("tool_limit", reason)

    async def _generate(self, turn: Turn) -> AsyncIterator[TurnEvent]:
        e = self.engine
        reply: ModelReply | None = None
        async for event in self._whole_text(ModelRole.CODE, []):
            if isinstance(event, ModelReply):
                reply = event
            else:
                yield event
        assert reply is not None
        text = reply.message.content or ""
        self.answer = text
        if reply.finish_reason == "length":  # still cut off: nothing half-written is saved
            self.state.error = CUT_OFF + "; nothing was saved"
            yield ErrorEvent("cut_off", self.state.error)
            return
        if not codegen.has_code(text):
            return  # a question or an explanation: nothing to save, and that is fine
        parse = (
            codegen.parse_html
            if self.app.code_gen_type is CodeGenType.HTML
            else codegen.parse_multi_file
        )
        self.phase = "saving the generated files"
        try:
            files = parse(text)
            saved = await _io(codegen.save_files, e.workspace, self.app.id, files)
        except ZerocodeError as exc:
            self.state.error = f"the generated code could not be saved: {exc.message}"
            yield ErrorEvent(exc.code, self.state.error)
            return
        self.state.changed = self.state.unbuilt = True
        for path in saved:
            self.state.steps.append(f"✓ saved `{path}`")
            yield ToolEvent(f"save:{path}", "save_file", "result", True, path, f"saved {path}")

    async def _build(self) -> AsyncIterator[TurnEvent]:
        """The preview build (the same Builder a deploy uses; the preview flips on
        success), then the page in a browser when a runtime check is configured. Sets
        ``self.failure`` to what fails, or None."""
        self.phase = "building the preview"
        self.failure = None
        self.state.unbuilt = False
        build_id = new_build_id()
        self.state.builds += 1
        yield BuildEvent("running", build_id)
        build = self.build = await self.engine.preview(self.app, build_id)
        lines = build.log_tail.splitlines()
        tail = "\n".join(lines[-15:])
        if build.state is not BuildState.SUCCEEDED:
            self.state.build_failures += 1
            self.state.steps.append("✗ preview build failed")
            why = build.error or "the build failed"
            yield BuildEvent("failed", build_id, tail, why)
            self.failure = repair.Failure("build", why, repair.relevant(lines))
            return
        self.state.steps.append(f"✓ preview built in {build.seconds or 0:.1f} s")
        yield BuildEvent("succeeded", build_id, tail)
        check = self.engine.runtime_check
        if check is None:
            return
        self.phase = "checking the page in a browser"
        problems = await check.check(self.app, build)
        if problems is None:  # the check could not run (no browser, no slot): say so
            self.state.steps.append("– the page was not checked in a browser")
        elif problems:
            self.state.steps.append("✗ the page fails in the browser: " + problems[0])
            self.failure = repair.Failure(
                "runtime", f"the page fails in the browser: {problems[0]}", tuple(problems)
            )
        else:
            self.state.steps.append("✓ the page loads in a browser without errors")


def close_crashed(e: Engine, app_id: str) -> str | None:
    """Close the turn a dead server left open (M7): the transcript's note (returned, for
    the next write of the transcript) and the display's entry say what it did. A turn
    closed in the transcript but not in the display (the server died during the preview
    build) gets its display entry too. The files it changed become a version."""
    head = e.memory.head(app_id)
    if head.turn == 0:
        return None
    newest = e.display.page(app_id, limit=1).entries
    shown = bool(newest) and newest[0].turn == head.turn and newest[0].role != DisplayRole.USER
    if not head.turn_open and shown:
        return None
    pending = e.journal.read(app_id)
    if pending is not None and (
        pending.turn != head.turn or pending.head != head.seq or pending.restore is not None
    ):
        pending = None  # that step was committed: the transcript has it
    did = recovery.report(e.memory.units(app_id), head.turn, pending)
    if head.turn_open:
        why = "**Interrupted:** the server stopped before this turn finished; it was "
        why += "closed when the next turn began."
    else:
        why = "**Interrupted:** the server stopped after the answer, while building the "
        why += "preview; the preview was not updated."
    e.display.append(
        app_id,
        DisplayRole.ERROR,
        f"{why}\n\n{did.for_people()}",
        status=DisplayStatus.INTERRUPTED,
        turn=head.turn,
    )
    e.journal.clear(app_id)
    record_version(e, app_id, head.turn, f"turn {head.turn} (interrupted: the server stopped)")
    return did.for_model() if head.turn_open else None


def record_version(
    e: Engine, app_id: str, turn: int, summary: str, build: Build | None = None
) -> None:
    """The workspace as a new version, if it differs from the newest one (best effort: a
    version store that fails is logged, never fails the turn)."""
    if e.versions is None:
        return
    with _logged("could not record a version of app=%s", app_id):
        source = snapshot(e.workspace, app_id)
        if not source.files:
            return
        e.versions.record(
            app_id,
            source.files,
            turn=turn,
            summary=summary,
            build_id=built_from(build, source.digest),
        )


CUT_OFF = "the answer was cut off by the output limit"


def _cut_off_call(call: ToolCall) -> ToolOutcome:
    why = (
        "not run: your answer was cut off by the output limit while writing this call, so "
        "its arguments are incomplete; write it again (split a large file into parts)"
    )
    return ToolOutcome(ToolResult.failure(call, why), _call_path(call), why, False, False)


def _over_limit(
    message: AssistantMessage, limit: int
) -> tuple[AssistantMessage, list[ToolOutcome]]:
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
    return slim, [
        ToolOutcome(ToolResult.failure(c, why), _call_path(c), why, changed=False, exit=False)
        for c in kept
    ]


def _kind(exc: BaseException) -> str:
    """An exception named for an error message without its text (which may hold secrets,
    paths or keys): the platform's own errors keep their message."""
    if isinstance(exc, ZerocodeError):
        return exc.message
    return type(exc).__name__


class _logged(contextlib.AbstractContextManager[None]):
    """Log, and swallow, a failure of a best-effort write while a turn ends."""

    def __init__(self, what: str, *args: object) -> None:
        self.what, self.args = what, args

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, Exception):
            log.error(self.what + ": %s", *self.args, _kind(exc))
            return True
        return False


def _call_path(call: ToolCall) -> str | None:
    """The path a call names, as the tool will see it (None if absent or refused)."""
    raw = (call.parsed_arguments() or {}).get("path")
    try:
        return clean_path(raw) if isinstance(raw, str) else None
    except PathRefused:
        return None


async def _io(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Blocking store and file calls run in a worker thread, off the event loop."""
    return await asyncio.to_thread(fn, *args, **kwargs)
