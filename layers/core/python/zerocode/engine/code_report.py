"""What an html or multi-file answer's code blocks did, told to people (the display, M1).

These apps' answers carry whole files in fenced blocks (engine/codegen.py). The transcript
keeps each answer exactly as the model wrote it; the display shows its prose with each
block replaced by one line saying what it did to its file, counted from the file before
and after the save (:func:`zerocode.apps.versions.line_counts`)::

    `index.html`: modified, +1 −1 (diff: v3)
    `style.css`: unchanged
    `script.js`: not saved — an html app keeps all its code in index.html

The version is the one the turn made (its diff is the Versions tab's); a block that was
refused, or whose answer was cut off or failed to save, says so. A block that is not a
file's (a ```bash example, the ```checks block) is shown as written. docs/api.md,
"The display entry of an html or multi-file turn", has the format the console parses.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from zerocode.apps.versions import line_counts
from zerocode.engine.codegen import BLOCK_FILES, DATA, Block, blocks

NOT_SAVED = "not saved"
NOT_KNOWN = "not known"  # the turn ended while the save ran (a worker thread may finish it)
SINGLE_FILE = "an html app keeps all its code in index.html"
UNFINISHED = "the answer did not finish"
ENDED_SAVING = "the turn ended while the files were being saved"


@dataclass(frozen=True, kw_only=True)
class FileChange:
    """What one block (or one file without a block) did."""

    path: str
    status: str  # added | modified | unchanged | not saved | not known
    added: int = 0
    removed: int = 0
    note: str = ""

    def line(self, version: str | None) -> str:
        text = f"`{self.path}`: {self.status}"
        if self.status in ("added", "modified", "deleted"):
            text += f", +{self.added} −{self.removed}"
            if version is not None:
                text += f" (diff: {version})"
        if self.note:
            # One line, and no fence: the console's markdown would take ``` for a code block.
            text += " — " + " ".join(self.note.replace("```", "").split())
        return text


@dataclass(frozen=True, kw_only=True)
class CodeReport:
    """One answer: where it sits in the turn's streamed text (``TurnState.text[start:end]``),
    the answer itself, what each of its blocks did (None: not a file's block, shown as
    written), and the files the save changed without a block of their own (a multi-file
    answer with no css block empties style.css)."""

    start: int
    end: int
    text: str
    blocks: tuple[FileChange | None, ...]
    extra: tuple[FileChange, ...] = ()

    def shown(self, version: str | None) -> str:
        """The answer for people: its prose, each file's block as its change line."""
        lines = self.text.splitlines()
        out: list[str] = []
        at = 0
        for block, change in zip(blocks(self.text), self.blocks, strict=False):
            if change is None:
                continue
            out += lines[at : block.first]
            out.append(change.line(version))
            at = block.last + 1
        out += lines[at:]
        if self.extra:
            out += ["", *(change.line(version) for change in self.extra)]
        return "\n".join(out) + ("\n" if self.text.endswith("\n") else "")


def _targets(found: Sequence[Block], *, multi: bool) -> list[tuple[str, str] | None]:
    """Each block's file and why it was not used ("" when it was), as the parser takes them:
    the first block of each language the app keeps; None for a block that is no file's."""
    out: list[tuple[str, str] | None] = []
    seen: set[str] = set()
    for block in found:
        path = BLOCK_FILES.get(block.lang)
        if path is None:
            out.append(None)
        elif not multi and block.lang not in ("html", DATA):
            out.append((path, SINGLE_FILE))
        elif block.lang in seen:
            out.append((path, f"only the first {block.lang} block is used"))
        else:
            seen.add(block.lang)
            out.append((path, ""))
    return out


def saved(
    start: int,
    end: int,
    text: str,
    *,
    multi: bool,
    before: Mapping[str, bytes | None],
    after: Mapping[str, str],
) -> CodeReport:
    """An answer whose files were saved: ``before`` what each path held (None: nothing),
    ``after`` what was written."""
    changes = {path: _change(path, before.get(path), after[path].encode()) for path in after}
    shown: list[FileChange | None] = []
    for target in _targets(blocks(text), multi=multi):
        if target is None:
            shown.append(None)
        elif target[1]:
            shown.append(FileChange(path=target[0], status=NOT_SAVED, note=target[1]))
        else:
            shown.append(changes.pop(target[0]))
    extra = tuple(
        FileChange(
            path=c.path,
            status=c.status,
            added=c.added,
            removed=c.removed,
            note=f"the answer has no {_lang_of(c.path)} block, so it was saved empty",
        )
        for c in changes.values()
        if c.status != "unchanged"
    )
    return CodeReport(start=start, end=end, text=text, blocks=tuple(shown), extra=extra)


def not_saved(
    start: int,
    end: int,
    text: str,
    why: str,
    *,
    multi: bool,
    status: str = NOT_SAVED,
    why_of: Mapping[str, str] | None = None,
) -> CodeReport:
    """An answer none of whose files were saved (cut off, refused, a failed save), for ``why``
    (or, per file, ``why_of``); ``status`` NOT_KNOWN when the turn ended while they were
    being saved."""
    own = why_of or {}
    shown = [
        None
        if target is None
        else FileChange(path=target[0], status=status, note=own.get(target[0], why))
        for target in _targets(blocks(text), multi=multi)
    ]
    return CodeReport(start=start, end=end, text=text, blocks=tuple(shown))


def shown_text(streamed: Sequence[str], reports: Sequence[CodeReport], version: str | None) -> str:
    """The turn's streamed text with each reported answer as people see it."""
    out: list[str] = []
    at = 0
    for report in reports:
        out.append("".join(streamed[at : report.start]))
        out.append(report.shown(version))
        at = report.end
    out.append("".join(streamed[at:]))
    return "".join(out)


def _change(path: str, before: bytes | None, after: bytes) -> FileChange:
    if before is None:
        added, _ = line_counts(b"", after)
        return FileChange(path=path, status="added", added=added)
    if before == after:
        return FileChange(path=path, status="unchanged")
    added, removed = line_counts(before, after)
    return FileChange(path=path, status="modified", added=added, removed=removed)


def _lang_of(path: str) -> str:
    return next(lang for lang, file in BLOCK_FILES.items() if file == path)
