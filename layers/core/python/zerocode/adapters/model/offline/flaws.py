"""Flawed first tries, and their repairs: the offline model failing the way real models do.

Real models write code that does not build, pages that throw in the browser, and answers the
output limit cuts off; the engine shows the model the failure inside the turn (a feedback
message, engine/repair.py) and lets it try again. These scripts exercise that path without a
real model. A flaw applies to a *creation* (the first request of an app) in the html,
multi_file and vue_project prompts; the kinds are documented in :mod:`.script`.

Every flaw is a deterministic function of the request: the first answer of a turn is the
flawed one, and what follows a feedback message is decided by that message (a repair, a
continue) and by the tool results since, never by any state of the model. Once repaired, the
files are those of the unflawed creation (or, for ``import``, those plus the missing component).

The flawed mode (``flawed_seed``) picks a flaw for every creation that has no trigger of its
own, from the seed and the request text: :data:`SEEDED` weighs them so about half the
creations are flawed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from zerocode.adapters.model.offline.base import (
    Request,
    Script,
    ScriptedCall,
    args_of,
    is_creation,
    text_of,
)
from zerocode.adapters.model.offline.data_apps import is_guestbook, is_notes
from zerocode.adapters.model.offline.language import UI, Ui, count_vue, ui_for
from zerocode.adapters.model.offline.names import app_name
from zerocode.adapters.model.offline.pages import code_blocks, creation_files, creation_text
from zerocode.adapters.model.offline.vue import (
    HOME_VIEW,
    step_report,
    step_results,
    vue_project_files,
)

FLAWS = frozenset(
    {
        "none",
        "syntax",
        "import",
        "runtime",
        "cutoff",
        "cutoff-always",
        "stubborn",
        "potemkin",
        "potemkin-stubborn",
    }
)
# The flawed mode's choice for a creation: (flaw, weight in percent); half are "none". The
# potemkin flaws are left out: they fail only where acceptance checks run.
SEEDED = (("none", 50), ("syntax", 15), ("import", 10), ("runtime", 15), ("cutoff", 10))
# Triggers that leave the flawed mode's choice on (they only pace the answer).
_PACING = re.compile(r"\[\[(?:slow|pace=\d{1,5})\]\]")
_FLAW = re.compile(r"\[\[flaw=([\w-]+)\]\]")
GENERATING = frozenset({"html", "multi_file", "vue_project"})

COMPONENT = "src/components/ClickCounter.vue"
CUT_FIRST_STEP = 4  # vue cutoff: the step is cut inside the arguments of its 4th call
ALWAYS_SLICES = 6  # cutoff-always: the answer, less its end, in this many slices

# -- the flaws, as edits of the unflawed files ---------------------------------------------

_VUE_STATE = "const clicks = ref(0)\n"
_VUE_IMPORT = "import { ref } from 'vue'\n"
# the counting button's opening tag (its text is in the page's language)
_VUE_BUTTON = '<button type="button" @click="clicks++">'
_VUE_INERT = '<button type="button">'


def _vue_flaws(flaw: str, ui: Ui) -> tuple[tuple[str, str], ...]:
    """The edits making ``flaw`` in a home view written in ``ui``'s language."""
    if flaw == "syntax":  # a call left open: the SFC compiler cannot parse the script
        return ((_VUE_STATE, "const clicks = ref(0\n"),)
    if flaw == "import":  # a component that was never written: the build cannot resolve it
        return (
            (
                _VUE_IMPORT,
                _VUE_IMPORT + "import ClickCounter from '../components/ClickCounter.vue'\n",
            ),
            (f"<p>{count_vue(ui, 'clicks')}</p>", '<ClickCounter :count="clicks" />'),
        )
    if flaw == "runtime":  # builds, then throws at mount: null on a first visit
        return (
            (
                _VUE_STATE,
                "const saved = JSON.parse(localStorage.getItem('clicks'))\n"
                "const clicks = ref(saved.count)\n",
            ),
        )
    # potemkin: builds and mounts quietly, but the button has no handler: clicking does nothing
    return ((_VUE_BUTTON, _VUE_INERT),)


# The stubborn model's repairs: another syntax error each round (a write of the same content
# changes nothing, and nothing would be built again), cycling so no two in a row are equal.
STUBBORN_REPAIRS = ("const clicks = ref(0))\n", "const clicks = ref(0;\n", "const clicks = ref(0\n")
# The stubborn potemkin model's repairs: each round another button that does nothing (a
# handler that computes and drops a value, one that returns it, none), never the same twice.
POTEMKIN_REPAIRS = (
    '<button type="button" @click="clicks + 1">',
    '<button type="button" @click="() => clicks">',
    _VUE_INERT,
)


def counter_component(ui: Ui) -> str:
    """The component the import flaw's home view imports, as its repair writes it."""
    return f"""<script setup>
defineProps({{ count: {{ type: Number, required: true }} }})
</script>

<template>
  <p>{count_vue(ui, "count")}</p>
</template>
"""


COUNTER_COMPONENT = counter_component(UI["en"])

_JS_LOOKUP = "getElementById('action')"
_INLINE_SCRIPT = re.compile(r"  <script>\n.*?  </script>\n", re.DOTALL)
_JS_END = "});\n"
_JS_HANDLER = "document.getElementById('action').addEventListener('click', () => {\n"
_JS_SHOW = "getElementById('status').textContent ="
_PAGE_FLAWS: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {
    # the script's last call is never closed: a SyntaxError, so none of it runs
    "syntax": {"javascript": ((_JS_END, "}\n"),)},
    # a script file that does not exist (404): the button does nothing
    "import": {"html": (('src="script.js"', 'src="js/script.js"'),)},  # single: see below
    # an id the page does not have: getElementById gives null and the script throws at load
    "runtime": {"javascript": ((_JS_LOOKUP, "getElementById('start')"),)},
    # the handler is written but never attached: the button does nothing, and says nothing
    "potemkin": {"javascript": ((_JS_HANDLER, "function countClick() {\n"), (_JS_END, "}\n"))},
}
# The stubborn potemkin model's repairs (cycling; each differs from the one before): the count
# goes to the button's tooltip, the count is never raised, the handler is never attached.
POTEMKIN_PAGE_REPAIRS: tuple[tuple[tuple[str, str], ...], ...] = (
    ((_JS_SHOW, "getElementById('status').title ="),),
    (("clicks += 1;", "clicks + 1;"),),
    _PAGE_FLAWS["potemkin"]["javascript"],
)

VUE_FIXED = {
    "syntax": (
        f"Fixed the syntax error in {HOME_VIEW}: `ref(0` was missing its closing parenthesis, "
        "so the build could not parse the script."
    ),
    "runtime": (
        f"Fixed {HOME_VIEW}: its setup read `count` from a saved value that is null on a first "
        "visit, which threw a TypeError when the page mounted. The count now starts at 0."
    ),
    "potemkin": (
        f"Fixed {HOME_VIEW}: the counting button had no click handler, so clicking it did "
        "nothing; it now counts the clicks."
    ),
    "import": (
        f"Added {COMPONENT}: {HOME_VIEW} imports it, but it had not been written, so the build "
        "could not resolve the import."
    ),
}
PAGE_FIXED = {
    "syntax": (
        "Fixed the script: the click handler was missing its closing `)`, a syntax error that "
        "stopped the whole script."
    ),
    "import": (
        "Fixed the script: the page loaded a script file that does not exist; the script is "
        "now where the page looks for it."
    ),
    "runtime": (
        "Fixed the script: it looked the button up as `#start`, but its id is `action`, so "
        "`getElementById` returned null and the script threw when the page loaded."
    ),
    "potemkin": (
        "Fixed the script: the click handler was written but never attached to the counting "
        "button, so clicking it did nothing; it now counts the clicks."
    ),
}
POTEMKIN_CLAIM = "Fixed the counting button: it counts the clicks now."  # the stubborn's claim


def flaw_of(req: Request, seed: int | None) -> str | None:
    """The flaw this request's turn makes: its ``[[flaw=…]]`` trigger, else (flawed mode)
    the seeded choice; None for no flaw. Only creations of generated apps are flawed."""
    data_app = is_guestbook(req) or (req.kind == "vue_project" and is_notes(req))
    if req.kind not in GENERATING or not is_creation(req.earlier) or data_app:
        return None  # the flaws act on the counting page and project (data apps: none yet)
    named = [m.group(1) for t in sorted(req.triggers) if (m := _FLAW.fullmatch(t))]
    if named:
        return named[0] if named[0] in FLAWS - {"none"} else None
    if seed is None or any(not _PACING.fullmatch(t) for t in req.triggers):
        return None
    return seeded_flaw(seed, req.description)


def seeded_flaw(seed: int, text: str) -> str | None:
    """The flawed mode's choice for a creation, from the seed and the request text alone."""
    digest = hashlib.sha256(f"zerocode-flaw\0{seed}\0{text}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") % sum(w for _, w in SEEDED)
    for name, weight in SEEDED:
        if point < weight:
            return None if name == "none" else name
        point -= weight
    return None


def flawed_answer(req: Request, flaw: str) -> Script | None:
    """The answer for a turn that makes ``flaw``; None where the ordinary answer stands (the
    report after a flawed project was written, a flaw that does not apply to the prompt)."""
    if req.kind in ("html", "multi_file"):
        return _page(req, flaw, multi=req.kind == "multi_file")
    if req.kind == "vue_project":
        return _vue(req, flaw)
    return None


# -- html and multi_file -------------------------------------------------------------------


def _page(req: Request, flaw: str, *, multi: bool) -> Script:
    right = creation_text(req, creation_files(req, multi=multi), multi=multi)
    given = req.partial if right.startswith(req.partial) else ""
    if flaw == "cutoff":  # cut once, then exactly the rest
        if not req.continuing:
            return Script(right[: cut_point(right)], finish="length")
        return Script(right[len(given) or cut_point(right) :])
    if flaw == "cutoff-always":  # never completes: every answer is the next slice
        prefix, size = always_prefix(right)
        return Script(prefix[len(given) : len(given) + size], finish="length")
    if flaw == "stubborn":  # the same broken script on every repair
        files = flawed_page_files(req, "runtime", multi=multi)
        if not req.repairing:
            return Script(creation_text(req, files, multi=multi))
        return Script(f"Here is the page again.\n\n{code_blocks(files, multi=multi)}")
    if flaw == "potemkin-stubborn":  # another button that does nothing on every repair
        if not req.repairing:
            files = flawed_page_files(req, "potemkin", multi=multi)
            return Script(creation_text(req, files, multi=multi))
        edits = POTEMKIN_PAGE_REPAIRS[(req.repairs - 1) % len(POTEMKIN_PAGE_REPAIRS)]
        files = _script_edited(req, edits, multi=multi)
        return Script(f"{POTEMKIN_CLAIM}\n\n{code_blocks(files, multi=multi)}")
    if req.repairing:
        fixed = creation_files(req, multi=multi)
        return Script(f"{PAGE_FIXED[flaw]}\n\n{code_blocks(fixed, multi=multi)}")
    return Script(creation_text(req, flawed_page_files(req, flaw, multi=multi), multi=multi))


def flawed_page_files(req: Request, flaw: str, *, multi: bool) -> tuple[str, ...]:
    """The creation's files with ``flaw`` made in them (syntax, import or runtime)."""
    files = list(creation_files(req, multi=multi))
    edits = _PAGE_FLAWS[flaw]
    if multi:
        for index, lang in enumerate(("html", "css", "javascript")):
            files[index] = _edit(files[index], edits.get(lang, ()))
    elif flaw == "import":  # the inline script left out for a file that was never written
        page, found = _INLINE_SCRIPT.subn('  <script src="app.js"></script>\n', files[0], 1)
        if not found:
            raise RuntimeError("flaw edit not applicable: no inline script")
        files[0] = page
    else:
        files[0] = _edit(files[0], edits.get("javascript", ()))
    return tuple(files)


def _script_edited(
    req: Request, edits: tuple[tuple[str, str], ...], *, multi: bool
) -> tuple[str, ...]:
    """The creation's files with its script edited (script.js, or the page's inline one)."""
    files = list(creation_files(req, multi=multi))
    files[-1] = _edit(files[-1], edits)
    return tuple(files)


def cut_point(text: str) -> int:
    """Where a cut-off answer stops: mid-line, halfway through its first code block."""
    start = text.index("```") + 3
    end = text.index("\n```", start)
    return (start + end) // 2


def always_prefix(text: str) -> tuple[str, int]:
    """What a cutoff-always answer ever gives, the text up to its first code block's closing
    fence (never reached), and the size of its slices (:data:`ALWAYS_SLICES` of them)."""
    start = text.index("```") + 3
    prefix = text[: text.index("\n```", start)]
    return prefix, math.ceil(len(prefix) / ALWAYS_SLICES)


# -- vue_project ---------------------------------------------------------------------------


def _vue(req: Request, flaw: str) -> Script | None:
    title, ui = app_name(req.description), ui_for(req.description)
    right = vue_project_files(title, req.description)
    if flaw == "cutoff":
        return _vue_cutoff(req, title, right)
    if flaw not in ("syntax", "import", "runtime", "stubborn", "potemkin", "potemkin-stubborn"):
        return None  # cutoff-always is a page flaw
    stubborn = flaw in ("stubborn", "potemkin-stubborn")
    made = {"stubborn": "syntax", "potemkin-stubborn": "potemkin"}.get(flaw, flaw)
    steps = _steps(req.since)  # this round's
    if not req.repairing:
        if steps:
            return None  # the ordinary report of the (flawed) project just written
        files = {**right, HOME_VIEW: flawed_home_view(right[HOME_VIEW], made, ui)}
        return Script("Creating the Vue 3 + Vite project.\n", _writes(files))
    if not steps:  # the repair
        if flaw == "stubborn":
            broken = stubborn_home_view(right[HOME_VIEW], req.repairs)
            return Script(f"Rewriting {HOME_VIEW}.\n", _writes({HOME_VIEW: broken}))
        if flaw == "potemkin-stubborn":
            inert = POTEMKIN_REPAIRS[(req.repairs - 1) % len(POTEMKIN_REPAIRS)]
            broken = _edit(right[HOME_VIEW], ((_VUE_BUTTON, inert),))
            return Script(f"Rewriting {HOME_VIEW}.\n", _writes({HOME_VIEW: broken}))
        if flaw == "potemkin":
            fix = ScriptedCall.of("modify_file", path=HOME_VIEW, old=_VUE_INERT, new=_VUE_BUTTON)
            return Script(f"Giving the button in {HOME_VIEW} its click handler.\n", (fix,))
        if flaw == "import":
            return Script(
                f"Writing the missing component {COMPONENT}.\n",
                _writes({COMPONENT: counter_component(ui)}),
            )
        return Script(f"Fixing {HOME_VIEW}.\n", _writes({HOME_VIEW: right[HOME_VIEW]}))
    last = steps[-1]
    results = step_results(req.since, last)
    if stubborn or not results or not all(ok for _, ok, _ in results):
        return Script(step_report(req, last, results))
    return Script(VUE_FIXED[made])


def flawed_home_view(home: str, flaw: str, ui: Ui) -> str:
    return _edit(home, _vue_flaws(flaw, ui))


def stubborn_home_view(home: str, repairs: int) -> str:
    """The home view a stubborn model writes in its ``repairs``-th repair: still broken."""
    return _edit(home, ((_VUE_STATE, STUBBORN_REPAIRS[(repairs - 1) % len(STUBBORN_REPAIRS)]),))


def _vue_cutoff(req: Request, title: str, right: dict[str, str]) -> Script:
    """The first step is cut inside a call's arguments (finish_reason "length"); once its
    results are in (or the platform asks to continue), every file not yet written is
    written; then the project is reported as it stands."""
    steps = _steps(req.turn)
    if not steps and req.feedback is None:
        calls = _writes(dict(list(right.items())[:CUT_FIRST_STEP]))
        end = calls[-1]
        cut = (*calls[:-1], ScriptedCall(end.name, end.arguments[: len(end.arguments) // 2]))
        return Script("Creating the Vue 3 + Vite project.\n", cut, finish="length")
    written = written_paths(req.turn)
    missing = {p: c for p, c in right.items() if p not in written}
    if missing and len(steps) <= 1:
        return Script(
            "The previous step was cut off by the output limit; writing the files it did "
            "not write.\n",
            _writes(missing),
        )
    if missing:
        last = steps[-1]
        return Script(step_report(req, last, step_results(req.turn, last)))
    paths = ", ".join(right)
    return Script(
        f"Created **{title}**: a Vue 3 + Vite project with {len(right)} files ({paths}). It "
        "uses Vue Router with a path for each view, a home and an about page. (My first step "
        "was cut off by the output limit; the files it did not write were written in a second "
        "one.)"
    )


def written_paths(messages: list[dict[str, Any]]) -> set[str]:
    """Paths that ``write_file`` calls among ``messages`` wrote (their result is no error)."""
    paths = {
        c.get("id"): args_of(c).get("path")
        for m in _steps(messages)
        for c in m.get("tool_calls") or ()
        if c.get("function", {}).get("name") == "write_file"
    }
    return {
        path
        for m in messages
        if m.get("role") == "tool"
        and (path := paths.get(m.get("tool_call_id")))
        and not text_of(m).startswith("ERROR: ")
    }


def _steps(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in messages if m.get("role") == "assistant" and m.get("tool_calls")]


def _writes(files: dict[str, str]) -> tuple[ScriptedCall, ...]:
    return tuple(ScriptedCall.of("write_file", path=p, content=c) for p, c in files.items())


def _edit(text: str, edits: tuple[tuple[str, str], ...]) -> str:
    for old, new in edits:
        if old not in text:  # the templates changed under the flaw: fail loudly in tests
            raise RuntimeError(f"flaw edit not applicable: {json.dumps(old)}")
        text = text.replace(old, new, 1)
    return text
