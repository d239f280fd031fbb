"""The regress flaw (issue 25): a change that breaks what an earlier check asserts.

``[[flaw=regress]]`` acts on a *change* request (html, multi_file, vue_project; a creation
with it is answered as usual). The first answer of the turn makes the requested change, and
states its checks and retirements, exactly as without the trigger, and by mistake breaks
the "Try it" button that the creation's counter check ("Clicking “Try it” twice shows 2
clicks") asserts counts: html / multi_file, the click handler is no longer attached (the
function is still written, nothing throws, the console stays quiet); vue, the requested
``modify_file`` is followed in the same step by a second one dropping the button's
``@click``. The model does not know: its text reports the requested change only.

An acceptance repair feedback naming a failing counter check gets the fix, keeping the
requested change and every check (the user did not ask to change what the counter check
asserts, so it is not retired): html / multi_file, the whole answer again, with the change and
the handler attached, under a sentence saying what was fixed (a checks block only for a
stale check the feedback names, as in any repair); vue, ``modify_file`` giving the button its
``@click`` back (with ``retire_check`` for such stale checks), then a text reporting it. Any
other repair gets what it would get without the trigger, unflawed. Deterministic: everything
follows from the request, the feedback and the tool results.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from zerocode.adapters.model.offline.base import Request, Script, ScriptedCall, args_of, is_creation
from zerocode.adapters.model.offline.checks import (
    Known,
    check_calls_said,
    failing_checks,
    stale_on_repair,
)
from zerocode.adapters.model.offline.pages import page_answer
from zerocode.adapters.model.offline.vue import HOME_VIEW, read_files, step_results, vue_answer

REGRESS = "[[flaw=regress]]"
_KINDS = frozenset({"html", "multi_file", "vue_project"})

# html / multi_file: the handler of the pages' script, and what the slip leaves of it
PAGE_HANDLER = "document.getElementById('action').addEventListener('click', () => {\n"
PAGE_HANDLER_END = "});"  # a code block's body may end there, with no newline
PAGE_DETACHED = "function countClick() {\n"
PAGE_DETACHED_END = "}"
# vue: the home view's counting button, and the same button without its handler
VUE_WORKING = '<button type="button" @click="clicks++">'
VUE_INERT = '<button type="button">'
FIX_ARGS = {"path": HOME_VIEW, "old": VUE_INERT, "new": VUE_WORKING}

PAGE_REPAIRED = (
    "Fixed the script: my change also detached the click handler from the “{}” button, so "
    "clicking it did nothing; it is attached again, and the change you asked for is kept."
)
VUE_REPAIRED = (
    f"Fixed {HOME_VIEW}: my change also dropped the click handler of the “{{}}” button, so "
    "clicking it did nothing; it counts the clicks again, and the change you asked for is kept."
)


def is_regress(req: Request) -> bool:
    """Whether this request's turn makes the regress flaw: a change carrying the trigger."""
    return REGRESS in req.triggers and req.kind in _KINDS and not is_creation(req.earlier)


def regress_answer(req: Request) -> Script | None:
    """The answer of a regress turn; None where the ordinary answer stands."""
    if req.kind in ("html", "multi_file"):
        return _page(req, multi=req.kind == "multi_file")
    if req.kind == "vue_project":
        return _vue(req)
    return None


def failing_counter(req: Request) -> Known | None:
    """The counter check an acceptance repair says fails, if it names one."""
    return next((k for k in failing_checks(req) if k.kind == "counter"), None)


# -- html and multi_file -------------------------------------------------------------------


def _page(req: Request, *, multi: bool) -> Script:
    if not req.repairing:
        return page_answer(req, multi=multi, script_edit=detached)
    fixed = page_answer(req, multi=multi)  # the change made again, without the slip
    counter = failing_counter(req)
    if counter is None or "```" not in fixed.text:
        return fixed
    return replace(fixed, text=f"{PAGE_REPAIRED.format(counter.texts[0])}\n\n{fixed.text}")


def detached(script: str) -> str:
    """The script with its click handler written but no longer attached (unchanged when it
    has no such handler)."""
    at = script.find(PAGE_HANDLER)
    end = script.find(PAGE_HANDLER_END, at + len(PAGE_HANDLER)) if at >= 0 else -1
    if end < 0:
        return script
    body = script[at + len(PAGE_HANDLER) : end]
    after = script[end + len(PAGE_HANDLER_END) :]
    return script[:at] + PAGE_DETACHED + body + PAGE_DETACHED_END + after


# -- vue_project ---------------------------------------------------------------------------


def _vue(req: Request) -> Script | None:
    if req.repairing:
        return _vue_repair(req)
    ordinary = vue_answer(req)
    if [c.name for c in ordinary.calls] != ["modify_file"]:
        return ordinary  # not the step that edits
    slip = _slip(req, json.loads(ordinary.calls[0].arguments))
    return ordinary if slip is None else replace(ordinary, calls=(*ordinary.calls, slip))


def _slip(req: Request, edit: dict[str, str]) -> ScriptedCall | None:
    """The second ``modify_file`` of the step: the home view's button loses its ``@click``
    (None when the home view, as read and as the requested edit leaves it, has no such
    button, or has one the fix could not find again)."""
    home = read_files(req.since).get(HOME_VIEW)
    if home is None:
        return None
    if edit.get("path") == HOME_VIEW and home.count(edit.get("old", "")) == 1:
        home = home.replace(edit["old"], edit.get("new", ""), 1)
    if home.count(VUE_WORKING) != 1 or VUE_INERT in home:
        return None
    return ScriptedCall.of("modify_file", path=HOME_VIEW, old=VUE_WORKING, new=VUE_INERT)


def _vue_repair(req: Request) -> Script | None:
    counter = failing_counter(req)
    if counter is None:
        return None
    button = counter.texts[0]
    steps = [m for m in req.since if m.get("role") == "assistant" and m.get("tool_calls")]
    if not steps:
        retire = stale_on_repair(req) if req.check_tools else []
        calls = (
            ScriptedCall.of("modify_file", **FIX_ARGS),
            *(ScriptedCall.of("retire_check", **r) for r in retire),
        )
        said = f"Giving the “{button}” button in {HOME_VIEW} its click handler back.\n"
        return Script(said, calls)
    last = steps[-1]
    first: dict[str, Any] = (last.get("tool_calls") or [{}])[0]
    if first.get("function", {}).get("name") != "modify_file" or args_of(first) != FIX_ARGS:
        return None
    results = step_results(req.since, last)
    fix_id = str(first.get("id"))
    fix = next((r for r in results if r[0] == fix_id), None)
    if fix is not None and fix[1]:
        head = VUE_REPAIRED.format(button)
    else:
        said = fix[2] if fix is not None else "no result"
        head = (
            f"I could not give the “{button}” button its click handler back, so it still does "
            f"nothing. The tool said: {said}"
        )
    names = {str(c.get("id")): c.get("function", {}).get("name", "?") for c in last["tool_calls"]}
    others = [r for r in results if r[0] != fix_id]
    if not others:
        return Script(head)
    said_checks = check_calls_said(others, [names.get(i, "?") for i, _, _ in others])
    return Script(f"{head}\n\nAcceptance checks:\n{said_checks}")
