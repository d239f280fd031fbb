"""The acceptance checks the offline model states (issue 25, docs/engine.md "Acceptance
checks"): what its pages and projects must do, as checks a browser replays.

The checks assert what the templates really do, in the page's language (:mod:`.language`):
the page's ``<h1>`` is the app's title; its "Try it" button ("试一试") counts clicks ("Clicked
2 times." / "已点击 2 次。" after two); in a Vue project, the "About" ("关于") link of the header
opens the about view (headed the same, at its own path). An edit states what it changed (the
heading, the button's name, a text shown) and retires the earlier checks that asserted the
text it replaced. The descriptions are English in every language: the model reads them back.

A check's kind and the texts it asserts are in its description, which the model reads back
from the window: the ``added check cN: …`` tool results (Vue), the platform's notes after a
one-shot answer (``[zerocode checks: …]`` lines ``- added cN: …``), and the final texts of
its own Vue turns, which repeat the tool results (older tool results may be elided).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from zerocode.adapters.model.offline.base import NOTE_MARK, Request, is_feedback, text_of
from zerocode.adapters.model.offline.language import Ui

ACCEPTANCE = "acceptance checks fail"  # the first line of an acceptance repair feedback
ABOUT_PATH = "/about"  # the Vue projects route by path (history mode)
STATUS = "#status"  # the pages' click count
SHOWN_AT = 70  # a text quoted in a description is cut here, with "…"
_MAX_TEXT = 300  # engine/acceptance.py's bound on a check's strings
CHECK_TOOLS = frozenset({"add_check", "retire_check"})

HEADING = "The heading reads “{}”"
COUNTER = "Clicking “{}” twice shows 2 clicks"
ABOUT = "The “{}” link opens the page headed “{}”"
SHOWN = "The page shows “{}”"
SHOWN_ABOUT = "The about page shows “{}”"
WAITING = "The heading is still there after {} ms"
_WAIT = re.compile(r"\[\[check-wait=(\d{1,4})\]\]")
_KINDS = {
    "heading": HEADING,
    "counter": COUNTER,
    "about": ABOUT,
    "shown": SHOWN,
    "shown-about": SHOWN_ABOUT,
}
_PATTERNS = {
    kind: re.compile("^" + re.escape(form).replace(r"\{\}", "(.*)") + "$")
    for kind, form in _KINDS.items()
}
_ADDED = re.compile(r"^(?:- )?added (?:check )?(c\d+): (.*?)(?: \(it runs in a browser[^)]*\))?$")
_RETIRED = re.compile(r"^(?:- )?retired (?:check )?(c\d+): ")
_FAILING = re.compile(r'^- (c\d+) "(.*?)": ')


@dataclass(frozen=True)
class Known:
    """One of the model's own checks, read back from its description."""

    id: str
    kind: str  # a key of _KINDS
    texts: tuple[str, ...]  # the texts it asserts, as quoted (cut at SHOWN_AT)


# -- the checks ------------------------------------------------------------------------------


def heading(title: str) -> dict[str, Any] | None:
    return _check(HEADING, (title,), [], [{"text": {"css": "h1"}, "equals": _plain(title)}])


def counter(button: str, ui: Ui, *, vue: bool) -> dict[str, Any] | None:
    click = {"click": {"role": "button", "name": _plain(button)}}
    shown: dict[str, Any] = (
        {"visible": {"text": ui.twice}}
        if vue  # the count's paragraph has no id in the Vue template
        else {"text": {"css": STATUS}, "equals": ui.twice}
    )
    return _check(COUNTER, (button,), [click, click], [shown, {"noConsoleErrors": True}])


def about(link: str, title: str) -> dict[str, Any] | None:
    return _check(
        ABOUT,
        (link, title),
        [{"click": {"role": "link", "name": _plain(link)}}],
        [{"text": {"css": "h1"}, "equals": _plain(title)}, {"noConsoleErrors": True}],
    )


def shown(text: str, path: str = "/") -> dict[str, Any] | None:
    form = SHOWN if path == "/" else SHOWN_ABOUT
    steps = [] if path == "/" else [{"goto": path}]
    return _check(form, (text,), steps, [{"visible": {"text": _plain(text)}}])


def creation_checks(title: str, ui: Ui, *, vue: bool) -> list[dict[str, Any]]:
    """What a new app must do: its heading, its counting button, (Vue) its about page."""
    found = [heading(title), counter(ui.button, ui, vue=vue)]
    if vue:
        found.append(about(ui.about, ui.about))
    return [c for c in found if c is not None]


def waiting_check(triggers: Iterable[str]) -> list[dict[str, Any]]:
    """``[[check-wait=N]]``: one more check, whose ``wait`` step holds the suite N ms (at most
    the schema's 5,000): for tests that act while a turn is in its checks."""
    ms = next((int(m.group(1)) for t in triggers if (m := _WAIT.fullmatch(t))), 0)
    if not 0 < ms <= 5_000:
        return []
    return [
        {
            "description": WAITING.format(ms),
            "steps": [{"wait": ms}],
            "expect": [{"visible": {"css": "h1"}}],
        }
    ]


def _check(
    form: str, texts: tuple[str, ...], steps: list[dict[str, Any]], expect: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The check, or None when a text cannot be stated (empty, too long, control characters,
    or a fence that would end the checks block)."""
    for text in texts:
        plain = _plain(text)
        if not plain or len(plain) > _MAX_TEXT or "```" in plain or any(ord(c) < 32 for c in plain):
            return None
    description = form.format(*(_cut(t) for t in texts))
    return {"description": description, "steps": steps, "expect": expect}


def _plain(text: str) -> str:
    """A text as the browser shows it (the runner normalises whitespace the same way)."""
    return " ".join(text.split())


def _cut(text: str) -> str:
    plain = _plain(text)
    return plain if len(plain) <= SHOWN_AT else plain[: SHOWN_AT - 1] + "…"


# -- an edit's checks --------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """What a change replaced, and where: ``heading`` (the page's / home view's ``<h1>``),
    ``button`` (the counting button), ``about-link`` / ``about-heading`` (Vue's about page),
    ``text`` (anything else on the home page), ``about-text`` (anything else on the about
    page)."""

    old: str
    new: str
    where: str


def edit_checks(
    known: Iterable[Known], edit: Edit, ui: Ui, *, vue: bool
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """(the checks an edit adds, the retirements of the checks it makes wrong); ``ui``: the
    texts of the page edited."""
    if _plain(edit.old) == _plain(edit.new):
        return [], []
    stale = [k for k in known if _asserts(k, edit)]
    reason = f"the user changed “{_cut(edit.old)}” to “{_cut(edit.new)}”"
    retire = [{"id": k.id, "reason": reason} for k in stale]
    about_was = next((k for k in stale if k.kind == "about"), None)
    link, title = about_was.texts if about_was is not None else (ui.about, ui.about)
    if edit.where == "heading":
        added = heading(edit.new)
    elif edit.where == "button":
        added = counter(edit.new, ui, vue=vue)
    elif edit.where == "about-link" and not title.endswith("…"):
        added = about(edit.new, title)
    elif edit.where == "about-heading" and not link.endswith("…"):
        added = about(link, edit.new)
    else:
        added = shown(edit.new, ABOUT_PATH if edit.where.startswith("about") else "/")
    return ([added] if added is not None else []), retire


def _asserts(known: Known, edit: Edit) -> bool:
    """Whether ``known`` asserts the text the edit replaced, where it replaced it."""
    old = _cut(edit.old)
    if known.kind in ("shown", "shown-about"):
        on_about = edit.where.startswith("about")
        return known.texts == (old,) and (known.kind == "shown-about") == on_about
    if known.kind == "heading":
        return edit.where == "heading" and known.texts == (old,)
    if known.kind == "counter":
        return edit.where == "button" and known.texts == (old,)
    if known.kind == "about":
        at = {"about-link": 0, "about-heading": 1}.get(edit.where)
        return at is not None and known.texts[at] == old
    return False


def stale_on_repair(req: Request) -> list[dict[str, str]]:
    """Retirements for the checks an acceptance repair says fail because they assert what the
    user asked to change (checks the window had lost when the change was made): with a
    selected element, those asserting its old text; without, the headings but the new one.
    And those the repair says the user's own edit changed: the edit stands (issue 38)."""
    edited = _edited_on_repair(req)
    new = req.quoted
    if new is None:
        return edited
    old = (req.element.get("text") or "").strip()
    stale = [
        k
        for k in failing_checks(req)
        if (_cut(old) in k.texts if old else k.kind == "heading" and k.texts != (_cut(new),))
    ]
    said = f"“{_cut(old)}”" if old else "the heading"
    reason = f"the user changed {said} to “{_cut(new)}”"
    kept = {r["id"] for r in edited}
    return edited + [{"id": k.id, "reason": reason} for k in stale if k.id not in kept]


# engine/edit_guard.py's repair_note: "The user's own edit (v5) changed what c1, c3 expected"
_EDIT_CHANGED = re.compile(
    r"The user's own edit \((v\d+)\) changed what (c\d+(?:, c\d+)*) expected"
)


def _edited_on_repair(req: Request) -> list[dict[str, str]]:
    """The checks an acceptance repair says the user's own edit changed, to retire."""
    found = _EDIT_CHANGED.search(req.feedback or "") if is_acceptance_repair(req) else None
    if found is None:
        return []
    reason = f"the user's own edit ({found.group(1)}) changed what it expected, on purpose"
    return [{"id": i, "reason": reason} for i in found.group(2).split(", ")]


# -- reading the window ------------------------------------------------------------------------


def live_checks(messages: Iterable[dict[str, Any]]) -> list[Known]:
    """The model's own checks still live, as the window tells: added, and not retired."""
    added: dict[str, str] = {}
    retired: set[str] = set()
    for message in messages:
        role, text = message.get("role"), text_of(message)
        if not (role in ("tool", "assistant") or (role == "user" and is_note(text))):
            continue
        for line in text.splitlines():
            if found := _ADDED.match(line):
                added.setdefault(found.group(1), found.group(2))
            elif found := _RETIRED.match(line):
                retired.add(found.group(1))
    return [k for i, d in added.items() if i not in retired and (k := known(i, d)) is not None]


def failing_checks(req: Request) -> list[Known]:
    """The model's own checks an acceptance repair says fail."""
    if not is_acceptance_repair(req) or req.feedback is None:
        return []
    found = (_FAILING.match(line) for line in req.feedback.splitlines())
    return [k for m in found if m and (k := known(m.group(1), m.group(2))) is not None]


def known(check_id: str, description: str) -> Known | None:
    for kind, pattern in _PATTERNS.items():
        if found := pattern.match(description):
            return Known(check_id, kind, found.groups())
    return None


def is_note(text: str) -> bool:
    """A platform note: a user message of the platform's that is not feedback in a turn."""
    return text.startswith(NOTE_MARK) and not is_feedback(text)


def is_acceptance_repair(req: Request) -> bool:
    return req.repairing and ACCEPTANCE in (req.feedback or "").split("\n", 1)[0]


# -- saying them ---------------------------------------------------------------------------------


def checks_block(add: list[dict[str, Any]], retire: list[dict[str, str]]) -> str:
    """A one-shot answer's ```checks block, one check per line ("" when there is nothing)."""
    if not add and not retire:
        return ""
    parts = []
    for key, items in (("add", add), ("retire", retire)):
        if items:
            lines = ",\n".join("  " + json.dumps(i, ensure_ascii=False) for i in items)
            parts.append(f'"{key}": [\n{lines}\n]')
    return "```checks\n{" + ", ".join(parts) + "}\n```"


def check_calls_said(results: list[tuple[str, bool, str]], names: list[str]) -> str:
    """The check tools' results, as the final text repeats them (one line each)."""
    lines = []
    for (_, ok, content), name in zip(results, names, strict=False):
        if ok:
            lines.append(_ADDED_SUFFIX.sub("", content))
        else:
            lines.append(f"{name} failed: {content.removeprefix('ERROR: ')}")
    return "\n".join(lines)


_ADDED_SUFFIX = re.compile(r" \(it runs in a browser[^)]*\)$")
