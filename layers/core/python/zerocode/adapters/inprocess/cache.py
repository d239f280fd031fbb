"""In-process WindowCache: an LRU with a TTL, for one machine or one Lambda container."""

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
    ) -> None:
        if max_apps < 1 or ttl_seconds <= 0:
            raise ValueError("max_apps and ttl_seconds must be positive")
        self.max_apps, self.ttl, self.clock = max_apps, ttl_seconds, clock
        self._items: OrderedDict[str, tuple[float, CachedTail]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, app_id: str) -> CachedTail | None:
        with self._lock:
            item = self._items.get(app_id)
            if item is None:
                return None
            expires, tail = item
            if expires <= self.clock():
                del self._items[app_id]
                return None
            self._items.move_to_end(app_id)
            return tail

    def put(self, app_id: str, tail: CachedTail) -> None:
        with self._lock:
            self._items[app_id] = (self.clock() + self.ttl, tail)
            self._items.move_to_end(app_id)
            while len(self._items) > self.max_apps:
                self._items.popitem(last=False)

    def delete(self, app_id: str) -> None:
        with self._lock:
            self._items.pop(app_id, None)

    def __len__(self) -> int:
        return len(self._items)
