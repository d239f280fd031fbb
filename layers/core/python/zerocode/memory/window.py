"""The model's window: a pure function of the transcript tail and the policy (M3–M5).

Nothing here does I/O, so the window after a cache loss or on a new container
is the same window, and the same function serves the reference model in tests.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from zerocode.memory.messages import (
    FAILED_PREFIX,
    AssistantMessage,
    Message,
    OpenAIMessage,
    SystemMessage,
    ToolCall,
    ToolResult,
    to_openai_list,
)
from zerocode.memory.tokens import REPLY_PRIMING, TokenCounter, count_tokens, message_tokens
from zerocode.memory.transcript import EntryKind, Unit
from zerocode.memory.validation import validate

# Argument keys that name things rather than carry payloads; never elided.
_KEEP_KEYS = frozenset({"path", "name", "dir", "directory", "from", "to"})


@dataclass(frozen=True)
class WindowPolicy:
    """Bounds of the window. ``full_turns``: how many newest turns keep full payloads."""

    max_messages: int = 60
    max_tokens: int = 24_000
    elide_min_chars: int = 512
    full_turns: int = 1
    summary: bool = False

    def __post_init__(self) -> None:
        if self.max_messages < 3 or self.max_tokens < 1 or self.elide_min_chars < 64 \
                or self.full_turns < 1:
            raise ValueError(f"window policy out of range: {self}")

    @property
    def tail_items(self) -> int:
        """Entries to read from the store: enough for the largest window the bounds allow.

        With a running summary, twice that, so units that just left the window are
        still in the read and can be summarised before they are out of reach.
        """
        return self.max_messages * (2 if self.summary else 1)


@dataclass(frozen=True)
class Window:
    messages: tuple[Message, ...]
    tokens: tuple[int, ...]  # per message, framing included
    total_tokens: int  # all messages plus reply priming
    evicted_units: int  # units of the tail left out
    elided_payloads: int  # messages in the window whose payloads were elided
    summary_included: bool
    kept_units: tuple[int, ...] = ()  # seqs of the transcript units in the window

    def openai(self) -> list[OpenAIMessage]:
        return to_openai_list(self.messages)


def build_window(system: str, units: Sequence[Unit], policy: WindowPolicy,
                 count: TokenCounter = count_tokens) -> Window:
    """Select whole units newest-first within the bounds; pin system prompt and newest user.

    Units are taken from the newest backwards and the walk stops at the first
    that does not fit, so what is kept is one contiguous run (plus the pinned
    user message when the current turn alone fills the window).
    """
    conversation = [u for u in units if u.kind is not EntryKind.SUMMARY]
    summaries = [u for u in units if u.kind is EntryKind.SUMMARY]
    pinned = next((u for u in reversed(conversation) if u.kind is EntryKind.USER), None)
    newest_turn = conversation[-1].turn if conversation else 0

    def render(unit: Unit) -> tuple[Message, ...]:
        if unit.turn > newest_turn - policy.full_turns:
            return unit.messages
        return tuple(elide(m, policy.elide_min_chars) for m in unit.messages)

    def cost(msgs: Sequence[Message]) -> int:
        return sum(message_tokens(m, count) for m in msgs)

    system_msg = SystemMessage(system)
    summary_msg = summaries[-1].messages[0] if policy.summary and summaries else None
    fixed: list[Message] = [system_msg] + ([summary_msg] if summary_msg else [])
    kept: dict[int, tuple[Message, ...]] = {}
    if pinned is not None:
        kept[pinned.seq] = render(pinned)
    used_messages = len(fixed) + sum(len(m) for m in kept.values())
    used_tokens = REPLY_PRIMING + cost(fixed) + sum(cost(m) for m in kept.values())
    for unit in reversed(conversation):
        if unit is pinned:
            continue
        msgs = render(unit)
        unit_cost = cost(msgs)
        if used_messages + len(msgs) > policy.max_messages or \
                used_tokens + unit_cost > policy.max_tokens:
            break
        kept[unit.seq] = msgs
        used_messages += len(msgs)
        used_tokens += unit_cost

    evicted = len(conversation) - len(kept)
    elided = sum(slim is not original for unit in conversation if unit.seq in kept
                 for slim, original in zip(kept[unit.seq], unit.messages, strict=True))
    # A summary only helps when something before the window is gone.
    include_summary = summary_msg is not None and (
        evicted > 0 or (bool(conversation) and conversation[0].seq > 1))
    head = [system_msg, summary_msg] if include_summary and summary_msg else [system_msg]
    body = [m for unit in conversation if unit.seq in kept for m in kept[unit.seq]]
    messages = tuple(head + body)
    validate(messages)
    per_message = tuple(message_tokens(m, count) for m in messages)
    return Window(messages, per_message, sum(per_message) + REPLY_PRIMING, evicted, elided,
                  include_summary, tuple(sorted(kept)))


def elide(message: Message, min_chars: int) -> Message:
    """The message with payloads over ``min_chars`` replaced by a stub; the same object if none."""
    if isinstance(message, ToolResult):
        body = message.content.removeprefix(FAILED_PREFIX) if not message.ok else message.content
        if len(body) <= min_chars:
            return message
        stub = elision_stub(body)
        return replace(message, content=stub if message.ok else FAILED_PREFIX + stub)
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = tuple(_elide_call(c, min_chars) for c in message.tool_calls)
        if all(a is b for a, b in zip(calls, message.tool_calls, strict=True)):
            return message
        return replace(message, tool_calls=calls)
    return message


def _elide_call(call: ToolCall, min_chars: int) -> ToolCall:
    if len(call.arguments) <= min_chars:
        return call
    args = call.parsed_arguments()
    if args is None:
        return replace(call, arguments=json.dumps({"elided": elision_stub(call.arguments)}))
    slim: dict[str, Any] = {}
    changed = False
    for key, value in args.items():
        if isinstance(value, str) and key not in _KEEP_KEYS and len(value) > min_chars:
            slim[key] = elision_stub(value)
            changed = True
        else:
            slim[key] = value
    if not changed:
        return call
    return replace(call, arguments=json.dumps(slim, ensure_ascii=False))


def elision_stub(payload: str) -> str:
    data = payload.encode("utf-8")
    size = f"{len(data)} B" if len(data) < 1024 else f"{len(data) / 1024:.1f} KB"
    digest = hashlib.sha256(data).hexdigest()[:16]
    return (f"[content elided: {size}, sha256 {digest}; "
            "read the file for the current version]")
