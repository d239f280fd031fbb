"""A deterministic scripted model behind the real OpenAI chat-completions wire format.

It lets the whole platform run with no model endpoint (demo, tests, benchmarks):
``OfflineTransport`` answers ``POST /v1/chat/completions`` exactly as an
OpenAI-compatible server does, so the same ``openai`` client and the same
adapter code run offline and online. It is stateless: every answer follows from
the request's messages alone (the prompt marker on the system message's first
line says which request it is; the messages after the newest user message say
which step of a tool loop it is on).

Test triggers, written anywhere in the newest user message (they exist so the
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

What it answers: routing and naming requests get a mode or a name; a summary request
(``summary`` marker) gets "Earlier in this conversation:" and the user text's ``Turn`` lines
(the newest 20, each cut to 160 characters), with no tool calls. A request
is a creation when no earlier assistant message is in the window (notes of
interrupted turns aside), else a change. html / multi_file: a creation gets a
page; a change gets the newest page in the conversation with one text replaced
(the selected element's text, else the first ``<h1>``, by the first
double-quoted string of the request). vue_project: a creation gets parallel
``write_file`` calls for a whole project; a change runs read_dir → read_file →
modify_file → final text. Every final text says what the tool results say
happened, and a request it cannot act on gets a text saying nothing changed.

The tool triggers act on the first step of a turn; after their results the model answers with
a text that reports those results as they are. Ids are derived from the request and
``created`` is fixed, so the same request always gives the same bytes.
"""

from __future__ import annotations

import re
from typing import Any

from zerocode.adapters.model.offline.base import (
    Request,
    Script,
    app_name,
    pace_of,
    parse_request,
)
from zerocode.adapters.model.offline.pages import page_answer
from zerocode.adapters.model.offline.vue import vue_answer


def answer(messages: list[dict[str, Any]]) -> Script:
    """What the scripted model answers to these chat messages (the transport's whole brain)."""
    req = parse_request(messages)
    pace = pace_of(req.text)
    generating = req.kind in ("html", "multi_file", "vue_project")
    script = _answer(req)
    return Script(
        script.text,
        script.calls,
        pace=pace,
        slow=generating and "[[slow]]" in req.triggers,
        cut=generating and "[[stream-error]]" in req.triggers,
    )


def _answer(req: Request) -> Script:
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
