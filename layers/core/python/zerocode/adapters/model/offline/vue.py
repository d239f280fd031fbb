"""The vue_project answers: a whole project, or read_dir → read_file → modify_file."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from zerocode.adapters.model.offline import placing
from zerocode.adapters.model.offline.base import (
    H1,
    NEEDS_QUOTES,
    Request,
    Script,
    ScriptedCall,
    args_of,
    element_text,
    is_creation,
    page_text,
    template,
    text_of,
)
from zerocode.adapters.model.offline.checks import (
    CHECK_TOOLS,
    Edit,
    about,
    check_calls_said,
    creation_checks,
    edit_checks,
    heading,
    live_checks,
    stale_on_repair,
)
from zerocode.adapters.model.offline.data_apps import (
    is_leaky,
    is_notes,
    new_visitor_check,
    notes_check,
    notes_model,
    notes_view,
)
from zerocode.adapters.model.offline.language import UI, Ui, count_vue, ui_for, ui_of_files
from zerocode.adapters.model.offline.names import app_name
from zerocode.data.model import DATA_MODEL

VERSIONS = {"vue": "3.5.45", "vue-router": "4.5.1", "vite": "8.3.8", "@vitejs/plugin-vue": "6.0.11"}
HOME_VIEW = "src/views/HomeView.vue"
ABOUT_VIEW = "src/views/AboutView.vue"
APP_VIEW = "src/App.vue"
DEFAULT_VUE_FILES = (APP_VIEW, ABOUT_VIEW, HOME_VIEW)
BROKEN_HOME_VIEW = "<template><div><h1>broken</template>\n"
_TOOL_TRIGGERS = frozenset(
    {
        "[[unknown-tool]]",
        "[[bad-args]]",
        "[[escape]]",
        "[[broken-vue]]",
        "[[surrogate]]",
        "[[big-step]]",
    }
)
ABOUT_LINKS = frozenset(ui.about for ui in UI.values())  # the about link, in any language
_VUE_PATH = re.compile(r"(?<![\w.-])(?:\./)?((?:[\w.-]+/)*[\w.-]+\.vue)\b")


def vue_answer(req: Request) -> Script:
    steps = [m for m in req.since if m.get("role") == "assistant" and m.get("tool_calls")]
    if steps:
        return _vue_next(req, steps)
    creating = is_creation(req.earlier)
    trigger = _tool_trigger(req, creating=creating)
    if trigger is not None:
        return trigger
    if creating and req.repairing and is_leaky(req):  # the access probe said what leaks
        fixed = ScriptedCall.of("write_file", path=DATA_MODEL, content=notes_model())
        return Script(
            "Making each user's notes their own: every rule of notes is owner.\n", (fixed,)
        )
    if creating:
        files = vue_project_files(app_name(req.description), req.description)
        if is_notes(req):  # an app that keeps each user's notes (data_apps.py)
            title, lead = _vue_text(app_name(req.description)), _vue_text(req.description)
            files[HOME_VIEW] = notes_view(title, lead or title, req.description)
            files[DATA_MODEL] = notes_model(leaky=is_leaky(req))
        return Script(
            "Creating the Vue 3 + Vite project.",  # the platform parts it from what follows
            tuple(ScriptedCall.of("write_file", path=p, content=c) for p, c in files.items()),
        )
    if req.quoted is None and placing.asks_for_image(req.text):  # "use my logo"
        return Script("Let me see your images first.\n", (ScriptedCall.of("list_assets"),))
    if req.quoted is None:
        return Script(NEEDS_QUOTES)
    stale = stale_on_repair(req) if req.check_tools else []
    if stale:  # failing checks that assert what the user asked to change
        return Script(
            "Those checks assert what you asked me to change; retiring them.\n",
            tuple(ScriptedCall.of("retire_check", **r) for r in stale),
        )
    return Script("Let me look at the project first.\n", (ScriptedCall.of("read_dir", path="."),))


def _tool_trigger(req: Request, *, creating: bool) -> Script | None:
    if "[[unknown-tool]]" in req.triggers:
        return Script("", (ScriptedCall.of("format_disk", device="/dev/sda"),))
    if "[[bad-args]]" in req.triggers:
        return Script("", (ScriptedCall("write_file", '{"path": "src/x.vue", "content": '),))
    if "[[escape]]" in req.triggers:
        return Script(
            "", (ScriptedCall.of("write_file", path="../../outside.txt", content="escaped\n"),)
        )
    many = next((t for t in req.triggers if t.startswith("[[many-calls=")), None)
    if many is not None:
        count = int(many.removeprefix("[[many-calls=").removesuffix("]]") or 0)
        return Script(
            "",
            tuple(
                ScriptedCall.of("write_file", path=f"notes/n{i}.txt", content=f"note {i}\n")
                for i in range(1, count + 1)
            ),
        )
    if "[[surrogate]]" in req.triggers:
        return Script(
            "",
            (
                ScriptedCall.of("write_file", path="notes/ok.txt", content="fine\n"),
                # the escape stays in the JSON text: only the parsed value is a lone surrogate
                ScriptedCall("write_file", '{"path": "notes/bad.txt", "content": "a \\ud800 b"}'),
            ),
        )
    if "[[big-step]]" in req.triggers:
        return Script(
            "Writing a large project.\n",
            tuple(
                ScriptedCall.of(
                    "write_file",
                    path=f"src/components/Part{i}.vue",
                    content=f"<template><p>Part {i}</p></template>\n<!-- "
                    + " ".join(f"filler{i}-{j}" for j in range(375))
                    + " -->\n",
                )
                for i in range(1, 17)
            ),
        )
    if "[[broken-vue]]" in req.triggers:
        files = vue_project_files(app_name(req.description), req.description) if creating else {}
        files[HOME_VIEW] = BROKEN_HOME_VIEW
        return Script(
            "", tuple(ScriptedCall.of("write_file", path=p, content=c) for p, c in files.items())
        )
    return None


def _vue_next(req: Request, steps: list[dict[str, Any]]) -> Script:
    """The next step of a tool loop, from the calls already made and their results."""
    last = steps[-1]
    names = {c.get("function", {}).get("name") for c in last.get("tool_calls", ())}
    results = step_results(req.since, last)
    placed = placing.vue_next(req, names, results, read_files(req.since), HOME_VIEW)
    if placed is not None:
        return placed
    if names and names <= CHECK_TOOLS:
        return Script(_checks_report(req, steps))
    if len(steps) >= 4 or _triggered(req) or names - {"read_dir", "read_file"}:
        stating = _checks_step(req, last, results, names)
        return stating or Script(step_report(req, last, results))
    if any(not ok for _, ok, _ in results):
        failed = next(content for _, ok, content in results if not ok)
        return Script(f"I could not read the project ({failed}), so nothing was changed.")
    if names == {"read_dir"}:
        listed = [p for _, _, content in results for p in _vue_paths(content)]
        paths = sorted(dict.fromkeys(p for p in listed if p.startswith("src/"))) or list(
            DEFAULT_VUE_FILES
        )
        return Script("", tuple(ScriptedCall.of("read_file", path=p) for p in paths))
    return _vue_modify(req, read_files(req.since))


def _triggered(req: Request) -> bool:
    return bool(req.triggers & _TOOL_TRIGGERS) or any(
        t.startswith("[[many-calls=") for t in req.triggers
    )


def _checks_step(
    req: Request, last: dict[str, Any], results: list[tuple[str, bool, str]], names: set[str]
) -> Script | None:
    """After a creation's files or a change's edit were written: the checks of what they must
    do, and the retirement of the checks the edit made wrong (None: nothing to state)."""
    if not req.check_tools or req.repairing or _triggered(req):
        return None
    if not results or not all(ok for _, ok, _ in results):
        return None
    retire: list[dict[str, str]] = []
    if names == {"write_file"} and is_creation(req.earlier):
        title, ui = app_name(req.description), ui_for(req.description)
        add = creation_checks(title, ui, vue=True)
        if is_notes(req):  # no counting button: the notes instead
            checks = (
                heading(title),
                about(ui.about, ui.about),
                notes_check(req),
                new_visitor_check(req),
            )
            add = [c for c in checks if c is not None]
    elif names == {"modify_file"} and req.quoted is not None:
        old = _vue_target(req, read_files(req.since)) or ""
        path = args_of(last.get("tool_calls", [{}])[0]).get("path", HOME_VIEW)
        edit = Edit(old, req.quoted, _vue_where(req, path, old))
        known, ui = (
            live_checks([*req.earlier, *req.turn]),
            ui_of_files(read_files(req.since).values()),
        )
        add, retire = edit_checks(known, edit, ui, vue=True)
    else:
        return None
    calls = [ScriptedCall.of("retire_check", **r) for r in retire]
    calls += [ScriptedCall("add_check", json.dumps(c, ensure_ascii=False)) for c in add]
    if not calls:
        return None
    return Script("Adding the acceptance checks of this request.", tuple(calls))


def _vue_where(req: Request, path: str, old: str) -> str:
    """What the edited text is, for its check (see checks.Edit)."""
    tag = req.element.get("tag", "").lower() if element_text(req) is not None else "h1"
    if tag == "button":
        return "button"
    if path == ABOUT_VIEW:
        return "about-heading" if tag == "h1" else "about-text"
    if path == APP_VIEW and tag in ("a", "router-link") and old in ABOUT_LINKS:
        return "about-link"
    if path == HOME_VIEW and tag == "h1":
        return "heading"
    if path == APP_VIEW and tag in ("a", "router-link"):
        known = live_checks([*req.earlier, *req.turn])
        if any(k.kind == "about" and k.texts[0] == old for k in known):
            return "about-link"
    return "text"


def _checks_report(req: Request, steps: list[dict[str, Any]]) -> str:
    """The final answer after the checks were stated: what the step before did (the files
    written, the edit made), then what each check call did."""
    last = steps[-1]
    names = {c.get("id"): c.get("function", {}).get("name", "?") for c in last["tool_calls"]}
    results = step_results(req.since, last)
    said = check_calls_said(results, [names.get(i, "?") for i, _, _ in results])
    before = steps[:-1]  # this round's
    if before:
        head = step_report(req, before[-1], step_results(req.since, before[-1]))
    else:
        head = "The failing checks asserted what you asked me to change, so they no longer apply."
    return f"{head}\n\nAcceptance checks:\n{said}"


def _vue_modify(req: Request, files: dict[str, str]) -> Script:
    new = req.quoted or ""
    target = _vue_target(req, files)
    if target is None:
        return Script(f"I could not find a <h1> heading in {HOME_VIEW}, so nothing was changed.")
    selected = element_text(req) is not None
    path, old = _locate(
        files,
        target,
        req.element.get("tag", "") if selected else "h1",
        prefer=None if selected else HOME_VIEW,
    )
    content = files.get(path, "")
    edit_old, edit_new = old, _vue_text(new)
    if content.count(old) > 1 and content.count(f">{old}<") == 1:
        edit_old, edit_new = f">{old}<", f">{edit_new}<"  # a little context makes it unique
    return Script("", (ScriptedCall.of("modify_file", path=path, old=edit_old, new=edit_new),))


def _locate(files: dict[str, str], target: str, tag: str, prefer: str | None) -> tuple[str, str]:
    """(file, exact text) of the element: inside its tag if possible, else anywhere.

    When no file has it, the home view is named anyway: the edit then fails, honestly.
    """
    ordered = sorted(files.items(), key=lambda item: (item[0] != prefer, item[0]))
    tagged = re.fullmatch(r"[a-zA-Z][\w-]*", tag) is not None
    for needle in _needles(target):
        for path, content in ordered:
            inside = rf"<{re.escape(tag)}\b[^>]*>\s*{re.escape(needle)}\s*</{re.escape(tag)}>"
            if tagged and re.search(inside, content):
                return path, needle
    for needle in _needles(target):
        for path, content in ordered:
            if needle in content:
                return path, needle
    return HOME_VIEW, _vue_text(target)


def _vue_target(req: Request, files: dict[str, str]) -> str | None:
    """The text to replace: the selected element's, else the home view's first heading."""
    text = element_text(req)
    if text is not None:
        return text
    h1 = H1.search(files.get(HOME_VIEW, ""))
    return html.unescape(h1.group(2).strip()) if h1 else None


def step_report(req: Request, last: dict[str, Any], results: list[tuple[str, bool, str]]) -> str:
    """The final answer: exactly what the last step's results say happened."""
    calls = {c.get("id"): c for c in last.get("tool_calls", ())}
    failed = [(calls.get(i, {}), content) for i, ok, content in results if not ok]
    names = [c.get("function", {}).get("name") for c in calls.values()]
    if names and set(names) == {"modify_file"}:
        # the requested edit is the step's first call (a regress flaw's slip follows it, and
        # the model does not know it broke anything: it reports the edit it meant to make)
        first = next(iter(calls.values()))
        args = args_of(first)
        old = _vue_target(req, read_files(req.since)) or args.get("old", "")
        said = [content for i, ok, content in results if not ok and i == str(first.get("id"))]
        if said:
            return (
                f"I could not find “{old}” in {args.get('path', HOME_VIEW)}, so nothing was "
                f"changed. The tool said: {said[0]}"
            )
        return f"Changed “{old}” to “{req.quoted or args.get('new', '')}” in {args.get('path')}."
    if failed:
        lines = "\n".join(
            f"- `{c.get('function', {}).get('name', '?')}`: {content}" for c, content in failed
        )
        done = len(results) - len(failed)
        return (
            f"{len(failed)} of {len(results)} tool calls failed, {done} succeeded; the failed "
            f"ones changed nothing:\n{lines}"
        )
    if all(n == "write_file" for n in names):
        paths = ", ".join(args_of(c).get("path", "?") for c in calls.values())
        if len(calls) == 1:
            return f"Wrote {paths}."
        return (
            f"Created **{app_name(req.description)}**: a Vue 3 + Vite project with "
            f"{len(calls)} files ({paths}). It uses Vue Router with a path for each view, a home "
            "and an about page."
        )
    return "Done: " + "; ".join(content[:200] for _, _, content in results)


def step_results(since: list[dict[str, Any]], call: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(call id, ok, content) for each answered call of one assistant message."""
    ids = [c.get("id") for c in call.get("tool_calls", ())]
    out = []
    for m in since:
        if m.get("role") == "tool" and m.get("tool_call_id") in ids:
            content = text_of(m)
            out.append((str(m.get("tool_call_id")), not content.startswith("ERROR: "), content))
    return out


def read_files(since: list[dict[str, Any]]) -> dict[str, str]:
    """path → content of every successful read_file in this turn."""
    paths = {
        c.get("id"): args_of(c).get("path", "")
        for m in since
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or ()
        if c.get("function", {}).get("name") == "read_file"
    }
    return {
        paths[m["tool_call_id"]]: text_of(m)
        for m in since
        if m.get("role") == "tool"
        and m.get("tool_call_id") in paths
        and not text_of(m).startswith("ERROR: ")
    }


def _vue_paths(listing: str) -> list[str]:
    return [p for p in _VUE_PATH.findall(listing) if ".." not in p.split("/")]


def _needles(text: str) -> list[str]:
    return list(dict.fromkeys((_vue_text(text), html.escape(text, quote=False), text)))


def _vue_text(text: str) -> str:
    """Text as it must appear in a Vue template (no markup, no mustaches)."""
    return (
        html.escape(text, quote=False).replace("{{", "&#123;&#123;").replace("}}", "&#125;&#125;")
    )


def vue_project_files(title: str, description: str) -> dict[str, str]:
    """Every file of a new Vue 3 + Vite + Vue Router (history mode) project, pinned versions, in
    the description's language."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:50] or "zerocode-app"
    ui = ui_for(description)
    t, d = _vue_text(title), _vue_text(description or title)
    package = {
        "name": slug,
        "private": True,
        "version": "0.0.0",
        "type": "module",
        "scripts": {"dev": "vite", "build": "vite build", "preview": "vite preview"},
        "dependencies": {k: VERSIONS[k] for k in ("vue", "vue-router")},
        "devDependencies": {k: VERSIONS[k] for k in ("vite", "@vitejs/plugin-vue")},
    }
    texts = _vue_texts(ui) | {"TITLE": t, "DESCRIPTION": d, "ABOUT_LEAD": ui.about_text.format(d)}
    return {
        "package.json": json.dumps(package, indent=2) + "\n",
        "index.html": _fill("vue/index.html", {"LANG": ui.lang, "TITLE": page_text(title)}),
        "src/main.js": template("vue/main.js"),
        "src/App.vue": _fill("vue/App.vue", texts),
        "src/router/index.js": template("vue/router.js"),
        HOME_VIEW: _fill("vue/HomeView.vue", texts),
        "src/views/AboutView.vue": _fill("vue/AboutView.vue", texts),
    }


def _vue_texts(ui: Ui) -> dict[str, str]:
    """The template words of a language's texts (constants: nothing to escape)."""
    return {
        "BUTTON_TEXT": ui.button,
        "COUNT_TEXT": count_vue(ui, "clicks"),
        "HOME_TEXT": ui.home,
        "ABOUT_TEXT": ui.about,
    }


_WORDS = re.compile(
    r"\b(?:LANG|TITLE|DESCRIPTION|BUTTON_TEXT|COUNT_TEXT|HOME_TEXT|ABOUT_TEXT|ABOUT_LEAD)\b"
)


def _fill(name: str, values: dict[str, str]) -> str:
    """A template with its upper-case words replaced, in one pass (a value that holds such a
    word is left as it is)."""
    return _WORDS.sub(lambda found: values.get(found.group(0), found.group(0)), template(name))
