"""Build slots shared fairly between users and apps.

Nothing bounded how many builds one user ran at once: their builds could take every uid of
the pool and all the memory of the builds' cgroup while another user's build waited until
its deadline. Now a build takes a slot first: at most ``slots`` builds run at once on this
server (``ZEROCODE_BUILD_SLOTS``; by default sized from the machine, ``build_slice.slots``)
and at most ``per_user`` of one user (``ZEROCODE_BUILD_PER_USER``, 2). When slots free up,
the waiting build of the user with the fewest builds running goes first (then of the app
with the fewest, then the longest waiting), so one user's many builds never starve another's
one. A build waits ``wait`` seconds at most (``ZEROCODE_BUILD_QUEUE_SECONDS``), then fails
saying why: never a silent skip.

The builds of one builder run on one event loop (the server's).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field


class NoBuildSlot(Exception):
    """The build waited its bound for a slot: it fails with this message."""


@dataclass
class Ticket:
    """One build waiting for a slot."""

    user: str
    app: str
    seq: int
    granted: asyncio.Future[None] | None = field(default=None, repr=False)


def pick(
    waiting: list[Ticket], by_user: Counter[str], by_app: Counter[str], per_user: int
) -> Ticket | None:
    """Whose build goes next: among users under their cap, the one with the fewest builds
    running, then the app with the fewest, then the one waiting longest."""
    allowed = [t for t in waiting if by_user[t.user] < per_user]
    if not allowed:
        return None
    return min(allowed, key=lambda t: (by_user[t.user], by_app[t.app], t.seq))


class BuildShares:
    def __init__(self, slots: int, per_user: int, wait: float) -> None:
        self.slots, self.per_user, self.wait = max(1, slots), max(1, per_user), wait
        self.by_user: Counter[str] = Counter()
        self.by_app: Counter[str] = Counter()
        self.waiting: list[Ticket] = []
        self._seq = itertools.count()

    @property
    def running(self) -> int:
        return sum(self.by_user.values())

    def describe(self) -> str:
        return f"{self.slots} build slot(s), at most {self.per_user} per user"

    def _grant(self) -> None:
        while self.running < self.slots:
            ticket = pick(self.waiting, self.by_user, self.by_app, self.per_user)
            if ticket is None:
                return
            self.waiting.remove(ticket)
            self._take(ticket)
            if ticket.granted is not None and not ticket.granted.done():
                ticket.granted.set_result(None)

    def _take(self, ticket: Ticket) -> None:
        self.by_user[ticket.user] += 1
        self.by_app[ticket.app] += 1

    def _give_back(self, ticket: Ticket) -> None:
        self.by_user[ticket.user] -= 1
        self.by_app[ticket.app] -= 1
        self.by_user += Counter()  # drops the zeros
        self.by_app += Counter()
        self._grant()

    @contextlib.asynccontextmanager
    async def slot(self, user: str, app: str) -> AsyncIterator[None]:
        """A build slot for ``user``'s build of ``app``, for the ``async with`` block;
        raises :class:`NoBuildSlot` after waiting ``wait`` seconds."""
        ticket = Ticket(user, app, next(self._seq))
        ticket.granted = asyncio.get_running_loop().create_future()
        self.waiting.append(ticket)
        self._grant()
        try:
            async with asyncio.timeout(self.wait):
                await asyncio.shield(ticket.granted)
        except BaseException as exc:
            if ticket in self.waiting:
                self.waiting.remove(ticket)
            elif ticket.granted.done():  # granted as the wait ended: give it back
                self._give_back(ticket)
            if isinstance(exc, TimeoutError):
                raise NoBuildSlot(self._busy(user)) from None
            raise
        try:
            yield
        finally:
            self._give_back(ticket)

    def _busy(self, user: str) -> str:
        if self.by_user[user] >= self.per_user:
            return (
                f"you already have {self.by_user[user]} builds running (at most "
                f"{self.per_user} at once) and this one waited {self.wait:.0f} s for them"
            )
        return (
            f"all {self.slots} build slots of this server stayed busy for {self.wait:.0f} s "
            f"({len(self.waiting)} more build(s) waiting)"
        )
