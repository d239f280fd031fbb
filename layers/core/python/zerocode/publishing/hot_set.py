"""Pointers with a source of truth and a hot set in front of it (AWS at scale, issue 27).

On AWS the truth is the DynamoDB pointer table (no ceiling) and the hot set the CloudFront
KeyValueStore (5 MB), which the viewer-request function reads on every request; a key the
hot set lacks is resolved at the edge from the table (docs/operations.md, "Routing a
million sites"). The two must never disagree for long, since the hot set wins at the edge:

- ``point`` writes the truth (one atomic write), then updates the hot copy **if the hot set
  holds the key**. New keys never enter it here, so it cannot fill up and fail a publish;
  what it holds is what it held before the table existed, and what an operator promotes.
  If the hot write fails, the error is raised: the caller's retry writes both again.
- ``remove`` removes the hot copy first (so the edge stops serving it), then the truth.
- ``target`` is the truth's.

A stack that had only the KeyValueStore moves with :func:`backfill`, once: every pointer
of the store the table lacks is copied into it (docs/operations.md, "Routing a million
sites").
"""

from __future__ import annotations

from typing import Protocol

from zerocode.publishing.pointers import PointerStore, Publisher, SiteTarget


class ConditionalPublisher(Publisher, Protocol):
    def point_if(self, pointer: str, target: SiteTarget, expected: SiteTarget | None) -> bool:
        """Write only while ``pointer`` names ``expected`` (None: does not exist)."""
        ...


class HotSetPublisher:
    def __init__(self, truth: Publisher, hot: Publisher) -> None:
        self.truth = truth
        self.hot = hot

    def point(self, pointer: str, target: SiteTarget) -> None:
        self.truth.point(pointer, target)
        if self.hot.target(pointer) is not None:
            self.hot.point(pointer, target)

    def target(self, pointer: str) -> SiteTarget | None:
        return self.truth.target(pointer)

    def remove(self, pointer: str) -> None:
        self.hot.remove(pointer)
        self.truth.remove(pointer)

    def promote(self, pointer: str) -> bool:
        """Copy the truth's pointer into the hot set (a key the edge should resolve without
        a table read); whether there was one to copy."""
        target = self.truth.target(pointer)
        if target is None:
            return False
        self.hot.point(pointer, target)
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
