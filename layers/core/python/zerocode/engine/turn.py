"""The turn engine: one user message in, a stream of true events out (docs/invariants.md).

Everything reported is what happened: each tool's real outcome, the build's
real status, and a ``done`` whose status follows from them. However the turn
ends — finished, failed, model error, client gone — the transcript is valid
and the turn is closed (M2, M7), and the app's lease is released.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from zerocode.apps.lease import Lease
from zerocode.apps.records import App, CodeGenType
from zerocode.apps.workspace import PathRefused, Workspace, clean_path
from zerocode.engine import codegen, prompts
from zerocode.engine.events import (
    BuildEvent,
    DoneEvent,
    ErrorEvent,
    TextEvent,
    ToolEvent,
    TurnEvent,
)
from zerocode.engine.model import ChatModel, ModelError, ModelReply, ModelRole, TextDelta
from zerocode.engine.tools import TOOL_DEFINITIONS, ToolBox, ToolOutcome
from zerocode.errors import Conflict, PayloadTooLarge, ZerocodeError
from zerocode.memory.display import DisplayHistoryStore, DisplayRole, DisplayStatus
from zerocode.memory.facade import Memory, Turn
from zerocode.memory.messages import ToolCall
from zerocode.observability import APP_ID, TURN, record_turn
from zerocode.publishing.builds import Build, BuildState, new_build_id

# Build the app's current files and, when that works, show them in its preview.
Preview = Callable[[App, str], Awaitable[Build]]

log = logging.getLogger(__name__)

PROMPT_OF = {
    CodeGenType.HTML: "html",
    CodeGenType.MULTI_FILE: "multi_file",
    CodeGenType.VUE_PROJECT: "vue_project",
}
LEASE_SECONDS = 15 * 60  # API Gateway's streaming limit: no turn outlives it


@dataclass(frozen=True)
class EngineLimits:
    max_tool_calls: int = 20
    turn_timeout: float = 14 * 60
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
    error: str | None = None

    def record(self, outcome: ToolOutcome) -> None:
        self.tool_calls += 1
        self.tool_failures += not outcome.result.ok
        mark = "✓" if outcome.result.ok else "✗"
        self.steps.append(f"{mark} `{outcome.result.name}` {outcome.summary}")
        if outcome.changed and outcome.result.ok:
            self.changed = True
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
        limits: EngineLimits = EngineLimits(),
    ) -> None:
        self.memory, self.display, self.workspace = memory, display, workspace
        self.preview, self.model, self.lease = preview, model, lease
        self.limits = limits

    def start(self, app: App, message: str, element: dict[str, Any] | None) -> TurnRun:
        """Take the app's lease or raise Conflict (409) before anything is streamed."""
        if self.memory.head(app.id).turn >= self.limits.max_turns:
            raise PayloadTooLarge(
                f"this app has reached {self.limits.max_turns} turns; start a new app to keep going"
            )
        holder = secrets.token_hex(8)
        if not self.lease.acquire(f"turn:{app.id}", holder, LEASE_SECONDS):
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
        self.finished = False
        self.started = time.monotonic()
        self.usage = [0, 0]  # model tokens in, out, over the turn's model calls

    async def events(self) -> AsyncIterator[TurnEvent]:
        e, app = self.engine, self.app
        status: Literal["succeeded", "failed", "interrupted"] = "failed"
        self.started = time.monotonic()
        APP_ID.set(app.id)
        try:
            self.turn = await e.memory.open_turn(app.id, self.message, self.element, self.system)
            TURN.set(self.turn.number)
            await _io(
                e.display.append,
                app.id,
                DisplayRole.USER,
                self.message,
                turn=self.turn.number,
                element=self.element,
            )
            try:
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
                if not self.turn.closed:
                    await _io(e.memory.mark_interrupted, self.turn, reason)
                yield ErrorEvent(
                    "model_error" if isinstance(exc, ModelError) else "timeout", reason
                )
            await _io(
                e.display.append,
                app.id,
                DisplayRole.AI if status == "succeeded" else DisplayRole.ERROR,
                self.state.display(),
                status=DisplayStatus.OK if status == "succeeded" else DisplayStatus.FAILED,
                turn=self.turn.number,
            )
            self.finished = True
            self._record(status)
            yield DoneEvent(status, self.turn.number)
        finally:
            self._close_abandoned()
            e.lease.release(f"turn:{app.id}", self.holder)

    def _interrupt_latest(self, reason: str) -> None:
        """Close the turn even if a write of ours was still in flight when the stream was
        cancelled (a worker thread finishes it): catch up with the store's head, then close
        the turn only if it is still ours and still open."""
        assert self.turn is not None
        e = self.engine
        try:
            e.memory.mark_interrupted(self.turn, reason)
        except Conflict:
            head = e.memory.head(self.app.id)
            if head.turn != self.turn.number or not head.turn_open:
                return  # closed by that last write, or a newer turn began: nothing to close
            self.turn.head, self.turn.head_uid = head.seq, head.uid
            e.memory.mark_interrupted(self.turn, reason)

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
            e.display.append(
                self.app.id,
                DisplayRole.ERROR,
                self.state.display()
                + "\n\n**Interrupted:** the connection closed before the turn ended.",
                status=DisplayStatus.INTERRUPTED,
                turn=self.turn.number,
            )
            self._record("interrupted")
        except (ZerocodeError, OSError) as exc:
            # The next turn closes it instead (begin_turn sees the open turn).
            log.error("could not close interrupted turn app=%s: %s", self.app.id, exc)

    async def _work(self, turn: Turn) -> AsyncIterator[TurnEvent]:
        work = self._agent if self.app.code_gen_type is CodeGenType.VUE_PROJECT else self._generate
        async for event in work(turn):
            yield event
        if self.state.changed and not self.state.error:
            async for event in self._build():
                yield event

    async def _stream(
        self, role: ModelRole, tools: list[dict[str, Any]]
    ) -> AsyncIterator[TurnEvent | ModelReply]:
        window = await _io(self.engine.memory.window, self.app.id, self.system)
        async for event in self.engine.model.stream(role, window.messages, tools):
            if isinstance(event, TextDelta):
                self.state.text.append(event.text)
                yield TextEvent(event.text)
            else:
                if event.usage is not None:
                    self.usage[0] += event.usage.prompt_tokens
                    self.usage[1] += event.usage.completion_tokens
                yield event

    async def _agent(self, turn: Turn) -> AsyncIterator[TurnEvent]:
        e = self.engine
        toolbox = ToolBox(e.workspace, self.app.id, max_calls=e.limits.max_tool_calls)
        for _ in range(e.limits.max_tool_calls + 2):
            reply: ModelReply | None = None
            async for event in self._stream(ModelRole.VUE, TOOL_DEFINITIONS):
                if isinstance(event, ModelReply):
                    reply = event
                else:
                    yield event
            assert reply is not None
            message = reply.message
            if not message.tool_calls:
                await _io(e.memory.commit_final, turn, message.content or "")
                return
            outcomes = []
            for call in message.tool_calls:
                yield ToolEvent(call.id, call.name, "call", None, _call_path(call), "")
                outcome = await _io(toolbox.run, call)
                outcomes.append(outcome)
                self.state.record(outcome)
                yield ToolEvent(
                    call.id, call.name, "result", outcome.result.ok, outcome.path, outcome.summary
                )
            await _io(e.memory.commit_step, turn, message, [o.result for o in outcomes])
            if any(o.exit for o in outcomes):
                await _io(e.memory.commit_final, turn, message.content or "Done.")
                return
        reason = "the model kept calling tools past the per-turn limit"
        self.state.error = reason
        await _io(e.memory.mark_interrupted, turn, reason)
        yield ErrorEvent("tool_limit", reason)

    async def _generate(self, turn: Turn) -> AsyncIterator[TurnEvent]:
        e = self.engine
        reply: ModelReply | None = None
        async for event in self._stream(ModelRole.CODE, []):
            if isinstance(event, ModelReply):
                reply = event
            else:
                yield event
        assert reply is not None
        text = reply.message.content or ""
        await _io(e.memory.commit_final, turn, text)
        if not codegen.has_code(text):
            return  # a question or an explanation: nothing to save, and that is fine
        parse = (
            codegen.parse_html
            if self.app.code_gen_type is CodeGenType.HTML
            else codegen.parse_multi_file
        )
        try:
            files = parse(text)
            saved = await _io(codegen.save_files, e.workspace, self.app.id, files)
        except ZerocodeError as exc:
            self.state.error = f"the generated code could not be saved: {exc.message}"
            yield ErrorEvent(exc.code, self.state.error)
            return
        self.state.changed = True
        for path in saved:
            self.state.steps.append(f"✓ saved `{path}`")
            yield ToolEvent(f"save:{path}", "save_file", "result", True, path, f"saved {path}")

    async def _build(self) -> AsyncIterator[TurnEvent]:
        """The preview build: the same Builder a deploy uses; the preview flips on success."""
        build_id = new_build_id()
        self.state.builds += 1
        yield BuildEvent("running", build_id)
        build = await self.engine.preview(self.app, build_id)
        tail = "\n".join(build.log_tail.splitlines()[-15:])
        if build.state is BuildState.SUCCEEDED:
            self.state.steps.append(f"✓ preview built in {build.seconds or 0:.1f} s")
            yield BuildEvent("succeeded", build_id, tail)
        else:
            self.state.error = f"the preview build failed: {build.error or 'see the log'}"
            self.state.build_failures += 1
            self.state.steps.append("✗ preview build failed")
            yield BuildEvent("failed", build_id, tail, build.error or "the build failed")


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
