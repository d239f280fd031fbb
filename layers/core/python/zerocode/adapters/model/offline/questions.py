"""Ask mode's answers (issue 43): a question about the app, answered from the files the model
reads with the read-only tools it is offered. First ``read_dir`` (and ``list_checks`` when
the question is about the checks), then ``read_file`` of the files a person sees (or the file
the question names), then a text saying what those files hold: the page's title, headings,
buttons and links, where a quoted text appears, the checks and their newest verdicts. It
never claims a change: a question changes nothing, and its text says so.

Trigger: ``[[ask-write]]`` — the first step also calls ``write_file`` (a model that tries to
change the app anyway); the platform refuses it, and the answer says what the tool said.
"""

from __future__ import annotations

import html
import re
from typing import Any

from zerocode.adapters.model.offline.base import Request, Script, ScriptedCall
from zerocode.adapters.model.offline.vue import read_files, step_results

ASK_WRITE = "[[ask-write]]"
MAX_READS = 4  # files read for one question
_LISTED = re.compile(r"^(\S+) \((\d+) bytes\)$", re.MULTILINE)
_CHECKS_WORDS = re.compile(r"check|test|verif|检查|测试|验收", re.IGNORECASE)
_STYLE_WORDS = re.compile(r"colou?r|style|css|font|look|颜色|样式|字体", re.IGNORECASE)
_TITLE = re.compile(r"<title>(.*?)</title>", re.DOTALL | re.IGNORECASE)
_HEADING = re.compile(r"<h[1-3]\b[^>]*>(.*?)</h[1-3]>", re.DOTALL | re.IGNORECASE)
_BUTTON = re.compile(r"<button\b[^>]*>(.*?)</button>", re.DOTALL | re.IGNORECASE)
_LINK = re.compile(
    r"<(?:a|router-link|RouterLink)\b[^>]*>(.*?)</(?:a|router-link|RouterLink)>", re.DOTALL
)
_TAG = re.compile(r"<[^>]+>")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”")
NOTHING_CHANGED = (
    "Nothing was changed: this was a question. To change the app, send your request in Build mode."
)


def ask_answer(req: Request) -> Script:
    """The next step of an Ask turn, from what this turn has read so far."""
    steps = [m for m in req.since if m.get("role") == "assistant" and m.get("tool_calls")]
    if not steps:
        calls = [ScriptedCall.of("read_dir", path=".")]
        if _CHECKS_WORDS.search(req.text) and "list_checks" in req.tools:
            calls.append(ScriptedCall.of("list_checks"))
        if ASK_WRITE in req.triggers:
            calls.append(ScriptedCall.of("write_file", path="index.html", content="changed\n"))
        return Script("Let me read the project first.\n", tuple(calls))
    listing = _result_of(req.since, "read_dir")
    files = dict(_LISTED.findall(listing or ""))
    read = read_files(req.since)
    if files and not _called(req.since, "read_file"):
        paths = _to_read(req, list(files))
        return Script("", tuple(ScriptedCall.of("read_file", path=p) for p in paths))
    return Script(_answer_text(req, files, read))


def _called(since: list[dict[str, Any]], name: str) -> bool:
    return any(
        c.get("function", {}).get("name") == name
        for m in since
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or ()
    )


def _result_of(since: list[dict[str, Any]], name: str) -> str | None:
    """The content of this turn's first successful call of ``name``."""
    for m in since:
        if m.get("role") != "assistant":
            continue
        for call in m.get("tool_calls") or ():
            if call.get("function", {}).get("name") != name:
                continue
            for call_id, ok, content in step_results(since, m):
                if call_id == str(call.get("id")) and ok:
                    return content
    return None


def _refusals(since: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(tool, what the platform said) for each call of this turn that failed."""
    out = []
    for m in since:
        if m.get("role") != "assistant":
            continue
        calls = m.get("tool_calls") or ()
        names = {str(c.get("id")): c.get("function", {}).get("name", "?") for c in calls}
        for call_id, ok, content in step_results(since, m):
            if not ok:
                out.append((names.get(call_id, "?"), content.removeprefix("ERROR: ")))
    return out


def _to_read(req: Request, paths: list[str]) -> list[str]:
    """The files the question concerns: one it names, else the ones a person sees."""
    named = [p for p in paths if p in req.text]
    if named:
        return named[:MAX_READS]
    seen = [p for p in paths if p == "index.html" or p.endswith(".vue")]
    seen.sort(key=lambda p: (p != "index.html", p != "src/App.vue", p))
    if req.kind == "vue_project":
        seen = [p for p in seen if p != "index.html"]
    extra = [p for p in paths if p.endswith(".js") and p.count("/") == 0]
    if _STYLE_WORDS.search(req.text):
        extra = [p for p in paths if p.endswith(".css")] + extra
    return list(dict.fromkeys(seen + extra))[:MAX_READS]


def _answer_text(req: Request, files: dict[str, str], read: dict[str, str]) -> str:
    if not files:
        return (
            "The app has no files yet, so there is nothing to answer from. Describe the app "
            f"in Build mode to make it.\n\n{NOTHING_CHANGED}"
        )
    lines = [f"From the files I read ({', '.join(read) or 'none'}):"]
    text = "\n".join(read.values())
    title = _TITLE.search(text)
    if title and _clean(title.group(1)):
        lines.append(f"- The page's title is “{_clean(title.group(1))}”.")
    for label, pattern in (("headings", _HEADING), ("buttons", _BUTTON), ("links", _LINK)):
        found = list(dict.fromkeys(t for t in map(_clean, pattern.findall(text)) if t))
        if found:
            lines.append(f"- Its {label}: " + ", ".join(f"“{t}”" for t in found[:8]) + ".")
    names = ", ".join(list(files)[:12]) + (", …" if len(files) > 12 else "")
    lines.append(f"- The project has {len(files)} file{'s' if len(files) != 1 else ''}: {names}.")
    quoted = _QUOTED.search(req.description)
    if quoted:
        lines.append(_where(quoted.group(1) or quoted.group(2), read))
    checks = _result_of(req.since, "list_checks")
    if checks is not None:
        lines.append("The app's acceptance checks:\n" + checks)
    for tool, said in _refusals(req.since):
        lines.append(f"`{tool}` was refused: {said}")
    return "\n".join(lines) + f"\n\n{NOTHING_CHANGED}"


def _where(needle: str, read: dict[str, str]) -> str:
    """Where a quoted text appears in the files read, by file and line."""
    places = [
        f"{path} (line {n})"
        for path, content in read.items()
        for n, line in enumerate(content.splitlines(), start=1)
        if needle in line or html.escape(needle, quote=False) in line
    ]
    if not places:
        return f"- “{needle}” does not appear in the files I read."
    return f"- “{needle}” appears in " + ", ".join(places[:6]) + "."


def _clean(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())
