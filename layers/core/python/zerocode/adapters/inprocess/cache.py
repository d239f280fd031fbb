"""In-process WindowCache: an LRU with a TTL, for one machine or one Lambda container.

Bounded by apps and by bytes: a long app's tail (up to ``window_max_messages`` entries with
their payloads) can be megabytes, so the count alone would not bound the memory.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from zerocode.memory.cache import CachedTail


class LruWindowCache:
    def __init__(
        self,
        max_apps: int = 512,
        ttl_seconds: float = 900,
        clock: Callable[[], float] = time.monotonic,
        max_bytes: int = 128 << 20,
    ) -> None:
        if max_apps < 1 or ttl_seconds <= 0 or max_bytes < 1:
            raise ValueError("max_apps, ttl_seconds and max_bytes must be positive")
        self.max_apps, self.ttl, self.clock = max_apps, ttl_seconds, clock
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, tuple[float, CachedTail, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, app_id: str) -> CachedTail | None:
        with self._lock:
            item = self._items.get(app_id)
            if item is None:
                return None
            expires, tail, _ = item
            if expires <= self.clock():
                self._drop(app_id)
                return None
            self._items.move_to_end(app_id)
            return tail

    def put(self, app_id: str, tail: CachedTail) -> None:
        size = tail_bytes(tail)
        with self._lock:
            self._drop(app_id)
            if size > self.max_bytes:
                return  # larger than the whole cache: read from the store each time
            self._items[app_id] = (self.clock() + self.ttl, tail, size)
            self._bytes += size
            while len(self._items) > self.max_apps or self._bytes > self.max_bytes:
                self._drop(next(iter(self._items)))

    def delete(self, app_id: str) -> None:
        with self._lock:
            self._drop(app_id)

    def _drop(self, app_id: str) -> None:
        item = self._items.pop(app_id, None)
        if item is not None:
            self._bytes -= item[2]

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)


def tail_bytes(tail: CachedTail) -> int:
    """About what a tail holds in memory: its payload text, plus a fixed cost per entry."""
    total = 0
    for entry in (*tail.entries, *((tail.pinned,) if tail.pinned else ())):
        total += 200
        message = entry.message
        content = getattr(message, "content", None)
        if isinstance(content, str):
            total += len(content)
        for call in getattr(message, "tool_calls", ()) or ():
            total += len(call.arguments) + 100
    return total
