"""What the offline script shares: a request as the script reads it, an answer's shape."""

from __future__ import annotations

import ast
import base64
import functools
import html
import json
import re
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass, field
from importlib import resources
from typing import Any

from zerocode.engine.prompts import ASKED, marker_of
from zerocode.engine.repair import CONTINUE_MARK, REPAIR_MARK

_TRIGGER = re.compile(r"\[\[[^\]\n]*\]\]")
_PACE = re.compile(r"\[\[pace=(\d{1,5})\]\]")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”")
_FIELD = re.compile(r"(\w+): ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
H1 = re.compile(r"<h1(\b[^>]*)>(.*?)</h1>", re.DOTALL)
_SELECTED = "\n\n[Selected element]"
NOTE_MARK = "[zerocode"  # a platform note, or (with REPAIR_MARK / CONTINUE_MARK) feedback
_INTERRUPTED = re.compile(r"\[Turn \d+ was interrupted\b")  # memory.facade.interrupted_note


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call; ``arguments`` is the raw JSON text (deliberately invalid for bad-args)."""

    name: str
    arguments: str

    @classmethod
    def of(cls, name: str, **args: str) -> ScriptedCall:
        return cls(name, json.dumps(args, ensure_ascii=False))


@dataclass(frozen=True)
class Script:
    """The whole answer to one request, before it is cut into wire chunks."""

    text: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    _: KW_ONLY  # the what stays positional; the how (pacing, faults) is always named
    pace: float = 0.0  # seconds before every chunk
    slow: bool = False  # a paced preamble of SLOW_DELTAS text deltas
    cut: bool = False  # the connection drops after the first text
    finish: str | None = None  # a finish_reason other than the natural one ("length")
    usage: bool = True  # reports its usage when asked (include_usage), as providers do

    @property
    def finish_reason(self) -> str:
        if self.finish is not None:
            return self.finish
        return "tool_calls" if self.calls else "stop"


@dataclass(frozen=True, kw_only=True)
class Request:
    """The parts of a chat request the script reads.

    The turn's *request* is the newest user message that is not platform feedback (a message
    starting with :data:`REPAIR_MARK` or :data:`CONTINUE_MARK`, engine/repair.py). Without
    feedback it is simply the newest user message, and ``turn`` equals ``since``.
    """

    kind: str | None  # prompt marker of the system message
    text: str  # the request, without the selected-element line
    element: dict[str, str]
    earlier: list[dict[str, Any]]  # messages before the request
    since: list[dict[str, Any]]  # messages after the newest user message (this round's steps)
    triggers: frozenset[str] = field(default_factory=frozenset)
    raw: str = ""  # the request as sent
    # The newest user message when it is platform feedback (this round answers it), else None.
    feedback: str | None = None
    repairs: int = 0  # repair feedbacks so far in this turn
    continues: int = 0  # continue feedbacks since the last repair feedback (or the request)
    # With continue feedback: the answer given so far, the assistant text after the last
    # user message that is not a continue feedback (one message or one per part).
    partial: str = ""
    turn: list[dict[str, Any]] = field(default_factory=list)  # every message after the request
    # Whether the request offers the acceptance check tools (add_check, retire_check).
    check_tools: bool = False
    # The images the request carries (data URLs decoded), in order.
    images: tuple[bytes, ...] = ()
    asking: bool = False  # sent in Ask mode (engine/ask.py): a question, read-only tools
    tools: frozenset[str] = frozenset()  # the names of the tools the request offers

    @property
    def repairing(self) -> bool:
        return self.feedback is not None and self.feedback.startswith(REPAIR_MARK)

    @property
    def continuing(self) -> bool:
        return self.feedback is not None and self.feedback.startswith(CONTINUE_MARK)

    @property
    def note(self) -> bool:
        """Whether the newest message is a platform note (``[zerocode …``, M9: a restored
        version, what a checks block did), not a request: the platform never asks after a
        note alone, and a note asks for nothing."""
        return self.feedback is None and not self.since and self.raw.startswith(NOTE_MARK)

    @property
    def description(self) -> str:
        return " ".join(_TRIGGER.sub(" ", self.text).split())

    @property
    def quoted(self) -> str | None:
        """The request's first double-quoted text (the new text of a change), any trigger
        written inside the quotes left out."""
        found = _QUOTED.search(self.text)
        if found is None:
            return None
        said = found.group(1) or found.group(2)
        if _TRIGGER.search(said) is None:
            return said
        return " ".join(_TRIGGER.sub(" ", said).split()) or None


def parse_request(messages: list[dict[str, Any]]) -> Request:
    kind = next(
        (
            marker_of(text_of(m))
            for m in messages
            if m.get("role") == "system" and marker_of(text_of(m))
        ),
        None,
    )
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    if not users:
        return Request(
            kind=kind, text="", element={}, earlier=messages, since=[], triggers=frozenset()
        )
    last_user = users[-1]
    # The request: the newest user message that is not the platform's feedback (or, should
    # every user message be feedback, the newest one, as before feedback existed).
    at = next((i for i in reversed(users) if not is_feedback(text_of(messages[i]))), last_user)
    raw = text_of(messages[at])
    images = images_of(messages[at])
    text, _, selected = raw.partition(_SELECTED)
    asking = text.startswith(ASKED)
    text = text.removeprefix(ASKED).lstrip("\n")
    element = {k: v for k, v in _fields(selected)} if selected else {}
    triggers = frozenset(_TRIGGER.findall(text))
    if at == last_user:
        since = messages[last_user + 1 :]
        return Request(
            kind=kind,
            text=text,
            element=element,
            earlier=messages[:at],
            since=since,
            triggers=triggers,
            raw=raw,
            turn=since,
            images=images,
            asking=asking,
        )
    said = [text_of(messages[i]) for i in users if i > at]
    repairs = sum(t.startswith(REPAIR_MARK) for t in said)
    continues = 0
    for t in reversed(said):
        if not t.startswith(CONTINUE_MARK):
            break
        continues += 1
    chain = users[-continues - 1] if continues < len(said) else at  # before the continues
    partial = "".join(
        text_of(m)
        for m in messages[chain + 1 : last_user]
        if m.get("role") == "assistant" and not m.get("tool_calls")
    )
    return Request(
        kind=kind,
        text=text,
        element=element,
        earlier=messages[:at],
        since=messages[last_user + 1 :],
        triggers=triggers,
        raw=raw,
        images=images,
        feedback=said[-1],
        repairs=repairs,
        continues=continues,
        partial=partial if continues else "",
        turn=messages[at + 1 :],
        asking=asking,
    )


def is_feedback(text: str) -> bool:
    """Whether a user message is the platform's feedback inside a turn, not a request."""
    return text.startswith((REPAIR_MARK, CONTINUE_MARK))


NEEDS_QUOTES = (
    "Tell me the new text in double quotes, for example: change the title to "
    '"My Shop". Nothing was changed.'
)


def is_creation(earlier: list[dict[str, Any]]) -> bool:
    """No earlier answer in the window: a first request (or one whose turn was cut off; an
    answer to a question asked in Ask mode is not one either: it made nothing)."""
    asked = False
    for m in earlier:
        if m.get("role") == "user" and not is_feedback(text_of(m)):
            asked = text_of(m).startswith(ASKED)
        elif m.get("role") == "assistant" and not asked and not _INTERRUPTED.match(text_of(m)):
            return False
    return True


def element_text(req: Request) -> str | None:
    text = req.element.get("text")
    return text.strip() if text and text.strip() else None


def images_of(message: dict[str, Any]) -> tuple[bytes, ...]:
    """The images a message carries as data URLs (its ``image_url`` parts), decoded."""
    content = message.get("content")
    if not isinstance(content, list):
        return ()
    found = []
    for part in content:
        url = part.get("image_url", {}).get("url") if isinstance(part, dict) else None
        if isinstance(url, str) and url.startswith("data:") and ";base64," in url:
            found.append(base64.b64decode(url.split(";base64,", 1)[1]))
    return tuple(found)


def text_of(message: dict[str, Any]) -> str:
    """A message's text, whether the content is a string or a list of text parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def args_of(call: dict[str, Any]) -> dict[str, str]:
    try:
        value = json.loads(call.get("function", {}).get("arguments") or "{}")
    except ValueError:
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) else {}


def _fields(line: str) -> Iterator[tuple[str, str]]:
    """``key: 'value'`` pairs of a ``[Selected element]`` line (values are Python reprs)."""
    for key, literal in _FIELD.findall(line):
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, str):
            yield key, value


def pace_of(text: str) -> float:
    found = _PACE.search(text)
    return int(found.group(1)) / 1000 if found else 0.0


def page_text(text: str) -> str:
    """Text as element content in HTML (quotes need no escaping outside attributes)."""
    return html.escape(text, quote=False)


def template(name: str) -> str:
    """A template shipped as package data (``templates/NAME``), read once."""
    return _template(name)


@functools.cache
def _template(name: str) -> str:
    return resources.files(__package__).joinpath("templates", name).read_text(encoding="utf-8")
