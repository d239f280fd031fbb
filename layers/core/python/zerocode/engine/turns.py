"""Turns that outlive the connection: each accepted turn runs in a task of its own, to its
end, whatever happens to the request that started it (docs/engine.md, "Turns outlive the
connection").

A :class:`Running` turn keeps its events in memory for readers in this process (the
request that started it among them: no store between the model and the screen) and a
writer task appends them, in order, to the :class:`~zerocode.engine.turn_log.TurnLog` for
every other reader (a reattach after a reload, another Lambda container): all it has
queued in one append, letting events gather for up to WRITE_LINGER first, so a store's
round trip is paid per batch, not per event, and a writer behind under load catches up
instead of falling further behind. The turn's
``done`` reaches readers only once everything else is settled: the log holds it and the
app's lease is free, so a client that sees ``done`` can start the next turn at once.

A log whose turn can no longer end (its process died) is closed by whoever finds it so,
with the ``done`` the app's display says the turn came to (interrupted when it says
nothing). Alive means running in this process, or, where the log is shared between
processes, that the app's turn lease is held.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from zerocode.apps.records import App
from zerocode.engine.ask import Mode
from zerocode.engine.closing import SERVER_STOPPED, STOPPED_BY_USER
from zerocode.engine.events import DoneEvent, TurnEvent
from zerocode.engine.parts import io, kind
from zerocode.engine.turn import Engine, TurnRun
from zerocode.engine.turn_log import Entries, Following, Logged, TurnLog, logged
from zerocode.engine.turn_state import Status
from zerocode.errors import Conflict, NotFound, Unavailable
from zerocode.memory.display import DisplayRole, DisplayStatus
from zerocode.memory.messages import ImageRef

log = logging.getLogger(__name__)

STARTING_POLL_SECONDS = 0.25  # a reader's wait for the first event of a turn run elsewhere
WRITE_BATCH = 256  # at most this many events in one append (a bounded request to the store)
# How long the writer lets events gather before an append: a round trip to the store per
# few events, not per event (a turn streams one every few ms). Only a reader elsewhere waits
# for the log (one here reads memory), and a turn's end does not wait for it.
WRITE_LINGER = 0.05


class ServerStopping(Unavailable):
    """A turn asked for while the server is stopping (503): nothing was started."""

    code = "server_stopping"


@dataclass(frozen=True)
class Current:
    """The turn running for an app, and the id of its newest event ("" before the first)."""

    turn: int
    last_event_id: str


@dataclass(eq=False)
class Running:
    """One turn running in this process: its events as they happen, for readers here."""

    app_id: str
    run: TurnRun
    log: Entries = field(default_factory=Entries)
    # What the writer has yet to append to the TurnLog; None: nothing more will come.
    unwritten: asyncio.Queue[Logged | None] = field(default_factory=asyncio.Queue)
    ended: asyncio.Event = field(default_factory=asyncio.Event)  # the driver has finished
    # The turn's events are all queued (its done is to come): the writer lingers no more.
    queued: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def turn(self) -> int:
        return self.run.number

    @property
    def last_event_id(self) -> str:
        return self.log.items[-1].id if self.log.items else ""

    def add(self, event: TurnEvent) -> None:
        """The event for readers here, and for the writer (never waits)."""
        entry = logged(self.turn, len(self.log.items) + 1, event)
        self.log.add(entry)
        if not entry.done:  # the done is written by the driver, once the rest is
            self.unwritten.put_nowait(entry)

    def next_entry(self, event: TurnEvent) -> Logged:
        """``event`` numbered as the next entry (not added)."""
        return logged(self.turn, len(self.log.items) + 1, event)

    def follow(self, after: int = 0) -> Following:
        return self.log.follow(after)


class Turns:
    """Starts turns, runs them to their end, and lets anyone allowed read, follow and stop
    them. ``shared``: the log is shared with other processes (AWS), which may run the
    app's turn; locally one process owns the data, so a turn not running here is not
    running at all."""

    def __init__(
        self,
        engine: Engine,
        turn_log: TurnLog,
        *,
        shared: bool,
        watch_seconds: float = 1.0,
        write_attempts: int = 3,
        write_linger: float = WRITE_LINGER,
    ) -> None:
        self.engine, self.log, self.shared = engine, turn_log, shared
        self.watch_seconds, self.write_attempts = watch_seconds, write_attempts
        self.write_linger = write_linger
        self._running: dict[str, Running] = {}
        self._drivers: set[asyncio.Task[None]] = set()
        self.stopping = False  # the server is stopping: no new turn starts (drain)

    # -- starting and driving ---------------------------------------------------------------

    async def start(
        self,
        app: App,
        message: str,
        element: dict[str, Any] | None,
        images: tuple[ImageRef, ...] = (),
        mode: Mode = "build",
    ) -> Running:
        """Take the app's lease (409 when a turn runs) and start the turn in a task of its
        own; the caller follows it with :meth:`Running.follow` (or not at all). ``mode``
        "ask": a question, answered with read-only tools (engine/ask.py)."""
        self.refuse_if_stopping()
        start = functools.partial(self.engine.start, mode=mode)
        run = await asyncio.to_thread(start, app, message, element, images)
        run.release_on_end = False  # released once the log has the done (_drive)
        try:
            await self.log.begin(app.id, run.number)
            if run.number > 1:  # the turn before, if its log was left open, is over
                await self._close_if_dead(app.id, run.number - 1, dead=True)
        except BaseException:
            await io(run.release)
            raise
        running = self._running[app.id] = Running(app.id, run)
        task = asyncio.create_task(self._drive(running), name=f"turn {app.id}:{run.number}")
        self._drivers.add(task)
        task.add_done_callback(self._drivers.discard)
        return running

    async def _drive(self, running: Running) -> None:
        """Run the turn to its end. While it runs this task awaits nothing but the turn, so
        a stop (TurnRun.stop) lands inside its work; the writer and the stop watcher are
        tasks of their own. The done is kept back until everything is settled: the log has
        every event and the done, and the app's lease is free; then readers get it."""
        writer = asyncio.create_task(self._write(running))
        watcher = asyncio.create_task(self._watch(running)) if self.shared else None
        done: DoneEvent | None = None
        try:
            async for event in running.run.events():
                if isinstance(event, DoneEvent):
                    done = event
                else:
                    running.add(event)
        finally:
            if watcher is not None:
                watcher.cancel()
            if done is None:  # the turn was torn down (the server is stopping)
                done = DoneEvent("interrupted", running.turn, None, running.run.spent())
            running.unwritten.put_nowait(None)
            running.queued.set()
            try:
                if await asyncio.shield(writer):
                    await self._append(running, [running.next_entry(done)])
            except Exception as exc:  # the log is left for a reader to close
                log.error("could not keep the log of app=%s: %s", running.app_id, kind(exc))
            try:
                await io(running.run.release)
            except Exception as exc:
                log.error("could not free the lease of app=%s: %s", running.app_id, kind(exc))
            if self._running.get(running.app_id) is running:
                del self._running[running.app_id]
            running.add(done)
            running.ended.set()

    async def _write(self, running: Running) -> bool:
        """Append the turn's events to the log, in order, each as the number it has here:
        whatever has queued meanwhile in one append (the store checks the numbers follow
        on); whether all were. A store that keeps failing stops the writing (a reader
        elsewhere then finds a log whose turn is over and closes it with what the display
        says)."""
        queue, last = running.unwritten, False
        while not last:
            batch = [await queue.get()]
            if batch[0] is not None and not running.queued.is_set() and self.write_linger > 0:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.write_linger):
                        await running.queued.wait()  # the rest gathers meanwhile
            while not queue.empty() and len(batch) < WRITE_BATCH:
                batch.append(queue.get_nowait())
            last = batch[-1] is None
            entries = [entry for entry in batch if entry is not None]
            try:
                if entries:
                    await self._append(running, entries)
            except Exception as exc:
                log.error("could not keep the log of app=%s: %s", running.app_id, kind(exc))
                return False
        return True

    async def _append(self, running: Running, entries: list[Logged]) -> None:
        for attempt in range(self.write_attempts):
            try:
                return await self.log.append_many(running.app_id, running.turn, entries)
            except Exception as exc:
                if attempt + 1 == self.write_attempts:
                    raise
                log.warning("turn log append failed (%s); retrying", kind(exc))
                await asyncio.sleep(0.2 * 2**attempt)
        raise AssertionError("unreachable")

    async def _watch(self, running: Running) -> None:
        """Where a stop may be asked in another process: poll for it."""
        while True:
            await asyncio.sleep(self.watch_seconds)
            try:
                if await self.log.stop_requested(running.app_id, running.turn):
                    running.run.stop(STOPPED_BY_USER)
                    return
            except Exception as exc:  # a store hiccup: ask again next time
                log.warning("could not read the stop request of a turn: %s", kind(exc))

    # -- reading ------------------------------------------------------------------------------

    def _here(self, app_id: str, turn: int) -> Running | None:
        """The turn, when it runs in this process."""
        running = self._running.get(app_id)
        return running if running is not None and running.turn == turn else None

    async def current(self, app_id: str) -> Current | None:
        """The turn running for the app, here or (shared) in another process."""
        running = self._running.get(app_id)
        if running is not None:
            return Current(running.turn, running.last_event_id)
        if not self.shared or not await io(self.engine.lease.held, f"turn:{app_id}"):
            return None
        head = await io(self.engine.memory.head, app_id)
        for number in (head.turn + 1, head.turn):
            last = await self.log.last(app_id, number) if number > 0 else None
            if last is not None and not last.done:
                return Current(number, last.id)
        if head.turn_open and await self.log.last(app_id, head.turn) is None:
            return Current(head.turn, "")  # its message is saved, its first event to come
        return None

    async def exists(self, app_id: str, turn: int) -> None:
        """NotFound unless the app has (or is starting) a turn of that number."""
        if turn < 1:
            raise NotFound(f"turn {turn} not found")
        if self._here(app_id, turn) is not None:
            return
        if turn <= (await io(self.engine.memory.head, app_id)).turn:
            return
        if await self.log.last(app_id, turn) is None:
            raise NotFound(f"turn {turn} not found")

    async def follow(self, app_id: str, turn: int, after: int = 0) -> AsyncIterator[Logged]:
        """The turn's events after ``after``, then live until its ``done``: from memory when
        it runs here, else from the log. A turn whose log is gone (expired, or its server
        restarted) gets the one ``done`` its display entry says (call :meth:`exists`
        first: an unknown turn is 404)."""
        running = self._here(app_id, turn)
        if running is not None:
            async for entry in running.follow(after):
                yield entry
            return
        if not await self._logged(app_id, turn):
            status, usage = await self._ended_as(app_id, turn)
            yield logged(turn, max(after, 0) + 1, DoneEvent(status, turn, None, usage))
            return
        watchdog = asyncio.create_task(self._watchdog(app_id, turn))
        try:
            async for entry in self.log.follow(app_id, turn, after):
                yield entry
        finally:
            watchdog.cancel()

    async def _logged(self, app_id: str, turn: int) -> bool:
        """Whether the turn has a log, waiting for its first event while it runs in another
        process and has logged nothing yet (its message is saved; the model has yet to
        answer, which may take seconds): such a turn is not over."""
        while await self.log.last(app_id, turn) is None:
            if not await self._starting(app_id, turn):
                return await self.log.last(app_id, turn) is not None  # it may have just begun
            await asyncio.sleep(STARTING_POLL_SECONDS)
        return True

    async def _starting(self, app_id: str, turn: int) -> bool:
        """The turn is the app's open one and the app's lease is held (shared logs only)."""
        if not self.shared:
            return False
        head = await io(self.engine.memory.head, app_id)
        if head.turn != turn or not head.turn_open:
            return False
        return bool(await io(self.engine.lease.held, f"turn:{app_id}"))

    async def _watchdog(self, app_id: str, turn: int) -> None:
        """While someone follows a turn that does not run here: close its log if its turn
        can no longer end, so the follower gets a done."""
        pause = min(self.engine.limits.lease_seconds / 3, 10.0) if self.shared else 1.0
        while True:  # a store to poll: no event to wait on
            if await self._close_if_dead(app_id, turn):
                return
            await asyncio.sleep(pause)

    async def _alive(self, app_id: str, turn: int) -> bool:
        if self._here(app_id, turn) is not None:
            return True
        return self.shared and await io(self.engine.lease.held, f"turn:{app_id}")

    async def _close_if_dead(self, app_id: str, turn: int, *, dead: bool = False) -> bool:
        """Give the log of a turn that can no longer end its done; whether the log is (now)
        closed. ``dead``: the caller knows (it holds the app's lease for a newer turn)."""
        last = await self.log.last(app_id, turn)
        if last is None or last.done:
            return True
        if not dead and await self._alive(app_id, turn):
            return False
        status, usage = await self._ended_as(app_id, turn)
        with contextlib.suppress(ValueError):  # its done came meanwhile
            await self.log.append(app_id, turn, DoneEvent(status, turn, None, usage))
        return True

    async def _ended_as(self, app_id: str, turn: int) -> tuple[Status, dict[str, Any] | None]:
        """How a turn that runs nowhere ended, and what its requests cost, as the app's
        display tells it."""
        page = await io(self.engine.display.page, app_id, None, 50)
        for entry in page.entries:
            if entry.turn == turn and entry.role in (DisplayRole.AI, DisplayRole.ERROR):
                if entry.role == DisplayRole.AI:
                    return "succeeded", entry.usage
                failed = entry.status == DisplayStatus.FAILED
                return ("failed" if failed else "interrupted"), entry.usage
        return "interrupted", None

    # -- stopping -----------------------------------------------------------------------------

    async def cancel(self, app_id: str, turn: int) -> None:
        """Stop the app's running turn ``turn`` (Conflict when it is not running)."""
        running = self._here(app_id, turn)
        if running is not None:
            running.run.stop(STOPPED_BY_USER)
            return
        current = await self.current(app_id)
        if current is None or current.turn != turn:
            raise Conflict(f"turn {turn} is not running")
        await self.log.request_stop(app_id, turn)

    def running_here(self) -> int:
        """How many turns run in this process now."""
        return len(self._running)

    def refuse_if_stopping(self) -> None:
        """ServerStopping (503, said in words) once the server has begun to stop."""
        if self.stopping:
            raise ServerStopping(
                "the server is stopping: no new turn starts now; send again once it is back"
            )

    async def drain(self, bound: float, cut: asyncio.Event | None = None) -> bool:
        """The server is stopping: no new turn starts, the running ones go on to their end
        (their checks included, the preview and the browser still up) for up to ``bound``
        seconds or until ``cut`` is set (a second Ctrl-C); then the rest are stopped
        (:meth:`shutdown`). Whether every turn ended by itself."""
        self.stopping = True
        if self._drivers:
            waits: set[asyncio.Future[Any]] = set(self._drivers)
            cutter = asyncio.ensure_future(cut.wait()) if cut is not None else None
            if cutter is not None:
                waits.add(cutter)
            try:
                async with asyncio.timeout(bound):
                    while self._drivers and not (cut is not None and cut.is_set()):
                        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
                        waits = {w for w in waits if not w.done()} | set(self._drivers)
            except TimeoutError:
                pass
            finally:
                if cutter is not None:
                    cutter.cancel()
        ended = not self._drivers
        await self.shutdown()
        return ended

    async def shutdown(self, grace: float = 10.0) -> None:
        """The server is stopping: stop the turns running here (no rebuild) and give them
        ``grace`` seconds to close."""
        for running in list(self._running.values()):
            running.run.stop(SERVER_STOPPED, rebuild=False)
        if self._drivers:
            await asyncio.wait(set(self._drivers), timeout=grace)
