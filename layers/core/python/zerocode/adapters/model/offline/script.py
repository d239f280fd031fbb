"""A deterministic scripted model behind the real OpenAI chat-completions wire format.

It lets the whole platform run with no model endpoint (demo, tests, benchmarks):
``OfflineTransport`` answers ``POST /v1/chat/completions`` exactly as an
OpenAI-compatible server does, so the same ``openai`` client and the same
adapter code run offline and online. It is stateless: every answer follows from
the request's messages alone (the prompt marker on the system message's first
line says which request it is; the messages after the newest user message say
which step of a tool loop it is on).

The turn's *request* is the newest user message that is not the platform's feedback. Feedback
is a user message the engine sends inside a turn (engine/repair.py): one starting with
``[zerocode repair`` (the preview build failed, or the built page fails in the browser: fix
it) or ``[zerocode continue`` (the answer was cut off by the output limit: continue it). A
round that answers feedback is read as the same turn's request; without a flaw (below) a
repair gets what the request would get again (the scripted model has nothing better).

Test triggers, written anywhere in the request (they exist so the
platform's failure paths can be tested end to end):

- ``[[unknown-tool]]`` (vue) — calls a tool named ``format_disk``.
- ``[[bad-args]]`` (vue) — ``write_file`` with arguments that are not valid JSON.
- ``[[escape]]`` (vue) — ``write_file`` with the path ``../../outside.txt``.
- ``[[broken-vue]]`` (vue) — writes ``src/views/HomeView.vue`` with a template that fails the
  Vite build (in a creation: the whole project, with that one file broken).
- ``[[many-calls=N]]`` (vue) — one step of N ``write_file`` calls (``notes/nK.txt``), for the
  per-step call limit.
- ``[[surrogate]]`` (vue) — one step of two ``write_file`` calls: ``notes/ok.txt``, then a file
  whose content holds a lone surrogate (valid JSON, but no file can hold it).
- ``[[big-step]]`` (vue) — one step of 16 ``write_file`` calls of about 1.5k tokens each
  (~24k tokens), for the window's handling of an oversized step.
- ``[[stream-error]]`` (html, multi_file, vue) — the response is cut off after some text: the
  body raises ``httpx.ReadError`` before any ``finish_reason`` or ``[DONE]``.
- ``[[slow]]`` (html, multi_file, vue) — 100 text deltas paced 50 ms apart (~5 s) before the
  answer, for client-disconnect tests.
- ``[[pace=N]]`` (every request) — every chunk is paced by N milliseconds, for load benchmarks.
- ``[[usage=none]]`` (every request) — the stream carries no usage although it was asked for
  (a provider that ignores ``stream_options``): the turn counts the request itself and says
  the count is an estimate.
- ``[[check-wait=N]]`` (html, multi_file changes) — the answer's checks block adds a check
  whose ``wait`` step holds the suite N ms (≤ 5,000), for tests that act while a turn is
  in its checks (a Stop that lands after the files were written).

Flaw triggers (issue 14: a turn that repairs its own build). They act on creations only (a
change request with one is answered as usual); the first answer of the turn is flawed, a
repair feedback gets the fix, a continue feedback gets the rest (:mod:`.flaws`):

- ``[[flaw=syntax]]`` — vue: the whole project, with ``src/views/HomeView.vue``'s script
  setup left with ``ref(0`` unclosed, so ``vite build`` fails; after a repair,
  ``write_file src/views/HomeView.vue`` with the unflawed view, then a text reporting the fix.
  html / multi_file: the page's script misses its last ``)`` (a SyntaxError at load); after a
  repair, the whole unflawed answer, under a sentence saying what was fixed.
- ``[[flaw=import]]`` — vue: HomeView.vue imports (and uses) ``../components/ClickCounter.vue``,
  which is not written, so the build fails on an unresolved import; after a repair,
  ``write_file src/components/ClickCounter.vue``, then a text reporting it. html: the inline
  script is left out for ``<script src="app.js">`` (a 404); multi_file: index.html loads
  ``js/script.js`` (a 404); after a repair, the whole unflawed answer.
- ``[[flaw=runtime]]`` — vue: the project builds, but HomeView.vue's setup reads ``.count``
  of ``JSON.parse(localStorage.getItem('clicks'))``, null on a first visit: a TypeError at
  mount (Vue logs it with console.error); after a repair, the unflawed HomeView.vue, then a
  text. html / multi_file: the script looks up ``#start`` (the button is ``#action``) and
  throws at load; after a repair, the whole unflawed answer.
- ``[[flaw=cutoff]]`` — html / multi_file: the answer stops mid-line halfway through its first
  code block, with finish_reason ``length``; after a continue feedback, exactly the rest (the
  two parts joined are the unflawed answer). vue: the first step writes the first 4 files,
  the 4th call's arguments cut off mid-JSON, finish_reason ``length``; after its results
  (or a continue feedback), one step writes every file not yet written, then a text.
- ``[[flaw=cutoff-always]]`` — html / multi_file: every answer, continuations included, is a
  slice of the answer with finish_reason ``length``; the slices never reach the end of the
  first code block (past the last slice: empty answers, still ``length``).
- ``[[flaw=stubborn]]`` — vue: the syntax flaw, and every repair writes HomeView.vue with
  another syntax error (``ref(0))``, ``ref(0;``, ``ref(0``, in turn: a write of the same
  content would change nothing and build nothing), then "Wrote src/views/HomeView.vue.".
  html / multi_file: the runtime flaw (an html build cannot fail), in every answer. The turn
  fails after its repair rounds.
- ``[[flaw=potemkin]]`` (issue 25) — the app builds and loads quietly, but its "Try it" button
  does nothing (html / multi_file: the click handler is written but never attached; vue: the
  button has no ``@click``), while the creation's acceptance checks assert that it counts: the
  build and the runtime check pass, the checks fail. After a repair: html / multi_file, the
  whole unflawed answer under a sentence saying what was fixed (no checks block: they were
  stated); vue, ``modify_file`` giving the button its handler, then a text.
- ``[[flaw=potemkin-stubborn]]`` — the potemkin flaw, and every repair delivers another button
  that does nothing (each round different from the one before), claiming it was fixed: the
  turn ends with its checks failing.
- ``[[flaw=none]]`` — no flaw, even in the flawed mode.
- ``[[flaw=leaky]]`` (issue 39, a Vue notes app) — the notes' rules let anyone read, change
  and delete anyone's notes (``list`` stays ``owner``); the platform's access probe says so,
  and the repair writes ``zerocode.data.json`` with every rule ``owner`` (:mod:`.data_apps`).

An edit flaw (:mod:`.regress`) acts on change requests only:

- ``[[flaw=regress]]`` (issue 25) — the requested change is made (its checks stated, the
  replaced text's checks retired, as usual), and by mistake the "Try it" button the
  creation's counter check asserts stops counting, quietly: html / multi_file, its click
  handler is written but no longer attached; vue, a second ``modify_file`` in the change's
  step drops the button's ``@click``. An acceptance repair naming a failing counter check
  gets the fix, the change kept and the counter check not retired: html / multi_file, the
  whole answer with the change and the handler attached, under a sentence saying what was
  fixed; vue, ``modify_file`` giving the button its ``@click`` back, then a text. The trigger
  is never part of the requested text (a trigger inside the quotes is left out).

The flawed mode (``answer(..., flawed_seed=N)``; ``ZEROCODE_OFFLINE_MODEL=flawed``, seed
``ZEROCODE_OFFLINE_MODEL_SEED``) flaws creations that carry no trigger (``[[pace=N]]`` and
``[[slow]]`` aside) as a model's first try might: from the seed and the request text alone it
picks none (50 %), syntax (15 %), import (10 %), runtime (15 %) or cutoff (10 %), and repairs on
feedback as the triggers do. It is as deterministic as the scripted mode.

What it answers: routing and naming requests get a mode or a name (:mod:`.names`: what the
prompt asks for, without its request phrasing, "Pomodoro Timer", "番茄钟"); a summary request
(``summary`` marker) gets "Earlier in this conversation:" and the user text's ``Turn`` lines
(the newest 20, each cut to 160 characters), with no tool calls. A request
is a creation when no earlier assistant message is in the window (notes of
interrupted turns aside), else a change. A creation is written in the request's language
(:mod:`.language`: its ``lang`` and the texts it shows; a change keeps the page's), headed
and titled by the app's name. html / multi_file: a creation gets a
page (a guestbook, when the request asks for one: a page over the platform's data client
with its data model in a ```data block, :mod:`.data_apps`); a change gets the newest page
in the conversation with one text replaced
(the selected element's text, else the first ``<h1>``, by the first
double-quoted string of the request). vue_project: a creation gets parallel
``write_file`` calls for a whole project; a change runs read_dir → read_file →
modify_file → final text. Every final text says what the tool results say
happened, and a request it cannot act on gets a text saying nothing changed.

Pictures (issue 41): a creation whose request carries an image is made in its palette
(:mod:`.palette`: its dominant colours, the most vivid darkened to an accent that reads on
white, the lightest washed to a background, and its shape), the text saying which; a change
that asks to use an uploaded image ("use my logo") places it before the page's heading
(:mod:`.placing`), from the platform's upload note.

Acceptance checks (issue 25, :mod:`.checks`): a creation states what the app must do (its
heading, its "Try it" button counting clicks, in a Vue project its about page), a change what
it changed, retiring the earlier checks that asserted the replaced text. html / multi_file:
a ```checks block after the code blocks; vue: ``add_check`` / ``retire_check`` calls in a step
of their own after the files were written (only when the request offers those tools). A
repair round states none (they were stated in the turn's first answer); an acceptance repair
of a change retires the failing checks that assert what the user asked to change. A platform
note (``[zerocode …``, a turn of its own) as the newest message gets a short text, no code.

Ask mode (issue 43, :mod:`.questions`): a request marked as a question (engine/ask.py) is
answered from the files it reads with the read-only tools offered (read_dir, read_file of
the files a person sees, list_checks when asked about checks), whatever the app's kind,
never with a change; ``[[ask-write]]`` makes its first step try a ``write_file`` too, which
the platform refuses. An earlier question's answer does not make a later request a change.

The tool triggers act on the first step of a turn; after their results the model answers with
a text that reports those results as they are. Ids are derived from the request and
``created`` is fixed, so the same request always gives the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace
from typing import Any

from zerocode.adapters.model.offline.base import (
    Request,
    Script,
    is_creation,
    pace_of,
    parse_request,
)
from zerocode.adapters.model.offline.checks import CHECK_TOOLS
from zerocode.adapters.model.offline.flaws import flaw_of, flawed_answer
from zerocode.adapters.model.offline.names import app_name
from zerocode.adapters.model.offline.pages import page_answer
from zerocode.adapters.model.offline.palette import palette_of, recolour
from zerocode.adapters.model.offline.questions import ask_answer
from zerocode.adapters.model.offline.regress import is_regress, regress_answer
from zerocode.adapters.model.offline.vue import vue_answer


def answer(
    messages: list[dict[str, Any]],
    flawed_seed: int | None = None,
    *,
    tools: Collection[str] = (),
) -> Script:
    """What the scripted model answers to these chat messages (the transport's whole brain);
    with ``flawed_seed``, the flawed mode's answer. ``tools``: the names of the tools the
    request offers (the Vue agent states acceptance checks only when it may)."""
    offered = frozenset(tools)
    req = replace(parse_request(messages), check_tools=offered >= CHECK_TOOLS, tools=offered)
    pace = pace_of(req.text)
    generating = req.kind in ("html", "multi_file", "vue_project")
    script = Script(NOTED) if generating and req.note else _answer(req, flawed_seed)
    if generating and req.images and is_creation(req.earlier):
        script = pictured(script, req.images[0])
    return replace(
        script,
        pace=pace,
        slow=generating and "[[slow]]" in req.triggers,
        cut=generating and "[[stream-error]]" in req.triggers,
        usage="[[usage=none]]" not in req.text,
    )


NOTED = "Noted. There is nothing to change until you ask for something."


def pictured(script: Script, image: bytes) -> Script:
    """A creation made in the palette of the request's picture, saying so in its text."""
    palette = palette_of(image)
    if palette is None:
        return replace(script, text=f"I could not read your picture. {script.text}")
    calls = tuple(replace(c, arguments=recolour(c.arguments, palette)) for c in script.calls)
    text = recolour(script.text, palette)
    if text and not calls:  # the answer (a page), or a project's closing text
        text = f"{palette.said()}\n\n{text}"
    return replace(script, text=text, calls=calls)


def _answer(req: Request, flawed_seed: int | None = None) -> Script:
    if req.asking and req.kind in ("html", "multi_file", "vue_project"):
        return ask_answer(req)  # a question: read the files, answer from them (.questions)
    if is_regress(req):
        regressed = regress_answer(req)
        if regressed is not None:
            return regressed
    flaw = flaw_of(req, flawed_seed)
    if flaw is not None:
        flawed = flawed_answer(req, flaw)
        if flawed is not None:
            return flawed
    if req.kind == "routing":
        return Script(route(req.description))
    if req.kind == "naming":
        return Script(app_name(req.description))
    if req.kind in ("html", "multi_file"):
        return page_answer(req, multi=req.kind == "multi_file")
    if req.kind == "vue_project":
        return vue_answer(req)
    if req.kind == "summary":
        return Script(summary(req.raw))
    return Script(
        "The offline scripted model did not recognise this request (its system "
        "prompt has no zerocode prompt marker), so it has no answer."
    )


# ``\b`` is no boundary between a CJK character and a Latin one ("的Vue应用"), so Latin
# words are bounded by "not a Latin letter or digit" instead.
_VUE = re.compile(
    r"(?<![a-z0-9])(?:vue\d*|router|spa)(?![a-z0-9])|multi-page|(?<![a-z0-9])projects?(?![a-z0-9])"
    r"|single-page app|路由|单页应用|单页面应用|多页面应用|项目|工程"
)
_MULTI_FILE = re.compile(r"multi-file|separate css|style\.css|多文件|多页面|网站|独立的?\s*css")


def route(description: str) -> str:
    text = description.lower()
    if _VUE.search(text):
        return "vue_project"
    if _MULTI_FILE.search(text):
        return "multi_file"
    return "html"


SUMMARY_HEADING = "Earlier in this conversation:"
SUMMARY_LINES = 20  # the newest lines kept
SUMMARY_LINE_CHARS = 160


def summary(text: str) -> str:
    """The running summary: the heading, then the text's ``Turn `` lines (the newest
    ``SUMMARY_LINES``), each cut to ``SUMMARY_LINE_CHARS`` characters with "…" at a cut."""
    turns = [
        line if len(line) <= SUMMARY_LINE_CHARS else line[: SUMMARY_LINE_CHARS - 1] + "…"
        for line in text.splitlines()
        if line.startswith("Turn ")
    ]
    return "\n".join([SUMMARY_HEADING, *turns[-SUMMARY_LINES:]])
