"""Code blocks of an ``html`` or ``multi_file`` answer, and saving them to the workspace.

A turn only reports success when real files were saved, so parsing is strict
where it matters: a missing, empty, unclosed (cut-off) or prose-only HTML
block is a :class:`CodeParseError`, never an empty page saved as "done".
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from zerocode.apps.workspace import FileMissing, Workspace, clean_path
from zerocode.data.model import DATA_MODEL, refusal
from zerocode.errors import InvalidInput


class CodeParseError(InvalidInput):
    status = 422
    code = "code_parse_error"


_LANGS = {
    "html": "html",
    "htm": "html",
    "css": "css",
    "javascript": "javascript",
    "js": "javascript",
}
# The file each code block language of an html / multi_file answer is saved as.
FILES = {"html": "index.html", "css": "style.css", "javascript": "script.js"}
# And the app's data model (zerocode/data/model.py), a ```data block of any answer: kept as
# it is when an answer has none (unlike style.css and script.js, emptied then).
DATA = "data"
BLOCK_FILES = {**FILES, DATA: DATA_MODEL}
_HTML_TAG = re.compile(
    r"<\s*(!doctype|html|head|body|main|div|section|article|header|footer|nav|h[1-6]|p|"
    r"ul|ol|table|form|button|canvas|svg|img|a|span|script|style|template)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, kw_only=True)
class Block:
    lang: str  # canonical: html, css, javascript; or the raw info string
    body: str
    closed: bool
    first: int  # the line (of text.splitlines()) of its opening fence
    last: int  # the line of its closing fence; the text's last line when unclosed


def blocks(text: str) -> list[Block]:
    """Fenced blocks in order; a fence is ``` at the start of a line (indentation allowed)."""
    out: list[Block] = []
    lang: str | None = None
    body: list[str] = []
    first = 0
    lines = text.splitlines()
    for at, line in enumerate(lines):
        stripped = line.strip()
        if lang is None:
            if stripped.startswith("```"):
                info = stripped[3:].strip().split()
                raw = info[0].lower() if info else ""
                lang, body, first = _LANGS.get(raw, raw), [], at
        elif stripped == "```":
            out.append(Block(lang=lang, body="\n".join(body), closed=True, first=first, last=at))
            lang = None
        else:
            body.append(line)
    if lang is not None:
        last = len(lines) - 1
        out.append(Block(lang=lang, body="\n".join(body), closed=False, first=first, last=last))
    return out


def checks_block(text: str) -> str | None:
    """The body of the answer's first ```checks block (acceptance checks, as JSON), if any.
    An unclosed one is returned too: its JSON then fails to parse, which is said."""
    block = next((b for b in blocks(text) if b.lang == "checks"), None)
    return None if block is None else block.body


def has_code(text: str) -> bool:
    """Whether the answer tries to deliver code (an html, css, javascript or data block)."""
    return any(b.lang in BLOCK_FILES for b in blocks(text))


def _first(found: list[Block], lang: str, *, required: bool) -> str | None:
    block = next((b for b in found if b.lang == lang), None)
    if block is None:
        if required:
            raise CodeParseError(f"the answer has no ```{lang} code block")
        return None
    if not block.closed:
        raise CodeParseError(
            f"the ```{lang} code block is not closed; the answer was probably cut off"
        )
    if not block.body.strip():
        raise CodeParseError(f"the ```{lang} code block is empty")
    return block.body.strip("\n") + "\n"


def _html(found: list[Block]) -> str:
    html = _first(found, "html", required=True)
    assert html is not None
    if not _HTML_TAG.search(html):
        raise CodeParseError("the ```html code block does not contain HTML markup")
    return html


def parse_html(text: str) -> dict[str, str]:
    """``{"index.html": ...}`` from the first ```html block, and the data model from the
    first ```data block if there is one (an answer may carry that alone)."""
    return _with_model(blocks(text), lambda found: {"index.html": _html(found)})


def parse_multi_file(text: str) -> dict[str, str]:
    """index.html, style.css and script.js from the first ```html, ```css and ```js blocks.

    HTML is required. A page may need no styles or no script, so an absent css
    or javascript block yields an empty file: the workspace then holds exactly
    this answer, with no stale file left from an earlier turn. A block that is
    present but empty or unclosed is still an error.
    """

    def page(found: list[Block]) -> dict[str, str]:
        files = {"index.html": _html(found)}
        for lang in ("css", "javascript"):
            files[FILES[lang]] = _first(found, lang, required=False) or ""
        return files

    return _with_model(blocks(text), page)


def _with_model(
    found: list[Block], page: Callable[[list[Block]], dict[str, str]]
) -> dict[str, str]:
    """The page's files, and the data model when the answer has a ```data block; the model
    alone when that is all it has (the page is then left as it is)."""
    data = _data(found)
    if data is not None and not any(b.lang in FILES for b in found):
        return {DATA_MODEL: data}
    return page(found) | ({} if data is None else {DATA_MODEL: data})


def _data(found: list[Block]) -> str | None:
    """The first ```data block's body, checked as the data model; None when there is none."""
    body = _first(found, DATA, required=False)
    if body is None:
        return None
    refused = refusal(body.encode("utf-8"))
    if refused is not None:
        raise CodeParseError(f"the ```{DATA} block: {refused}")
    return body


def save_files(
    workspace: Workspace, app_id: str, files: Mapping[str, str]
) -> dict[str, bytes | None]:
    """Write every file, or none: paths are checked first, and a failed write undoes the rest.

    Returns each workspace path written, in the order given, with what it held before (None:
    it is new), so a caller can say what the save changed.
    """
    if not files:
        raise CodeParseError("there are no files to save")
    encoded = {clean_path(path): content.encode("utf-8") for path, content in files.items()}
    previous: dict[str, bytes | None] = {}
    try:
        for path, data in encoded.items():
            try:
                previous[path] = workspace.read(app_id, path)
            except FileMissing:
                previous[path] = None
            workspace.write(app_id, path, data)
    except Exception:
        _restore(workspace, app_id, previous)
        raise
    return previous


def _restore(workspace: Workspace, app_id: str, previous: dict[str, bytes | None]) -> None:
    """Best effort: put back what was there before a save failed half-way."""
    for path, data in previous.items():
        with contextlib.suppress(Exception):  # the original error is the one to report
            if data is None:
                workspace.delete(app_id, path)
            else:
                workspace.write(app_id, path, data)
