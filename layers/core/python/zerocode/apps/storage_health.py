"""Whether the platform's storage can take a write now: what ``/api/health`` tells (issue 29).

A full disk or a store refusing writes once left health saying "ok" while every write
failed. A :class:`StorageProbe` asks the store itself (a real write; locally also the data
directory's free space against ``ZEROCODE_MIN_FREE_MB``), and :class:`CachedProbe` runs it
at most once per a few seconds however often health is asked, so health stays cheap under
load and a load balancer's checks do not become a write load of their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class StorageHealth:
    """No problems: storage takes writes. Each problem is one sentence for an admin (which
    path and how much room, or the store's error kind); others see only the status."""

    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def reason(self) -> str | None:
        return "; ".join(self.problems) or None


class StorageProbe(Protocol):
    def check(self) -> StorageHealth:
        """Try the store now; a failure is a problem in the answer, never an exception."""
        ...


class Probes:
    """Several probes as one: every problem any of them finds."""

    def __init__(self, *probes: StorageProbe) -> None:
        self.probes = probes

    def check(self) -> StorageHealth:
        return StorageHealth(tuple(p for probe in self.probes for p in probe.check().problems))


class CachedProbe:
    """``probe``'s answer, asked again only once ``seconds`` have passed. While one request
    probes, the others get the previous answer instead of waiting (the first ever waits)."""

    def __init__(
        self,
        probe: StorageProbe,
        seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.probe, self.seconds, self.clock = probe, seconds, clock
        self._lock = threading.Lock()
        self._last: StorageHealth | None = None
        self._at = 0.0

    def check(self) -> StorageHealth:
        last = self._last
        if last is not None and self.clock() - self._at < self.seconds:
            return last
        if not self._lock.acquire(blocking=last is None):
            assert last is not None
            return last
        try:
            if self._last is not None and self.clock() - self._at < self.seconds:
                return self._last  # another request probed while this one waited
            try:
                found = self.probe.check()
            except Exception as exc:  # a probe that itself broke says so, not "ok"
                found = StorageHealth((f"the storage probe failed: {type(exc).__name__}",))
            self._last, self._at = found, self.clock()
            return found
        finally:
            self._lock.release()
