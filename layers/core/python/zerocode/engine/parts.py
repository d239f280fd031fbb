"""What a turn, a restore and the closing of a dead turn are made of: the engine's parts
and limits, and the small helpers they share (a typed worker-thread call, an exception
named without its text, a best-effort write that logs its failure).

It imports nothing else of the engine's, so :mod:`turn`, :mod:`restore`, :mod:`closing`
and :mod:`version_record` all build on it without importing each other in a circle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import ParamSpec, Protocol, TypeVar

from zerocode.accounts.usage import Budgets, Price, QuotaExceeded, UsageLedger
from zerocode.apps.lease import Lease
from zerocode.apps.records import App
from zerocode.apps.versions import Versions
from zerocode.apps.workspace import Workspace
from zerocode.engine.build_ahead import PreviewStages
from zerocode.engine.check_suite import AcceptanceRunner, CheckStore
from zerocode.engine.journal import StepJournal
from zerocode.engine.model import ChatModel
from zerocode.engine.runtime_check import RuntimeCheck
from zerocode.errors import Conflict, ZerocodeError
from zerocode.memory.display import DisplayHistoryStore
from zerocode.memory.facade import Memory
from zerocode.memory.images import ImageStore
from zerocode.publishing.builds import Build
from zerocode.storage_refusal import Refusal

# Build the app's current files and, when that works, show them in its preview.
Preview = Callable[[App, str], Awaitable[Build]]

P = ParamSpec("P")
T = TypeVar("T")

log = logging.getLogger("zerocode.engine.turn")


class SpaceReserve(Protocol):
    """Disk space kept back so a turn can record its own end (adapters/local/disk_reserve.py;
    None where the stores cannot fill up)."""

    def ready(self) -> bool:
        """Whether a turn may start: the reserve is in place, with room beside it."""

    def release(self) -> bool:
        """The disk is full: free the reserve for the writes that tell what happened."""


@dataclass(frozen=True)
class EngineLimits:
    max_tool_calls: int = 20
    max_calls_per_step: int = 32  # one step and its results are one transcript write
    turn_timeout: float = 14 * 60
    lease_seconds: float = 30  # renewed every third of it while the turn runs
    repair_rounds: int = 2  # tries the model gets to fix a failing preview in the turn
    max_turns: int = 1000  # per app: past it the history is full (413)
    # A Vue turn's preview build starts as soon as a tool step changed files, beside the
    # model's next call (engine/build_ahead.py); needs ``preview_stages``.
    build_ahead: bool = True


class EngineParts:
    """The stores, the model and the limits a turn or a restore works with (the
    :class:`zerocode.engine.turn.Engine` is these plus starting a turn)."""

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
        checks: CheckStore | None = None,
        acceptance: AcceptanceRunner | None = None,
        preview_stages: PreviewStages | None = None,
        reserve: SpaceReserve | None = None,
        images: ImageStore | None = None,
        usage: UsageLedger | None = None,
        budgets: Budgets | None = None,
        prices: Mapping[str, Price] | None = None,
    ) -> None:
        self.runtime_check, self.versions = runtime_check, versions
        # The app's acceptance checks and what runs them (None: no checks are kept; a store
        # without a runner keeps them and reports them not run).
        self.checks, self.acceptance = checks, acceptance
        self.memory, self.display, self.workspace = memory, display, workspace
        self.preview, self.model, self.lease = preview, model, lease
        self.journal, self.limits = journal, limits
        # The preview build in two stages, for builds started ahead (EngineLimits.build_ahead)
        # and boxes prepared ahead (None: neither).
        self.preview_stages = preview_stages
        self.reserve = reserve
        # The images users attach to their messages (None: messages carry none).
        self.images = images
        # Where each model request's tokens are kept (None: only the turn's own count), and
        # the accounts' token budgets held against it (None: no limit).
        self.usage, self.budgets = usage, budgets
        # What each model costs per million tokens, by model name (none: no cost claimed).
        self.prices: Mapping[str, Price] = prices or {}


async def io(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """Blocking store and file calls run in a worker thread, off the event loop."""
    return await asyncio.to_thread(fn, *args, **kwargs)


def kind(exc: BaseException) -> str:
    """An exception named for an error message without its text (which may hold secrets,
    paths or keys): the platform's own errors keep their message."""
    if isinstance(exc, ZerocodeError):
        return exc.message
    return type(exc).__name__


def ensure_room(engine: EngineParts, doing: str) -> None:
    """Work that changes an app (a turn, an edit, a restore) starts only while the disk's
    reserve is in place, so it can always record how it ended (503 otherwise)."""
    if engine.reserve is not None and not engine.reserve.ready():
        raise Refusal("disk_full").error(doing)


@contextlib.asynccontextmanager
async def app_lease(engine: EngineParts, app_id: str, busy: str) -> AsyncIterator[None]:
    """Hold the app's turn lease for work that must not run beside a turn (a restore, a
    rebuild, an edit); Conflict (409) saying ``busy`` when someone holds it, 503 when its
    end could not be recorded (:func:`ensure_room`)."""
    await io(ensure_room, engine, "saving a change")
    holder, key = secrets.token_hex(8), f"turn:{app_id}"
    if not await io(engine.lease.acquire, key, holder, engine.limits.lease_seconds):
        raise Conflict(busy)
    try:
        yield
    finally:
        await io(engine.lease.release, key, holder)


class logged(contextlib.AbstractContextManager[None]):
    """Log, and swallow, a failure of a best-effort write while a turn ends."""

    def __init__(self, what: str, *args: object) -> None:
        self.what, self.args = what, args

    def __exit__(self, kind_: object, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, Exception):
            log.error(self.what + ": %s", *self.args, kind(exc))
            return True
        return False


def over_budget(e: EngineParts, account: str) -> QuotaExceeded | None:
    """The token budget ``account`` has spent (issue 43), or None: it may go on (or no
    budget is set, or no ledger keeps what was spent)."""
    if e.budgets is None or e.usage is None:
        return None
    return e.budgets.over(e.usage, account, time.time())
