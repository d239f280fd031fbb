"""The turn engine: one user message in, a stream of true events out (docs/invariants.md).

Everything reported is what happened: each tool's real outcome, the build's
real status, and a ``done`` whose status follows from them. However the turn
ends — finished, failed, model error, client gone — the transcript is valid
and the turn is closed (M2, M7), and the app's lease is released.

The work is a loop over steps (engine/turn_steps.py), each ending in one result —
:class:`ToolsRan`, :class:`Answered`, :class:`Failed` or :class:`Built` — that
:class:`TurnWork` (engine/turn_work.py) dispatches on; all the turn's mutable state is one
:class:`TurnState`. Closing a turn that did not finish is engine/closing.py; recording the
version a turn made is engine/version_record.py.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

from zerocode import faults
from zerocode.apps.records import App, CodeGenType
from zerocode.engine import prompts
from zerocode.engine.ask import AskWork, Mode
from zerocode.engine.build_ahead import Ahead, BuildAhead
from zerocode.engine.closing import (
    SERVER_STOPPED,
    close_abandoned,
    close_crashed,
    interrupt,
)
from zerocode.engine.events import DoneEvent, ErrorEvent, TurnEvent
from zerocode.engine.model import ModelError
from zerocode.engine.parts import (
    EngineLimits,
    EngineParts,
    Preview,
    ensure_room,
    io,
    kind,
    logged,
    over_budget,
)
from zerocode.engine.stopped_checks import mark_not_run
from zerocode.engine.suite_step import tell_checks
from zerocode.engine.tools import ToolBox
from zerocode.engine.turn_state import Status, TurnState
from zerocode.engine.turn_steps import RESULTS, TurnSteps
from zerocode.engine.turn_work import TurnWork
from zerocode.engine.usage import BudgetSpent, usage_json
from zerocode.engine.user_edit import finish_interrupted_work
from zerocode.engine.version_record import record_version
from zerocode.errors import Conflict, PayloadTooLarge
from zerocode.memory.display import DisplayRole, DisplayStatus
from zerocode.memory.messages import ImageRef
from zerocode.memory.window import Window
from zerocode.observability import APP_ID, TURN
from zerocode.storage_refusal import refusal

# Names other modules import from here (their homes: parts, closing, version_record).
__all__ = [
    "PROMPT_OF",
    "Engine",
    "EngineLimits",
    "Preview",
    "TurnRun",
    "TurnState",
    "close_crashed",
    "record_version",
]

log = logging.getLogger(__name__)

PROMPT_OF = {
    CodeGenType.HTML: "html",
    CodeGenType.MULTI_FILE: "multi_file",
    CodeGenType.VUE_PROJECT: "vue_project",
}


class Engine(EngineParts):
    def window(self, app: App) -> Window:
        """The model's window for the app's next call, as the model would get it now."""
        return self.memory.window(app.id, prompts.load(PROMPT_OF[app.code_gen_type]))

    def start(
        self,
        app: App,
        message: str,
        element: dict[str, Any] | None,
        images: tuple[ImageRef, ...] = (),
        mode: Mode = "build",
    ) -> TurnRun:
        """Take the app's lease or raise Conflict (409) before anything is streamed. The
        turn's number is known from here on: under the lease no other turn can take it."""
        if self.memory.head(app.id).turn >= self.limits.max_turns:
            raise PayloadTooLarge(
                f"this app has reached {self.limits.max_turns} turns; start a new app to keep going"
            )
        ensure_room(self, "starting a turn")
        spent = over_budget(self, app.owner)  # 429 quota_exceeded: which budget, when it resets
        if spent is not None:
            raise spent
        holder = secrets.token_hex(8)
        if not self.lease.acquire(f"turn:{app.id}", holder, self.limits.lease_seconds):
            raise Conflict("a turn is already running for this app; wait for it to finish")
        try:
            number = self.memory.head(app.id).turn + 1
        except BaseException:
            self.lease.release(f"turn:{app.id}", holder)
            raise
        return TurnRun(self, app, message, element, holder, number, images, mode)


class TurnRun:
    """One turn: its inputs (never changed), its one mutable :class:`TurnState`, and its
    steps."""

    def __init__(
        self,
        engine: Engine,
        app: App,
        message: str,
        element: dict[str, Any] | None,
        holder: str,
        number: int,
        images: tuple[ImageRef, ...] = (),
        mode: Mode = "build",
    ) -> None:
        self.engine, self.app, self.message, self.element = engine, app, message, element
        self.asking = mode == "ask"  # a question: read-only tools, no build (engine/ask.py)
        self.images = images  # kept in the app's ImageStore already (engine/chat_images.py)
        self.holder, self.number = holder, number
        # Whoever drives the turn may keep the lease past its end (engine/turns.py: until
        # the turn's log has its done) and then call release().
        self.release_on_end = True
        self._lease_returned = False
        self.stop_reason: str | None = None
        self.stop_code = "stopped"  # the error a stop is told with (a budget: quota_exceeded)
        self._rebuild_when_stopped = True
        self._task: asyncio.Task[Any] | None = None
        self._working = False
        self.system = prompts.load(PROMPT_OF[app.code_gen_type])
        if self.asking:
            self.system = prompts.asking(self.system)
        self.state = TurnState()
        toolbox = ToolBox(
            engine.workspace,
            app.id,
            max_calls=engine.limits.max_tool_calls,
            checks=engine.checks,
            turn=number,
            read_only=self.asking,
            kind=app.code_gen_type,
        )
        self.steps = TurnSteps(engine, app, self.system, toolbox, self.state)
        stages = engine.preview_stages
        ahead = engine.limits.build_ahead and app.code_gen_type is CodeGenType.VUE_PROJECT
        ahead = ahead and not self.asking
        self.ahead = BuildAhead(stages, engine.workspace, app) if stages and ahead else None

    @property
    def usage(self) -> tuple[int, int]:
        """Model tokens in, out, over the turn's model calls so far (``zerocode eval``)."""
        return self.state.tokens_in, self.state.tokens_out

    def stop(self, reason: str, *, rebuild: bool = True) -> bool:
        """End the turn early, for ``reason``: its work is cancelled where it waits, and the
        turn closes as interrupted, the reason told to the model and the user; the preview is
        rebuilt from files it changed (unless ``rebuild`` is off: the server is stopping).
        Whether the stop was taken (False once the work is over). The task that iterates
        :meth:`events` must await nothing else while the work runs (engine/turns.py), so
        the cancellation lands inside the work."""
        if not self._working or self._task is None or self.stop_reason is not None:
            return False
        self.stop_reason, self._rebuild_when_stopped = reason, rebuild
        self._task.cancel()
        return True

    async def events(self) -> AsyncIterator[TurnEvent]:
        st = self.state
        st.started = time.monotonic()
        APP_ID.set(self.app.id)
        self._task = asyncio.current_task()
        keeper = asyncio.create_task(self._keep_lease())
        released = False
        try:
            error: ErrorEvent | None = None
            stopped = False
            self._working = True
            try:
                async for event in self._run():
                    yield event
            except asyncio.CancelledError:
                if self.stop_reason is None or self._uncancel():
                    raise  # not our stop: the server is going down
                stopped = True
            except BudgetSpent as exc:  # between steps: the last one is whole
                self.stop_reason, self.stop_code, stopped = exc.reason, "quota_exceeded", True
            except (ModelError, TimeoutError) as exc:
                error = self._model_failed(exc)
            except Exception as exc:  # the platform failed (a store, the disk, a bug)
                error = self._platform_failed(exc)
            finally:
                self._working = False
            if stopped:
                async for event in self._stopped():
                    yield event
            else:
                async for event in self._finish(error):
                    yield event
            keeper.cancel()
            if self.release_on_end:
                with logged("could not release the lease of app=%s", self.app.id):
                    await io(self.release)
            released = True
        finally:
            # A stream closed before its end (its consumer went away, or the server is
            # going down) may not await: closing it and releasing the lease are then
            # synchronous, the one place a turn blocks the loop.
            keeper.cancel()
            self._close_abandoned()
            if not released and self.release_on_end:
                with logged("could not release the lease of app=%s", self.app.id):
                    self.release()

    async def _finish(self, error: ErrorEvent | None) -> AsyncIterator[TurnEvent]:
        """The work is over, ``error`` (if any) having ended it: the error told and closed
        in the transcript, the preview rebuilt from changed files, then the turn's end (an
        error recording it is told, once, before the done)."""
        st = self.state
        if error is not None:
            st.error = error.message
            await self._close_failed(error.message)
            yield error
        async for event in self._rebuild():
            yield event
        await self._settle_ahead()
        done = await self._end(st.status())
        if error is None and st.late_error is not None:
            yield st.late_error
        yield done

    def _platform_failed(self, exc: Exception) -> ErrorEvent:
        """The error event of a failure of the platform's own (a store, the disk, a bug)
        while in ``phase``: storage that refused a write is said as such (and a full disk
        gives up its reserve, so the turn's end can still be written); anything else is a
        server error, named without its text."""
        phase = self.state.phase
        refused = refusal(exc)
        if refused is None:
            log.exception("turn failed app=%s while %s", self.app.id, phase)
            message = f"the server failed while {phase} ({kind(exc)})"
            return ErrorEvent("server_error", message, phase=phase, kind="internal")
        log.error(
            "turn of app=%s: storage refused a write (%s) while %s: %s",
            self.app.id,
            refused.kind,
            phase,
            kind(exc),
        )
        if refused.kind in ("disk_full", "quota") and self.engine.reserve is not None:
            self.engine.reserve.release()
        return ErrorEvent(
            "storage_unavailable", refused.message(phase), phase=phase, kind=refused.kind
        )

    def _uncancel(self) -> int:
        """Take back the cancellation :meth:`stop` asked for; the cancellations still
        pending (another one came from outside: the server is stopping)."""
        task = asyncio.current_task()
        return task.uncancel() if task is not None else 0

    async def _stopped(self) -> AsyncIterator[TurnEvent]:
        """The turn was stopped: said at once, the transcript closed with the reason, the
        preview rebuilt from the files it changed, then its display entry and version."""
        e, st, reason = self.engine, self.state, self.stop_reason or SERVER_STOPPED
        yield ErrorEvent(self.stop_code, reason)
        turn = st.turn
        if turn is not None and not turn.closed:
            with logged("could not close stopped turn app=%s", self.app.id):
                await io(interrupt, e, turn, reason, st.pending)
        if self._rebuild_when_stopped:
            async for event in self._rebuild():
                yield event
        else:  # the server is stopping: files its checks never saw are not judged now
            async for event in mark_not_run(e, self.app, st):
                yield event
        await self._settle_ahead()
        if turn is not None:
            with logged("could not record the end of stopped turn app=%s", self.app.id):
                await io(
                    close_abandoned,
                    e,
                    turn,
                    st.pending,
                    shown=st.display,
                    changed=st.changed,
                    summary=self._summary("interrupted"),
                    reason=reason,
                    usage=self.spent(),
                )
        await tell_checks(self.engine, self.app.id, self.state)
        st.finished = True
        self.state.report("interrupted")
        number = turn.number if turn else 0
        yield DoneEvent("interrupted", number, self._tally(), self.spent(), self.mode)

    async def _rebuild(self) -> AsyncIterator[TurnEvent]:
        """A turn that ends without building the files it changed (it failed, or was
        stopped) still rebuilds the preview from them, so the preview (and the element a
        user picks in it) is never older than the files; no repair round follows."""
        if self.state.turn is None or not self.state.unbuilt:
            return
        try:
            async for item in self.steps.build(await self._take_ahead()):
                if not isinstance(item, RESULTS):
                    yield item
        except Exception as exc:  # the preview is then out of date, which the app says
            log.error("could not rebuild the preview of app=%s: %s", self.app.id, kind(exc))

    async def _take_ahead(self) -> Ahead | None:
        return await self.ahead.take() if self.ahead is not None else None

    async def _settle_ahead(self) -> None:
        """Before the turn's end is recorded: a build still ahead is superseded, and every
        superseded build's record says so."""
        if self.ahead is not None:
            with logged("could not settle the builds ahead of app=%s", self.app.id):
                await self.ahead.close()

    def release(self) -> None:
        """Give the app's lease back (the turn is over). A renewal already in its thread
        (a cancelled keeper does not stop it) sees the flag and gives it back too."""
        self._lease_returned = True
        self.engine.lease.release(f"turn:{self.app.id}", self.holder)

    def _renew(self) -> bool:
        """Renew the lease (in a thread); a renewal that lands after :meth:`release` frees
        it again, so a turn that ended never holds its app past its end."""
        key, lease = f"turn:{self.app.id}", self.engine.lease
        if self._lease_returned:
            return True  # over: nothing to renew (and the keeper is being stopped)
        held = lease.acquire(key, self.holder, self.engine.limits.lease_seconds)
        if held and self._lease_returned:
            lease.release(key, self.holder)
        return held

    async def _run(self) -> AsyncIterator[TurnEvent]:
        """Close what a dead server left, save the user's message, then the work, timed."""
        e, app, st = self.engine, self.app, self.state
        if e.preview_stages is not None and not self.asking:  # a Vue build's box, started early
            e.preview_stages.prepare_preview(app)
        st.phase = "closing the previous turn"
        await io(finish_interrupted_work, e, app)
        crashed = await io(close_crashed, e, app.id)
        st.phase = "saving your message"
        faults.point("before_user_commit")
        said = prompts.asked(self.message) if self.asking else self.message
        turn = st.turn = await e.memory.open_turn(
            app.id, said, self.element, self.system, crashed, self.images
        )
        TURN.set(turn.number)
        await io(st.opened, e.usage, app.id, turn.number)  # a summary's request, if any
        if turn.number != self.number:  # the lease makes this impossible; say so if not
            log.error("turn of app=%s numbered %s, expected %s", app.id, turn.number, self.number)
        await io(
            e.display.append,
            app.id,
            DisplayRole.USER,
            self.message,
            turn=turn.number,
            element=self.element,
            images=[shown(i) for i in self.images] or None,
            mode=self.mode,
        )
        faults.point("after_user_commit")
        async with asyncio.timeout(e.limits.turn_timeout):
            work: TurnWork | AskWork = TurnWork(e, app, st, self.steps, self.ahead)
            if self.asking:
                work = AskWork(e, app, st, self.steps)
            async for event in work.run(turn):
                yield event

    def _model_failed(self, exc: ModelError | TimeoutError) -> ErrorEvent:
        if isinstance(exc, ModelError):
            return ErrorEvent("model_error", exc.message)
        limit = self.engine.limits.turn_timeout
        return ErrorEvent("timeout", f"the turn took longer than {limit:.0f} s")

    async def _end(self, status: Status) -> DoneEvent:
        """The turn ended by itself: its version, its display entry (which links to that
        version), its metrics."""
        e, st, made = self.engine, self.state, None
        if st.turn is not None and st.changed:
            st.phase = "recording the version"
            try:
                made = await io(
                    record_version, e, self.app.id, st.turn.number, self._summary(status), st.build
                )
            except Exception as exc:  # the files stand; the turn says it failed to record them
                late = st.late_error = self._platform_failed(exc)
                st.error, status = st.error or late.message, "failed"
        if st.turn is not None:
            with logged("could not record the end of turn app=%s", self.app.id):
                await io(
                    e.display.append,
                    self.app.id,
                    DisplayRole.AI if status == "succeeded" else DisplayRole.ERROR,
                    st.display(made),
                    status=DisplayStatus.OK if status == "succeeded" else DisplayStatus.FAILED,
                    turn=st.turn.number,
                    usage=self.spent(),
                    mode=self.mode,
                )
        await tell_checks(e, self.app.id, st)  # last: a note is a turn of its own
        st.finished = True
        self.state.report(status)
        number = st.turn.number if st.turn else 0
        return DoneEvent(status, number, self._tally(), self.spent(), self.mode)

    @property
    def mode(self) -> str | None:
        """How the turn's entries and ``done`` say it was sent: "ask", or nothing (Build)."""
        return "ask" if self.asking else None

    def _tally(self) -> dict[str, int] | None:
        return None if (run := self.state.suite_run) is None else run.tally.to_json()

    def spent(self) -> dict[str, Any]:
        """What the turn's requests cost so far (``done``'s ``usage``): its tokens, and each
        round's (round 0: before any repair)."""
        return usage_json(self.state.usage, self.state.rounds)

    async def _close_failed(self, reason: str) -> None:
        """Close the turn in the transcript after an error, saying what it did."""
        turn = self.state.turn
        if turn is None or turn.closed:
            return
        with logged("could not close failed turn app=%s", self.app.id):
            st = self.state
            await io(interrupt, self.engine, turn, reason, st.pending, st.saved, st.saving)

    def _close_abandoned(self) -> None:
        """The stream was closed before its end (the server is stopping, or its consumer
        went away): close the turn, synchronously, because a cancelled stream may not await
        anything any more."""
        st = self.state
        if self.ahead is not None:
            self.ahead.drop()  # a build still ahead is stopped (its record may stay running)
        if st.finished or st.turn is None:
            return
        try:
            close_abandoned(
                self.engine,
                st.turn,
                st.pending,
                shown=st.display,
                changed=st.changed,
                summary=self._summary("interrupted"),
                reason=self.stop_reason or SERVER_STOPPED,
                usage=self.spent(),
            )
            self.state.report("interrupted")
        except Exception as exc:
            # The next turn closes it instead (begin_turn sees the open turn).
            log.error("could not close interrupted turn app=%s: %s", self.app.id, exc)

    async def _keep_lease(self) -> None:
        """Renew the app's lease while the turn runs: a server that dies stops renewing, and
        the app is free again ``lease_seconds`` later."""
        e = self.engine
        while True:
            await asyncio.sleep(e.limits.lease_seconds / 3)
            try:
                held = await io(self._renew)
            except Exception as exc:  # a store hiccup: try again at the next renewal
                log.warning("could not renew the turn lease of app=%s: %s", self.app.id, exc)
                continue
            if not held:
                log.error("the turn lease of app=%s was taken over", self.app.id)
                return

    def _summary(self, status: str) -> str:
        """A version's summary: the request, and how the turn ended when it did not work."""
        return self.message if status == "succeeded" else f"{self.message} ({status})"


def shown(image: ImageRef) -> dict[str, Any]:
    """An attached image as the display history keeps it: what it is, never its bytes."""
    return {
        "sha256": image.sha256,
        "type": image.media_type,
        "width": image.width,
        "height": image.height,
        "bytes": image.size,
    }
