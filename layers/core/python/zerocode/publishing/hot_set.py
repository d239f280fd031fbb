"""Pointers with a source of truth and a hot set in front of it (AWS at scale, issue 27).

On AWS the truth is the DynamoDB pointer table (no ceiling) and the hot set the CloudFront
KeyValueStore (5 MB), which the viewer-request function reads on every request; a key the
hot set lacks is resolved at the edge from the table, seen within 90 s of a write (60 s
CloudFront, 30 s the router's cache; docs/operations.md, "Routing a million sites"). A key of
the hot set is seen within the store's propagation (seconds). The two must never disagree for
long, since the hot set wins at the edge:

- ``point`` writes the truth (one atomic write), then updates the hot copy **if the hot set
  holds the key**. New keys never enter it here. If the hot copy cannot be updated it is
  removed instead (the edge then reads the truth, within 90 s), and only if it can be
  neither updated nor removed is the error raised: the caller's retry writes both again.
- ``promote`` copies the truth's pointer into the hot set, so a rollback is seen at once
  (``Publishing.rollback`` calls it; ``zerocode promote`` too). With a ledger the hot set is
  bounded: each promotion takes the next place of a ring of ``RING_SLOTS`` places and
  demotes whoever held that place, the oldest promotion, unless it was promoted less than
  ``KEEP_SECONDS`` ago (then nothing is promoted: the key stays on the table's path). A store
  past ``HIGH_WATER_BYTES`` takes no promotion either. docs/operations.md, "Instant rollback:
  promotion into the hot set".
- ``remove`` removes the hot copy first (so the edge stops serving it), then the truth.
- ``target`` is the truth's.

A stack that had only the KeyValueStore moves with :func:`backfill`, once: every pointer
of the store the table lacks is copied into it (docs/operations.md, "Routing a million
sites").
"""

from __future__ import annotations

import contextlib
import enum
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from zerocode.publishing.pointers import PointerStore, Publisher, SiteTarget

log = logging.getLogger(__name__)

# Promoted keys the hot set holds at most: 50,000 site pointers of 58 bytes are 2.9 MB of
# the store's 5 MB, leaving room for what it held before the table (docs/operations.md).
RING_SLOTS = 50_000
# No promotion once the store holds this much (the SitePointersNearlyFull alarm's mark).
HIGH_WATER_BYTES = 4_000_000
# A key promoted this recently is never demoted. Demoting it sooner than 90 s after its
# promotion could bring back what CloudFront and the router cached before the rollback; a
# day keeps the key hot for the rest of an incident (a fix deployed after the rollback is
# then seen at once too). Promotions past the ring's size in a day are refused instead.
KEEP_SECONDS = 86_400.0
_VERIFY_ROUNDS = 3  # re-reads of the truth after a hot write, while publishes race it


class Promotion(enum.Enum):
    PROMOTED = "promoted"
    NO_POINTER = "no pointer"  # the truth has none: nothing to serve
    FULL = "full"  # the ring holds only recent promotions, or the store is past its mark
    MOVING = "moving"  # publishes kept moving the truth while it was copied: left to the table


class RingFull(Exception):
    """The place a promotion would take is held by a promotion kept (``KEEP_SECONDS``)."""


@dataclass(frozen=True)
class Slot:
    seq: int  # the promotion's number
    evicted: tuple[str, int] | None  # who held the place before: pointer, promotion number


class PromotionLedger(Protocol):
    """Which keys were promoted, in promotion order (AWS: items of the pointer table)."""

    def take(self, pointer: str, now: float, keep_after: float) -> Slot:
        """The next place of the ring for ``pointer`` and who held it; :class:`RingFull`
        when that holder was promoted after ``keep_after`` (the place is not taken)."""
        ...

    def holds(self, pointer: str, seq: int) -> bool:
        """Whether promotion ``seq`` is ``pointer``'s latest, still in force."""
        ...

    def mark(self, pointer: str, seq: int) -> bool:
        """Record ``seq`` as ``pointer``'s latest promotion; False if the truth has no such
        pointer (removed meanwhile)."""
        ...

    def unmark(self, pointer: str, seq: int) -> None:
        """Forget ``pointer``'s promotion, only while ``seq`` is its latest."""
        ...


class StoreSize(Protocol):
    @property
    def bytes(self) -> int: ...


@runtime_checkable
class Measured(Protocol):
    def size(self) -> StoreSize: ...


@runtime_checkable
class Promoter(Protocol):
    def promote(self, pointer: str) -> Promotion: ...


class ConditionalPublisher(Publisher, Protocol):
    def point_if(self, pointer: str, target: SiteTarget, expected: SiteTarget | None) -> bool:
        """Write only while ``pointer`` names ``expected`` (None: does not exist)."""
        ...


class HotSetPublisher:
    def __init__(
        self,
        truth: Publisher,
        hot: Publisher,
        ledger: PromotionLedger | None = None,
        *,
        keep_seconds: float = KEEP_SECONDS,
        high_water_bytes: int = HIGH_WATER_BYTES,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.truth = truth
        self.hot = hot
        self.ledger = ledger
        self.keep_seconds = keep_seconds
        self.high_water_bytes = high_water_bytes
        self.now = now

    def point(self, pointer: str, target: SiteTarget) -> None:
        self.truth.point(pointer, target)
        try:
            if self.hot.target(pointer) is not None:
                self.hot.point(pointer, target)
        except Exception:
            # The truth moved; a stale hot copy would outlive it, so it goes (and if it
            # cannot, this raises: the caller's retry writes both again).
            log.warning(
                "hot copy of %s not updated: removing it, the edge reads the table",
                pointer,
                exc_info=True,
                extra={"pointer": pointer},
            )
            self.hot.remove(pointer)

    def target(self, pointer: str) -> SiteTarget | None:
        return self.truth.target(pointer)

    def remove(self, pointer: str) -> None:
        self.hot.remove(pointer)
        self.truth.remove(pointer)

    def promote(self, pointer: str) -> Promotion:
        """Copy the truth's pointer into the hot set (the edge then resolves it without a
        table read, and sees its next writes at once). Errors are raised; the truth is
        right whatever happens here, and a key that did not make it into the hot set is
        served from the table, within 90 s."""
        target = self.truth.target(pointer)
        if target is None:
            return Promotion.NO_POINTER
        if self.ledger is None:
            return self._copy(pointer, target)
        if self._past_high_water():
            return Promotion.FULL
        now = self.now()
        try:
            slot = self.ledger.take(pointer, now, now - self.keep_seconds)
        except RingFull:
            log.warning(
                "hot set full of promotions younger than %.0f s: %s not promoted",
                self.keep_seconds,
                pointer,
                extra={"pointer": pointer},
            )
            return Promotion.FULL
        if slot.evicted is not None:
            self._demote(*slot.evicted)
        # Recorded before the copy: a copy that fails leaves a record of a key the store
        # lacks (demoting it later removes nothing), never a key the ledger cannot demote.
        if not self.ledger.mark(pointer, slot.seq):
            return Promotion.NO_POINTER
        return self._copy(pointer, target)

    def _copy(self, pointer: str, target: SiteTarget) -> Promotion:
        """Write ``target`` into the hot set, then read the truth again: a publish that
        wrote the truth after it was read, and found no hot copy yet, is copied too."""
        try:
            for _ in range(_VERIFY_ROUNDS):
                self.hot.point(pointer, target)
                current = self.truth.target(pointer)
                if current == target:
                    return Promotion.PROMOTED
                if current is None:
                    self.hot.remove(pointer)
                    return Promotion.NO_POINTER
                target = current
        except Exception:
            with contextlib.suppress(Exception):
                self.hot.remove(pointer)  # what was written may be stale already
            raise
        self.hot.remove(pointer)  # the truth keeps moving: let the edge read it
        return Promotion.MOVING

    def _demote(self, pointer: str, seq: int) -> None:
        assert self.ledger is not None
        if not self.ledger.holds(pointer, seq):
            return  # promoted again since (a later place holds it), or removed
        self.hot.remove(pointer)
        self.ledger.unmark(pointer, seq)
        log.info("%s demoted from the hot set", pointer, extra={"pointer": pointer})

    def _past_high_water(self) -> bool:
        if not isinstance(self.hot, Measured):
            return False
        used = self.hot.size().bytes
        if used < self.high_water_bytes:
            return False
        log.warning(
            "hot set holds %d bytes, past %d: no promotion",
            used,
            self.high_water_bytes,
            extra={"bytes": used},
        )
        return True


def backfill(hot: PointerStore, truth: ConditionalPublisher) -> int:
    """Copy every pointer of the hot set into the truth where the truth has none (never over
    a pointer written since: each copy is conditional on its absence); safe to repeat. How
    many were copied."""
    copied = 0
    for pointer, target in hot.pointers(""):
        if target is not None and truth.point_if(pointer, target, None):
            copied += 1
    return copied
