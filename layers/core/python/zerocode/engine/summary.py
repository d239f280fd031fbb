"""The running summary's writer: the routing model condenses turns that left the window.

The model is asked with the ``summary`` prompt and one line per evicted turn
(:func:`turn_lines`), built from the transcript alone: what was asked, which files
changed, how it ended. The memory facade stores the answer, bounded in tokens, and
shows it after the system prompt (docs/memory.md, "Running summary"). Its request's usage
is kept in the usage ledger under the turn the summary opens (docs/engine.md, "What a turn
costs").
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from itertools import groupby
from typing import Protocol

from zerocode.apps.records import App
from zerocode.engine import prompts
from zerocode.engine.model import ChatModel, ModelReply, ModelRole, TextDelta
from zerocode.engine.usage import Meter
from zerocode.memory.messages import (
    FAILED_PREFIX,
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from zerocode.memory.summary import previous_text
from zerocode.memory.transcript import EntryKind, Unit

ASKED_CHARS = 200  # the request, per turn line
SHORT_CHARS = 80  # an outcome's detail
_WRITES = frozenset({"write_file", "modify_file", "delete_file"})
# html / multi_file turns change files through code blocks in the closing answer.
_FENCES = (
    ("index.html", re.compile(r"^\s*```(html|htm)\b", re.M | re.I)),
    ("style.css", re.compile(r"^\s*```css\b", re.M | re.I)),
    ("script.js", re.compile(r"^\s*```(javascript|js)\b", re.M | re.I)),
)
_WHY = re.compile(r"was interrupted \((.*?)\) before it finished")

log = logging.getLogger(__name__)


class Owners(Protocol):
    """Whose an app is (the :class:`~zerocode.apps.records.AppStore`): the summary's request
    is kept on its owner's account."""

    def get(self, app_id: str) -> App | None: ...


class ModelSummarizer:
    """An :class:`~zerocode.memory.summary.AsyncSummarizer` that asks ``model`` (routing
    role) and gives up after ``timeout`` seconds; the facade logs any failure and the turn
    goes on without a new summary.

    With a ``meter`` and the ``owners`` of apps, each request's usage is kept (issue 43) under
    the app and the turn the summary opens (round 0), for the app's owner, whether or not the
    summary is then stored: the tokens were spent."""

    def __init__(
        self,
        model: ChatModel,
        timeout: float = 30.0,
        *,
        meter: Meter | None = None,
        owners: Owners | None = None,
    ) -> None:
        self.model, self.timeout = model, timeout
        self.meter, self.owners = meter, owners

    async def summarize(
        self, previous: str | None, evicted: Sequence[Unit], *, app_id: str = "", turn: int = 0
    ) -> str:
        messages: list[Message] = [
            SystemMessage(prompts.load("summary")),
            UserMessage(request(previous, evicted)),
        ]
        parts: list[str] = []
        reply: ModelReply | None = None
        async with asyncio.timeout(self.timeout):
            async for event in self.model.stream(ModelRole.ROUTING, messages):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, ModelReply):
                    reply = event
                    if not parts:
                        parts.append(event.message.content or "")
        if reply is not None:
            await self._count(reply, messages, app_id, turn)
        text = "".join(parts).strip()
        if not text:
            raise ValueError("the model answered the summary request with nothing")
        return text

    async def _count(
        self, reply: ModelReply, messages: Sequence[Message], app_id: str, turn: int
    ) -> None:
        if self.meter is None or self.meter.ledger is None or self.owners is None or not app_id:
            return
        try:
            app = await asyncio.to_thread(self.owners.get, app_id)
        except Exception as exc:  # as a ledger that fails: the record is lost, not the summary
            log.warning("could not keep the summary's usage app=%s: %s", app_id, type(exc).__name__)
            return
        if app is not None:
            await self.meter.count(reply, messages, account=app.owner, app_id=app_id, turn=turn)


def request(previous: str | None, evicted: Sequence[Unit]) -> str:
    """The user message of a summary request: the previous summary, then the new lines."""
    lines = turn_lines(evicted)
    before = previous_text(previous)
    if not before:
        return "\n".join(lines)
    return f"Previous summary:\n{before}\n\nTurns that just left the window:\n" + "\n".join(lines)


def turn_lines(evicted: Sequence[Unit]) -> list[str]:
    """One line per turn among ``evicted`` (oldest first):
    ``Turn N: asked: <request>; changed: <paths or none>; outcome: <ok/failed + short>``.

    A turn only partly evicted says what its evicted part shows: ``asked: (see above)``
    when its request left earlier, ``outcome: still in the window`` when its end did not
    leave yet.
    """
    units = [u for u in evicted if u.kind is not EntryKind.SUMMARY]
    return [_line(number, list(group)) for number, group in groupby(units, lambda u: u.turn)]


def _line(number: int, units: list[Unit]) -> str:
    asked = "(see above)"
    changed: list[str] = []
    failures: list[str] = []
    outcome = "still in the window"
    for unit in units:
        for message in unit.messages:
            if unit.kind is EntryKind.USER and isinstance(message, UserMessage):
                asked = _clip(message.content, ASKED_CHARS)
            elif isinstance(message, AssistantMessage) and message.tool_calls:
                failed = {
                    m.tool_call_id for m in unit.messages if isinstance(m, ToolResult) and not m.ok
                }
                changed += [
                    path
                    for c in message.tool_calls
                    if c.name in _WRITES
                    and c.id not in failed
                    and isinstance(path := (c.parsed_arguments() or {}).get("path"), str)
                ]
            elif isinstance(message, ToolResult) and not message.ok:
                failures.append(message.content.removeprefix(FAILED_PREFIX))
        if unit.kind is EntryKind.NOTE:  # a platform note (M9) is a turn of its own
            note = unit.messages[0].content if unit.messages else ""
            return f"Turn {number}: platform note: {_clip(str(note), ASKED_CHARS)}"
        if unit.kind is EntryKind.FINAL:
            text = unit.messages[0].content if unit.messages else ""
            text = text if isinstance(text, str) else ""
            changed += [path for path, fence in _FENCES if fence.search(text)]
            prose = text.split("```", 1)[0]
            outcome = "ok" + (f": {_clip(prose, SHORT_CHARS)}" if prose.strip() else "")
        elif unit.kind is EntryKind.INTERRUPTED:
            note = unit.messages[0].content if unit.messages else ""
            why = _WHY.search(note) if isinstance(note, str) else None
            outcome = "failed: interrupted" + (
                f" ({_clip(why.group(1), SHORT_CHARS)})" if why else ""
            )
    if failures and outcome.startswith("ok"):
        outcome = f"ok after failures: {_clip(failures[-1], SHORT_CHARS)}"
    elif failures and outcome.startswith("failed"):
        outcome += f" after: {_clip(failures[-1], SHORT_CHARS)}"
    paths = ", ".join(dict.fromkeys(changed)) or "none"
    return f"Turn {number}: asked: {asked}; changed: {paths}; outcome: {outcome}"


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
