"""Display history: what people see in the chat, newest first (M1).

It is never fed to the model; the transcript is. Keys are time-ordered
strings so any store can page by a ``before`` cursor without counting.
"""

from __future__ import annotations

import re
import secrets
import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from zerocode.errors import InvalidInput

MAX_PAGE = 50
KEY_PATTERN = r"^[0-9]{20}-[0-9a-f]{8}$"  # an entry's key, and the history's paging cursor
_KEY = re.compile(KEY_PATTERN)


class DisplayRole(StrEnum):
    USER = "user"
    AI = "ai"
    ERROR = "error"
    NOTE = "note"  # the platform's word on something done outside a turn (a restore)


class DisplayStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, kw_only=True)
class DisplayEntry:
    id: str  # time-ordered key; also the pagination cursor
    role: DisplayRole
    content: str
    status: DisplayStatus
    turn: int
    created_at: float
    element: dict[str, Any] | None = None
    # The images a user message carried, as references ({sha256, type, width, height,
    # bytes}: memory/images.py); never their bytes.
    images: list[dict[str, Any]] | None = None
    # A reply's model requests and tokens, as its ``done`` said them (engine/usage.py).
    usage: dict[str, Any] | None = None
    # "ask" for a question sent in Ask mode and its answer (engine/ask.py); None: Build.
    mode: str | None = None

    @classmethod
    def keyed(
        cls,
        key: str,
        *,
        role: DisplayRole,
        content: str,
        status: DisplayStatus,
        turn: int,
        element: dict[str, Any] | None,
        images: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        mode: str | None = None,
    ) -> DisplayEntry:
        """The entry stored under ``key``; its time is the key's."""
        return cls(
            id=key,
            role=role,
            content=content,
            status=status,
            turn=turn,
            created_at=created_at_of(key),
            element=element,
            images=images or None,
            usage=usage,
            mode=mode,
        )


@dataclass(frozen=True)
class DisplayPage:
    entries: list[DisplayEntry]  # newest first
    next_cursor: str | None


class DisplayHistoryStore(Protocol):
    def append(
        self,
        app_id: str,
        role: DisplayRole,
        content: str,
        *,
        status: DisplayStatus = DisplayStatus.OK,
        turn: int = 0,
        element: dict[str, Any] | None = None,
        images: list[dict[str, Any]] | None = None,
        usage: dict[str, Any] | None = None,
        mode: str | None = None,
    ) -> DisplayEntry: ...

    def page(self, app_id: str, before: str | None = None, limit: int = 20) -> DisplayPage:
        """Entries older than ``before`` (all when None), newest first."""
        ...

    def delete_app(self, app_id: str) -> int: ...


@dataclass
class KeyClock:
    """Strictly increasing, time-ordered display keys within one process."""

    now_ns: Any = time.time_ns
    _last: int = field(default=0, init=False)

    def next_key(self) -> str:
        ns = max(int(self.now_ns()), self._last + 1)
        self._last = ns
        return f"{ns:020d}-{secrets.token_hex(4)}"


def check_page(before: str | None, limit: int) -> None:
    """Reject bad paging input with a clear message before any store is touched."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
    if before is not None and not _KEY.match(before):
        raise InvalidInput("before is not a cursor returned by this API")


def created_at_of(key: str) -> float:
    return int(key[:20]) / 1e9
