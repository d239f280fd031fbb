"""Elision: large payloads of older units become stubs naming their size and hash, so the
window keeps what the model did (and whether it worked) without what it wrote."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from zerocode.memory.messages import (
    FAILED_PREFIX,
    AssistantMessage,
    ImageRef,
    Message,
    ToolCall,
    ToolResult,
    UserMessage,
)
from zerocode.memory.transcript import Unit

# Argument keys that name things rather than carry payloads; never elided.
_KEEP_KEYS = frozenset({"path", "name", "dir", "directory", "from", "to"})


@dataclass(frozen=True)
class Elider:
    """Rule: in units older than the newest ``full_turns`` turns, every tool result and
    tool-call argument string (other than path-like keys) over ``min_chars`` becomes a
    stub naming its size and hash, and every image of a user message a line naming it,
    unless it is among the conversation's newest images (``image_turns``).

    Invariant kept: a unit's shape never changes (the same messages, call ids, names,
    paths and JSON structure; a failed result keeps its ``ERROR: `` prefix), so the
    elided window is as valid as the full one, and the model still sees what it did and
    whether it worked. Units of recent turns are returned as they are (same objects).
    """

    newest_turn: int
    full_turns: int
    min_chars: int
    image_turns: frozenset[int] = frozenset()  # turns whose images stay (newest_images)

    def __call__(self, unit: Unit) -> tuple[Message, ...]:
        if unit.turn > self.newest_turn - self.full_turns:
            return unit.messages
        keep = unit.turn in self.image_turns
        return tuple(elide(m, self.min_chars, keep_images=keep) for m in unit.messages)


def newest_images(units: Sequence[Unit], most: int) -> frozenset[int]:
    """The turns whose images stay shown: the newest turns that sent images, while their
    images together are at most ``most`` (a turn's images stay or go together)."""
    turns: set[int] = set()
    shown = 0
    for unit in reversed(units):
        count = sum(len(m.images) for m in unit.messages if isinstance(m, UserMessage))
        if not count:
            continue
        if shown + count > most:
            break
        shown += count
        turns.add(unit.turn)
    return frozenset(turns)


def elide(message: Message, min_chars: int, *, keep_images: bool = False) -> Message:
    """The message with payloads over ``min_chars`` replaced by a stub (and its images by a
    line naming each, unless ``keep_images``); the same object if none."""
    slim = _elided(message, min_chars, keep_images=keep_images)
    return message if slim is None else slim


# Cached (messages are immutable): older units are elided again at each model call of a
# turn, and parsing and hashing their payloads would be most of a window's build.
@functools.lru_cache(maxsize=4096)
def _elided(message: Message, min_chars: int, *, keep_images: bool = False) -> Message | None:
    """:func:`elide`'s stubbed message, or None when nothing is over ``min_chars``."""
    if isinstance(message, ToolResult):
        body = message.content.removeprefix(FAILED_PREFIX) if not message.ok else message.content
        if len(body) <= min_chars:
            return None
        stub = elision_stub(body)
        return replace(message, content=stub if message.ok else FAILED_PREFIX + stub)
    if isinstance(message, UserMessage) and message.images and not keep_images:
        stubs = "".join(f"\n\n{image_stub(i)}" for i in message.images)
        return UserMessage(message.content + stubs)
    if isinstance(message, AssistantMessage) and message.tool_calls:
        calls = tuple(_elide_call(c, min_chars) for c in message.tool_calls)
        if all(a is b for a, b in zip(calls, message.tool_calls, strict=True)):
            return None
        return replace(message, tool_calls=calls)
    return None


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


def image_stub(image: ImageRef) -> str:
    """An older turn's image, named instead of shown (its pixels cost tokens every call)."""
    size = f"{image.size} B" if image.size < 1024 else f"{image.size / 1024:.1f} KB"
    return (
        f"[image elided: {image.media_type}, {image.width}×{image.height} px, {size}, "
        f"sha256 {image.sha256[:16]}; the user attached it in this earlier turn]"
    )


def elision_stub(payload: str) -> str:
    data = payload.encode("utf-8")
    size = f"{len(data)} B" if len(data) < 1024 else f"{len(data) / 1024:.1f} KB"
    digest = hashlib.sha256(data).hexdigest()[:16]
    return f"[content elided: {size}, sha256 {digest}; read the file for the current version]"
