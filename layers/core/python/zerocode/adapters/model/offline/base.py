"""What the offline script shares: a request as the script reads it, an answer's shape."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from zerocode.engine.prompts import marker_of

_TRIGGER = re.compile(r"\[\[[^\]\n]*\]\]")
_PACE = re.compile(r"\[\[pace=(\d{1,5})\]\]")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”")
_FIELD = re.compile(r"(\w+): ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
H1 = re.compile(r"<h1(\b[^>]*)>(.*?)</h1>", re.DOTALL)
_STOPWORD_TEXT = """
a an the and or of for to with in on at by from into my our your me us i we you it its this that
these those is are be please make build create generate give want need would like can could
should app application website site page web simple small little basic new using use which
where has have show shows let lets just some very nice"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_SELECTED = "\n\n[Selected element]"
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
    pace: float = 0.0  # seconds before every chunk
    slow: bool = False  # a paced preamble of SLOW_DELTAS text deltas
    cut: bool = False  # the connection drops after the first text

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.calls else "stop"


@dataclass(frozen=True)
class Request:
    """The parts of a chat request the script reads."""

    kind: str | None  # prompt marker of the system message
    text: str  # the newest user message, without the selected-element line
    element: dict[str, str]
    earlier: list[dict[str, Any]]  # messages before the newest user message
    since: list[dict[str, Any]]  # messages after it (this turn's tool steps)
    triggers: frozenset[str] = field(default_factory=frozenset)
    raw: str = ""  # the newest user message as sent

    @property
    def description(self) -> str:
        return " ".join(_TRIGGER.sub(" ", self.text).split())

    @property
    def quoted(self) -> str | None:
        found = _QUOTED.search(self.text)
        return (found.group(1) or found.group(2)) if found else None


def parse_request(messages: list[dict[str, Any]]) -> Request:
    kind = next(
        (
            marker_of(text_of(m))
            for m in messages
            if m.get("role") == "system" and marker_of(text_of(m))
        ),
        None,
    )
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    raw = text_of(messages[last_user]) if last_user >= 0 else ""
    text, _, selected = raw.partition(_SELECTED)
    element = {k: v for k, v in _fields(selected)} if selected else {}
    triggers = frozenset(_TRIGGER.findall(text))
    if last_user < 0:
        return Request(kind, "", {}, messages, [], frozenset())
    return Request(
        kind, text, element, messages[:last_user], messages[last_user + 1 :], triggers, raw
    )


def app_name(description: str, limit: int = 30) -> str:
    """A title-cased name from the description's main words, at most ``limit`` characters."""
    words = [w for w in re.findall(r"\w[\w'-]*", description) if w.lower() not in _STOPWORDS]
    name = ""
    for word in words:
        word = word[:1].upper() + word[1:]
        candidate = f"{name} {word}".strip()
        if len(candidate) > limit:
            break
        name = candidate
    if not name and words:
        name = words[0][:limit]
    return name or "My App"


NEEDS_QUOTES = (
    "Tell me the new text in double quotes, for example: change the title to "
    '"My Shop". Nothing was changed.'
)


def is_creation(earlier: list[dict[str, Any]]) -> bool:
    """No earlier answer in the window: a first request (or one whose turn was cut off)."""
    return not any(
        m.get("role") == "assistant" and not _INTERRUPTED.match(text_of(m)) for m in earlier
    )


def element_text(req: Request) -> str | None:
    text = req.element.get("text")
    return text.strip() if text and text.strip() else None


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
