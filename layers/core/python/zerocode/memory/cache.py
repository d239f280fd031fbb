"""WindowCache port: keeps an app's transcript tail and the head it reflects.

The cache is an optimisation, never a source of truth (M3): the memory layer
checks the cached head against the store before trusting it, and anything
missing, stale or unreadable is rebuilt from the store.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from zerocode.memory.messages import from_dict, to_dict
from zerocode.memory.transcript import Entry, EntryKind


@dataclass(frozen=True, kw_only=True)
class CachedTail:
    head: int  # seq of the newest transcript entry this tail reflects
    head_uid: str  # and its uid, so a reused seq after a clear is not mistaken for it
    entries: tuple[Entry, ...]  # the newest entries, oldest first, exactly as the store read them
    pinned: Entry | None = None  # the current turn's user message when older than ``entries``


class WindowCache(Protocol):
    def get(self, app_id: str) -> CachedTail | None: ...

    def put(self, app_id: str, tail: CachedTail) -> None: ...

    def delete(self, app_id: str) -> None: ...


def encode_tail(tail: CachedTail) -> bytes:
    return json.dumps(
        {
            "v": 1,
            "head": tail.head,
            "uid": tail.head_uid,
            "entries": [_entry(e) for e in tail.entries],
            "pinned": _entry(tail.pinned) if tail.pinned else None,
        },
        ensure_ascii=False,
        separators=(",", ":"),
    ).encode()


def decode_tail(raw: bytes) -> CachedTail:
    """Inverse of :func:`encode_tail`; raises ValueError on anything it did not write."""
    try:
        data = json.loads(raw)
        if data.get("v") != 1:
            raise ValueError(f"unknown cache format {data.get('v')!r}")
        pinned = data["pinned"]
        entries = tuple(_unentry(e) for e in data["entries"])
        return CachedTail(
            head=int(data["head"]),
            head_uid=str(data["uid"]),
            entries=entries,
            pinned=_unentry(pinned) if pinned is not None else None,
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed cached tail: {exc}") from exc


def _entry(e: Entry) -> list[Any]:
    return [
        e.seq,
        e.turn,
        e.unit,
        e.turn_start,
        e.kind.value,
        e.covers,
        to_dict(e.message) if e.message is not None else None,
        e.error,
        e.uid,
    ]


def _unentry(raw: Sequence[Any]) -> Entry:
    seq, turn, unit, turn_start, kind, covers, message, error, uid = raw
    return Entry(
        seq=int(seq),
        turn=int(turn),
        unit=int(unit),
        turn_start=int(turn_start),
        kind=EntryKind(kind),
        message=from_dict(message) if message is not None else None,
        covers=int(covers),
        error=error,
        uid=str(uid),
    )
