"""Lease port: at most one turn per app at a time (a second one gets 409)."""

from __future__ import annotations

from typing import Protocol


class Lease(Protocol):
    def acquire(self, key: str, holder: str, ttl_seconds: float) -> bool:
        """Take the lease if it is free, expired or already ours; False when someone holds it."""
        ...

    def release(self, key: str, holder: str) -> None:
        """Give it back if we still hold it (an expired lease taken over is not ours to free)."""
        ...

    def held(self, key: str) -> bool:
        """Whether someone holds it now (not expired): a turn whose log has no end yet is
        alive only while its lease is (engine/turns.py)."""
        ...
