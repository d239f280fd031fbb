"""Fair shares of the kept browser's contexts (issue 37, point 3): a queue with a share per
tenant, so one user's (or one app's) slow checks cannot starve another's.

The browser has :data:`.browser_pool.PAGES` contexts. While one is free and nobody waits, a
request gets one at once. Otherwise it waits, and each context that frees goes to the waiter
whose *user* holds the fewest contexts, then whose *app* holds the fewest, then the oldest:
a tenant holding more than its share waits behind those holding less. No user holds more
than ``user_most`` at once (the pool gives ``capacity - 1``: one is left for someone else).
Every context is held for a bounded time (:data:`.browser_pool.HOLD_SECONDS`), so a user
holding none, among the first ``capacity`` such waiters, gets one within that bound. A wait
is bounded too (:class:`FairQueue`'s ``wait``): past it the caller hears :class:`BrowserBusy`
and says "not checked: the checking browser was busy" (docs/security.md).

:class:`Shares` is the policy alone (no I/O, no clock: deterministic, unit-tested);
:class:`FairQueue` waits on it in an event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

BUSY = "not checked: the checking browser was busy"


class BrowserBusy(RuntimeError):
    """No context of the checking browser came within the wait's bound."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"{BUSY} (no context within {seconds:g} s)")


@dataclass(frozen=True)
class Tenant:
    """Whose check it is: the app's owner and the app (covers of the platform: its own)."""

    user: str
    app: str


PLATFORM = Tenant("(platform)", "(platform)")


@dataclass(eq=False)
class Ticket:
    """One request for a context: granted once the policy gives it one."""

    tenant: Tenant
    seq: int
    granted: bool = False
    done: bool = False  # released, or withdrawn while waiting
    passed: bool = False  # passed on with its context: FairQueue.give_back releases it


@dataclass
class Shares:
    """The policy: who gets the next context (see the module)."""

    capacity: int
    user_most: int
    waiting: list[Ticket] = field(default_factory=list)
    by_user: Counter[str] = field(default_factory=Counter)
    by_app: Counter[Tenant] = field(default_factory=Counter)
    _seq: itertools.count[int] = field(default_factory=itertools.count)

    def __post_init__(self) -> None:
        if self.capacity < 1 or self.user_most < 1:
            raise ValueError("a browser needs at least one context, and a user one of them")

    @property
    def held(self) -> int:
        return sum(self.by_user.values())

    def ask(self, tenant: Tenant) -> tuple[Ticket, list[Ticket]]:
        """A request; the tickets granted by it (itself, when a context is free for it)."""
        ticket = Ticket(tenant, next(self._seq))
        self.waiting.append(ticket)
        return ticket, self._grant()

    def release(self, ticket: Ticket) -> list[Ticket]:
        """A granted context given back, or a waiting request withdrawn; the tickets this
        lets in."""
        if ticket.done:
            return []
        ticket.done = True
        if ticket.granted:
            self.by_user[ticket.tenant.user] -= 1
            self.by_app[ticket.tenant] -= 1
        else:
            self.waiting.remove(ticket)
        return self._grant()

    def _grant(self) -> list[Ticket]:
        granted = []
        while self.held < self.capacity:
            able = [t for t in self.waiting if self.by_user[t.tenant.user] < self.user_most]
            if not able:
                break
            best = min(
                able, key=lambda t: (self.by_user[t.tenant.user], self.by_app[t.tenant], t.seq)
            )
            self.waiting.remove(best)
            best.granted = True
            self.by_user[best.tenant.user] += 1
            self.by_app[best.tenant] += 1
            granted.append(best)
        return granted


class FairQueue:
    """:class:`Shares` in one event loop: a wait for a context, bounded."""

    def __init__(self, capacity: int, user_most: int) -> None:
        self.shares = Shares(capacity, user_most)
        self._futures: dict[int, asyncio.Future[None]] = {}

    def _wake(self, granted: list[Ticket]) -> None:
        for ticket in granted:
            future = self._futures.pop(id(ticket), None)
            if future is not None and not future.done():
                future.set_result(None)

    @contextlib.asynccontextmanager
    async def turn(self, tenant: Tenant, wait: float) -> AsyncIterator[Ticket]:
        """Hold one context for ``tenant`` while inside; :class:`BrowserBusy` when none came
        within ``wait`` seconds. A ticket marked ``passed`` inside is kept held on leaving:
        whoever it was passed to gives it back (:meth:`give_back`), so the tenant's count
        never drops while its context is still in use."""
        ticket, granted = self.shares.ask(tenant)
        if not ticket.granted:
            future = self._futures[id(ticket)] = asyncio.get_running_loop().create_future()
        self._wake(granted)
        try:
            if not ticket.granted:
                try:
                    await asyncio.wait_for(asyncio.shield(future), wait)
                except TimeoutError:
                    if not ticket.granted:
                        raise BrowserBusy(wait) from None
            yield ticket
        finally:
            self._futures.pop(id(ticket), None)
            if not (ticket.passed and ticket.granted):
                self._wake(self.shares.release(ticket))

    def give_back(self, ticket: Ticket) -> None:
        """A passed ticket released by the check it was passed to."""
        self._wake(self.shares.release(ticket))
