"""Mapping a text element picked in the preview back to the one place in the source that
wrote it, so a person can change a word without a model turn.

Only an unambiguous literal is changed: the element's text must be written once, as the
whole text between two tags, in the markup of the page's source (an HTML file; a Vue
single-file component's ``<template>``), under an opening tag of the element's own name.
Text made by code (``{{ count }}``, a script's ``textContent``), text spanning child
elements, or text written in two places is not guessed at: :class:`TextNotEditable` says
which, and the console offers a model turn instead. The new text is escaped, so it stays
text (a ``<`` typed in the preview is a ``<`` on the page, never markup).
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from zerocode.apps.guards import check_text
from zerocode.errors import InvalidInput, ZerocodeError

MAX_NEW_TEXT = 2_000
MAX_OLD_TEXT = 500  # what the picker sends of an element's text
# A text segment between two tags, with the tag before it (group 1: its name, when it is an
# opening tag) — the segment is group 2.
_SEGMENT = re.compile(r"<(/?[A-Za-z][A-Za-z0-9-]*)\b[^<>]*>([^<]*)(?=<)")
_SKIPPED = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>|<!--.*?-->", re.S | re.I)
_TEMPLATE_OPEN = re.compile(r"<template\b[^>]*>", re.I)
_TEMPLATE_CLOSE = re.compile(r"</template\s*>", re.I)
_MUSTACHE = ("{{", "}}")
_EXPRESSION = re.compile(r"\{\{.*?\}\}", re.S)


class Why(StrEnum):
    NOT_FOUND = "not_found"  # made by code, or spanning child elements
    DYNAMIC = "dynamic"  # written with an expression ({{ }}) around it
    AMBIGUOUS = "ambiguous"  # written in more than one place


class TextNotEditable(ZerocodeError):
    """The text cannot be changed in place; a model turn can."""

    status = 422
    code = "text_not_editable"

    def __init__(self, message: str, why: Why) -> None:
        super().__init__(message)
        self.why = why


@dataclass(frozen=True)
class Place:
    path: str
    start: int  # the segment's span in the file's text
    end: int
    line: int


@dataclass(frozen=True)
class TextEdit:
    path: str
    data: bytes  # the whole file with the one segment replaced
    line: int
    old: str
    new: str


def squash(text: str) -> str:
    return " ".join(text.split())


def check_new_text(new: str, *, vue: bool) -> str:
    """The new text, or InvalidInput: one line of visible text, bounded."""
    if not isinstance(new, str) or not new.strip():
        raise InvalidInput("newText is empty; to remove an element, ask the model")
    if any(ord(c) < 32 for c in new):
        raise InvalidInput("newText must be one line of text (no line break or tab)")
    new = check_text(new, field="newText", max_chars=MAX_NEW_TEXT)
    if vue and any(m in new for m in _MUSTACHE):
        raise InvalidInput(
            "newText contains {{ or }}, which a Vue template reads as code; ask the model"
        )
    return new


def regions(path: str, text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` that are page markup: a .vue file's outer <template>, an HTML
    file whole; nothing for any other file."""
    lower = path.lower()
    if lower.endswith(".html") or lower.endswith(".htm"):
        return [(0, len(text))]
    if lower.endswith(".vue"):
        first = _TEMPLATE_OPEN.search(text)
        closes = list(_TEMPLATE_CLOSE.finditer(text))
        if first is None or not closes:
            return []
        return [(first.start(), closes[-1].end())]
    return []


def places(files: Mapping[str, bytes], old: str, tag: str | None) -> tuple[list[Place], int]:
    """Where ``old`` is written as a segment's whole text (under a ``tag`` opening tag when
    given), and how many segments held it beside an expression."""
    want = squash(old)
    found: list[Place] = []
    dynamic = 0
    for path in sorted(files):
        try:
            text = files[path].decode("utf-8")
        except UnicodeDecodeError:
            continue
        for start, end in regions(path, text):
            part = _blank_skipped(text[start:end])
            for m in _SEGMENT.finditer(part):
                raw = m.group(2)
                if not raw.strip():
                    continue
                if any(x in raw for x in _MUSTACHE):
                    dynamic += _shows(raw, want)
                    continue
                if squash(html.unescape(raw)) != want:
                    continue
                opener = m.group(1)
                if tag and (opener.startswith("/") or opener.lower() != tag.lower()):
                    continue
                at = start + m.start(2)
                found.append(Place(path, at, at + len(raw), text.count("\n", 0, at) + 1))
    return found, dynamic


def _shows(template: str, shown: str) -> bool:
    """Whether a segment with expressions could render as ``shown`` (its literal parts in
    order, anything where an expression is)."""
    literal = _EXPRESSION.split(squash(html.unescape(template)))
    pattern = ".*?".join(re.escape(part) for part in literal)
    return re.fullmatch(pattern, shown, re.S) is not None


def _blank_skipped(text: str) -> str:
    """``text`` with scripts, styles and comments blanked out (same length, so offsets hold)."""
    return _SKIPPED.sub(lambda m: " " * len(m.group(0)), text)


def edit_text(
    files: Mapping[str, bytes], old: str, new: str, *, tag: str | None, vue: bool
) -> TextEdit:
    """The one file changed: ``old`` replaced by ``new`` where it is written; or
    TextNotEditable saying why not."""
    new = check_new_text(new, vue=vue)
    if not isinstance(old, str) or not old.strip() or len(old) > MAX_OLD_TEXT:
        raise InvalidInput("the element has no text to change (pick an element with text)")
    found, dynamic = places(files, old, tag)
    shown = squash(old)[:80]
    if not found:
        if dynamic:
            raise TextNotEditable(
                f'"{shown}" is written together with code ({{{{ … }}}}) in the source; '
                "ask the model to change it",
                Why.DYNAMIC,
            )
        raise TextNotEditable(
            f'"{shown}" is not written as one piece of text in the source (a script makes it, '
            "or it spans several elements); ask the model to change it",
            Why.NOT_FOUND,
        )
    if len(found) > 1:
        where = ", ".join(f"{p.path}:{p.line}" for p in found[:5])
        raise TextNotEditable(
            f'"{shown}" is written in {len(found)} places ({where}), so which one you meant '
            "is not clear; ask the model to change it",
            Why.AMBIGUOUS,
        )
    place = found[0]
    text = files[place.path].decode("utf-8")
    raw = text[place.start : place.end]
    lead = raw[: len(raw) - len(raw.lstrip())]
    trail = raw[len(raw.rstrip()) :]
    changed = text[: place.start] + lead + html.escape(new, quote=False) + trail
    changed += text[place.end :]
    return TextEdit(place.path, changed.encode("utf-8"), place.line, squash(old), new)
