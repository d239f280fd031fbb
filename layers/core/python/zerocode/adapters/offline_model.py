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
- ``[[stream-error]]`` (html, multi_file, vue) — the response is cut off after some text: the
  body raises ``httpx.ReadError`` before any ``finish_reason`` or ``[DONE]``.
- ``[[slow]]`` (html, multi_file, vue) — 100 text deltas paced 50 ms apart (~5 s) before the
  answer, for client-disconnect tests.
- ``[[pace=N]]`` (every request) — every chunk is paced by N milliseconds, for load benchmarks.

What it answers: routing and naming requests get a mode or a name. A request
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

import ast
import asyncio
import hashlib
import html
import json
import math
import re
import textwrap
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from zerocode.engine.prompts import marker_of
from zerocode.memory.messages import from_openai_list
from zerocode.memory.tokens import REPLY_PRIMING, count_tokens, message_tokens

OFFLINE_MODEL = "zerocode-offline"
CREATED = 1_700_000_000  # a fixed timestamp keeps the output byte-for-byte reproducible
SLOW_DELTAS, SLOW_SECONDS = 100, 0.05
ARGUMENT_PIECE = 48  # characters of tool-call arguments per chunk
WORDS_PER_DELTA = 4

VERSIONS = {"vue": "3.5.45", "vue-router": "4.5.1", "vite": "8.3.8",
            "@vitejs/plugin-vue": "6.0.11"}
HOME_VIEW = "src/views/HomeView.vue"
DEFAULT_VUE_FILES = ("src/App.vue", "src/views/AboutView.vue", HOME_VIEW)
BROKEN_HOME_VIEW = "<template><div><h1>broken</template>\n"

_TRIGGER = re.compile(r"\[\[[^\]\n]*\]\]")
_PACE = re.compile(r"\[\[pace=(\d{1,5})\]\]")
_QUOTED = re.compile(r"\"([^\"\n]+)\"|“([^”\n]+)”")
_FIELD = re.compile(r"(\w+): ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_FENCE = re.compile(r"```([\w+-]*)[^\n]*\n(.*?)\n?```", re.DOTALL)
_H1 = re.compile(r"<h1(\b[^>]*)>(.*?)</h1>", re.DOTALL)
_VUE_PATH = re.compile(r"(?<![\w.-])(?:\./)?((?:[\w.-]+/)*[\w.-]+\.vue)\b")
_STOPWORD_TEXT = """
a an the and or of for to with in on at by from into my our your me us i we you it its this that
these those is are be please make build create generate give want need would like can could
should app application website site page web simple small little basic new using use which
where has have show shows let lets just some very nice"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_SELECTED = "\n\n[Selected element]"
_INTERRUPTED = re.compile(r"\[Turn \d+ was interrupted\b")  # memory.facade.interrupted_note


class OfflineError(Exception):
    """A request the scripted model refuses, answered as an OpenAI error body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


# -- what to answer ------------------------------------------------------------------------


@dataclass(frozen=True)
class ScriptedCall:
    """One tool call; ``arguments`` is the raw JSON text (deliberately invalid for bad-args)."""

    name: str
    arguments: str

    @classmethod
    def of(cls, name: str, **args: str) -> ScriptedCall:
        return cls(name, json.dumps(args, ensure_ascii=False))


@dataclass(frozen=True)
class Script:
    """The whole answer to one request, before it is cut into wire chunks."""

    text: str = ""
    calls: tuple[ScriptedCall, ...] = ()
    pace: float = 0.0  # seconds before every chunk
    slow: bool = False  # a paced preamble of SLOW_DELTAS text deltas
    cut: bool = False  # the connection drops after the first text

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.calls else "stop"


@dataclass(frozen=True)
class Request:
    """The parts of a chat request the script reads."""

    kind: str | None  # prompt marker of the system message
    text: str  # the newest user message, without the selected-element line
    element: dict[str, str]
    earlier: list[dict[str, Any]]  # messages before the newest user message
    since: list[dict[str, Any]]  # messages after it (this turn's tool steps)
    triggers: frozenset[str] = field(default_factory=frozenset)

    @property
    def description(self) -> str:
        return " ".join(_TRIGGER.sub(" ", self.text).split())

    @property
    def quoted(self) -> str | None:
        found = _QUOTED.search(self.text)
        return (found.group(1) or found.group(2)) if found else None


def answer(messages: list[dict[str, Any]]) -> Script:
    """What the scripted model answers to these chat messages (the transport's whole brain)."""
    req = parse_request(messages)
    pace = _pace(req.text)
    generating = req.kind in ("html", "multi_file", "vue_project")
    script = _answer(req)
    return Script(script.text, script.calls, pace=pace,
                  slow=generating and "[[slow]]" in req.triggers,
                  cut=generating and "[[stream-error]]" in req.triggers)


def parse_request(messages: list[dict[str, Any]]) -> Request:
    kind = next((marker_of(_text(m)) for m in messages
                 if m.get("role") == "system" and marker_of(_text(m))), None)
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    raw = _text(messages[last_user]) if last_user >= 0 else ""
    text, _, selected = raw.partition(_SELECTED)
    element = {k: v for k, v in _fields(selected)} if selected else {}
    triggers = frozenset(_TRIGGER.findall(text))
    if last_user < 0:
        return Request(kind, "", {}, messages, [], frozenset())
    return Request(kind, text, element, messages[:last_user], messages[last_user + 1:], triggers)


def _answer(req: Request) -> Script:
    if req.kind == "routing":
        return Script(route(req.description))
    if req.kind == "naming":
        return Script(app_name(req.description))
    if req.kind in ("html", "multi_file"):
        return _page_answer(req, multi=req.kind == "multi_file")
    if req.kind == "vue_project":
        return _vue_answer(req)
    return Script("The offline scripted model did not recognise this request (its system "
                  "prompt has no zerocode prompt marker), so it has no answer.")


def route(description: str) -> str:
    text = description.lower()
    if re.search(r"\bvue|\brouter\b|multi-page|\bprojects?\b|single-page app|\bspa\b", text):
        return "vue_project"
    if re.search(r"multi-file|separate css|style\.css", text):
        return "multi_file"
    return "html"


def app_name(description: str, limit: int = 30) -> str:
    """A title-cased name from the description's main words, at most ``limit`` characters."""
    words = [w for w in re.findall(r"\w[\w'-]*", description) if w.lower() not in _STOPWORDS]
    name = ""
    for word in words:
        word = word[:1].upper() + word[1:]
        candidate = f"{name} {word}".strip()
        if len(candidate) > limit:
            break
        name = candidate
    if not name and words:
        name = words[0][:limit]
    return name or "My App"


# -- html and multi_file -------------------------------------------------------------------


def _page_answer(req: Request, *, multi: bool) -> Script:
    langs = ("html", "css", "javascript") if multi else ("html",)
    current = _latest_blocks(req.earlier, langs)
    if _is_creation(req.earlier):
        title = app_name(req.description, 40)
        files: tuple[str, ...] = _multi_page(title, req.description) if multi else (
            _single_page(title, req.description),)
        what = "a static site in three files" if multi else "a single self-contained page"
        return Script(f"Here is **{title}**, {what}.\n\n{_blocks(langs, files)}\n\n"
                      "Click the button to try the script.")
    new = req.quoted
    if new is None:
        return Script(_NEEDS_QUOTES)
    if current is None:
        return Script("I could not find the current version of the page in our conversation, "
                      "so nothing was changed.")
    old, tag = _element_text(req), req.element.get("tag", "")
    changed = _replace_in_page(current[0], old, new, tag)
    if changed is None:
        what = f"“{old}”" if old is not None else "a <h1> heading"
        return Script(f"I could not find {what} in the current page, so nothing was changed.")
    page, found = changed
    files = (page, *current[1:])
    return Script(f"Changed “{found}” to “{new}”.\n\n{_blocks(langs, files)}")


_NEEDS_QUOTES = ("Tell me the new text in double quotes, for example: change the title to "
                 "\"My Shop\". Nothing was changed.")


def _is_creation(earlier: list[dict[str, Any]]) -> bool:
    """No earlier answer in the window: a first request (or one whose turn was cut off)."""
    return not any(m.get("role") == "assistant" and not _INTERRUPTED.match(_text(m))
                   for m in earlier)


def _latest_blocks(earlier: list[dict[str, Any]], langs: tuple[str, ...]) -> tuple[str, ...] | None:
    """The code of the newest earlier assistant message that has every wanted block."""
    aliases = {"js": "javascript", "htm": "html"}
    for message in reversed(earlier):
        if message.get("role") != "assistant":
            continue
        found: dict[str, str] = {}
        for lang, body in _FENCE.findall(_text(message)):
            found.setdefault(aliases.get(lang.lower(), lang.lower()), body)
        if all(lang in found for lang in langs):
            return tuple(found[lang] for lang in langs)
    return None


def _blocks(langs: Iterable[str], files: Iterable[str]) -> str:
    return "\n\n".join(f"```{lang}\n{body.rstrip()}\n```" for lang, body in zip(langs, files,
                                                                                    strict=True))


def _element_text(req: Request) -> str | None:
    text = req.element.get("text")
    return text.strip() if text and text.strip() else None


def _replace_in_page(page: str, old: str | None, new: str, tag: str) -> tuple[str, str] | None:
    """(the page with the element's text replaced, the text replaced) or None when absent."""
    if old is None:
        h1 = _H1.search(page)
        if h1 is None:
            return None
        start, end = h1.span(2)
        return page[:start] + _page_text(new) + page[end:], html.unescape(h1.group(2).strip())
    for needle in dict.fromkeys((_page_text(old), html.escape(old), old)):
        patterns = [rf"(<{re.escape(tag)}\b[^>]*>\s*){re.escape(needle)}(\s*</{re.escape(tag)}>)"
                    ] if re.fullmatch(r"[a-zA-Z][\w-]*", tag) else []
        patterns += [rf"(>\s*){re.escape(needle)}(\s*<)", rf"(){re.escape(needle)}()"]
        for pattern in patterns:
            found = re.search(pattern, page)
            if found:
                replacement = found.group(1) + _page_text(new) + found.group(2)
                return page[:found.start()] + replacement + page[found.end():], old
    return None


def _page_text(text: str) -> str:
    """Text as element content in HTML (quotes need no escaping outside attributes)."""
    return html.escape(text, quote=False)


def _single_page(title: str, description: str) -> str:
    t, d = _page_text(title), _page_text(description or title)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{t}</title>
  <style>
{_CSS}  </style>
</head>
<body>
  <main class="card">
    <h1>{t}</h1>
    <p class="lead">{d}</p>
    <button id="action" type="button">Try it</button>
    <p id="status" aria-live="polite">Not clicked yet.</p>
  </main>
  <script>
{_JS}  </script>
</body>
</html>
"""


def _multi_page(title: str, description: str) -> tuple[str, str, str]:
    t, d = _page_text(title), _page_text(description or title)
    page = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>{t}</title>
  <link rel="stylesheet" href="style.css">
  <script src="script.js" defer></script>
</head>
<body>
  <main class="card">
    <h1>{t}</h1>
    <p class="lead">{d}</p>
    <button id="action" type="button">Try it</button>
    <p id="status" aria-live="polite">Not clicked yet.</p>
  </main>
</body>
</html>
"""
    return page, textwrap.dedent(_CSS), textwrap.dedent(_JS)


_CSS = """    body { font-family: system-ui, sans-serif; margin: 0; min-height: 100vh;
      display: grid; place-items: center; background: #f4f6fb; color: #1f2937; }
    .card { max-width: 40rem; padding: 2rem; border-radius: 1rem; background: #fff;
      box-shadow: 0 10px 30px rgba(0, 0, 0, .08); }
    h1 { margin-top: 0; color: #3b5bdb; }
    button { padding: .6rem 1.2rem; border: 0; border-radius: .5rem; background: #3b5bdb;
      color: #fff; font-size: 1rem; cursor: pointer; }
"""
_JS = """    let clicks = 0;
    document.getElementById('action').addEventListener('click', () => {
      clicks += 1;
      document.getElementById('status').textContent =
        `Clicked ${clicks} time${clicks === 1 ? '' : 's'}.`;
    });
"""


# -- vue_project -----------------------------------------------------------------------------


def _vue_answer(req: Request) -> Script:
    steps = [m for m in req.since if m.get("role") == "assistant" and m.get("tool_calls")]
    if steps:
        return _vue_next(req, steps)
    creating = _is_creation(req.earlier)
    trigger = _tool_trigger(req, creating)
    if trigger is not None:
        return trigger
    if creating:
        files = vue_project_files(app_name(req.description, 40), req.description)
        return Script("Creating the Vue 3 + Vite project.\n",
                      tuple(ScriptedCall.of("write_file", path=p, content=c)
                            for p, c in files.items()))
    if req.quoted is None:
        return Script(_NEEDS_QUOTES)
    return Script("Let me look at the project first.\n", (ScriptedCall.of("read_dir", path="."),))


def _tool_trigger(req: Request, creating: bool) -> Script | None:
    if "[[unknown-tool]]" in req.triggers:
        return Script("", (ScriptedCall.of("format_disk", device="/dev/sda"),))
    if "[[bad-args]]" in req.triggers:
        return Script("", (ScriptedCall("write_file", '{"path": "src/x.vue", "content": '),))
    if "[[escape]]" in req.triggers:
        return Script("", (ScriptedCall.of("write_file", path="../../outside.txt",
                                           content="escaped\n"),))
    if "[[broken-vue]]" in req.triggers:
        files = vue_project_files(app_name(req.description, 40), req.description) \
            if creating else {}
        files[HOME_VIEW] = BROKEN_HOME_VIEW
        return Script("", tuple(ScriptedCall.of("write_file", path=p, content=c)
                                for p, c in files.items()))
    return None


def _vue_next(req: Request, steps: list[dict[str, Any]]) -> Script:
    """The next step of a tool loop, from the calls already made and their results."""
    last = steps[-1]
    names = {c.get("function", {}).get("name") for c in last.get("tool_calls", ())}
    results = _results(req.since, last)
    if len(steps) >= 4 or req.triggers & {"[[unknown-tool]]", "[[bad-args]]", "[[escape]]",
                                          "[[broken-vue]]"} or names - {"read_dir", "read_file"}:
        return Script(_report(req, last, results))
    if any(not ok for _, ok, _ in results):
        failed = next(content for _, ok, content in results if not ok)
        return Script(f"I could not read the project ({failed}), so nothing was changed.")
    if names == {"read_dir"}:
        listed = [p for _, _, content in results for p in _vue_paths(content)]
        paths = sorted(dict.fromkeys(p for p in listed if p.startswith("src/"))) \
            or list(DEFAULT_VUE_FILES)
        return Script("", tuple(ScriptedCall.of("read_file", path=p) for p in paths))
    return _vue_modify(req, _read_files(req.since))


def _vue_modify(req: Request, files: dict[str, str]) -> Script:
    new = req.quoted or ""
    target = _vue_target(req, files)
    if target is None:
        return Script(f"I could not find a <h1> heading in {HOME_VIEW}, so nothing was changed.")
    selected = _element_text(req) is not None
    path, old = _locate(files, target, req.element.get("tag", "") if selected else "h1",
                        prefer=None if selected else HOME_VIEW)
    content = files.get(path, "")
    edit_old, edit_new = old, _vue_text(new)
    if content.count(old) > 1 and content.count(f">{old}<") == 1:
        edit_old, edit_new = f">{old}<", f">{edit_new}<"  # a little context makes it unique
    return Script("", (ScriptedCall.of("modify_file", path=path, old=edit_old, new=edit_new),))


def _locate(files: dict[str, str], target: str, tag: str,
            prefer: str | None) -> tuple[str, str]:
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
    text = _element_text(req)
    if text is not None:
        return text
    h1 = _H1.search(files.get(HOME_VIEW, ""))
    return html.unescape(h1.group(2).strip()) if h1 else None


def _report(req: Request, last: dict[str, Any], results: list[tuple[str, bool, str]]) -> str:
    """The final answer: exactly what the last step's results say happened."""
    calls = {c.get("id"): c for c in last.get("tool_calls", ())}
    failed = [(calls.get(i, {}), content) for i, ok, content in results if not ok]
    names = [c.get("function", {}).get("name") for c in calls.values()]
    if names == ["modify_file"]:
        args = _args(next(iter(calls.values())))
        old = _vue_target(req, _read_files(req.since)) or args.get("old", "")
        if failed:
            return (f"I could not find “{old}” in {args.get('path', HOME_VIEW)}, so nothing was "
                    f"changed. The tool said: {failed[0][1]}")
        return f"Changed “{old}” to “{req.quoted or args.get('new', '')}” in {args.get('path')}."
    if failed:
        lines = "\n".join(f"- `{c.get('function', {}).get('name', '?')}`: {content}"
                          for c, content in failed)
        done = len(results) - len(failed)
        return (f"{len(failed)} of {len(results)} tool calls failed, {done} succeeded; the failed "
                f"ones changed nothing:\n{lines}")
    if all(n == "write_file" for n in names):
        paths = ", ".join(_args(c).get("path", "?") for c in calls.values())
        if len(calls) == 1:
            return f"Wrote {paths}."
        return (f"Created **{app_name(req.description, 40)}**: a Vue 3 + Vite project with "
                f"{len(calls)} files ({paths}). It uses Vue Router in hash mode with a home "
                "and an about page.")
    return "Done: " + "; ".join(content[:200] for _, _, content in results)


def _results(since: list[dict[str, Any]], call: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(call id, ok, content) for each answered call of one assistant message."""
    ids = [c.get("id") for c in call.get("tool_calls", ())]
    out = []
    for m in since:
        if m.get("role") == "tool" and m.get("tool_call_id") in ids:
            content = _text(m)
            out.append((str(m.get("tool_call_id")), not content.startswith("ERROR: "), content))
    return out


def _read_files(since: list[dict[str, Any]]) -> dict[str, str]:
    """path → content of every successful read_file in this turn."""
    paths = {c.get("id"): _args(c).get("path", "") for m in since if m.get("role") == "assistant"
             for c in m.get("tool_calls") or () if c.get("function", {}).get("name") == "read_file"}
    return {paths[m["tool_call_id"]]: _text(m) for m in since
            if m.get("role") == "tool" and m.get("tool_call_id") in paths
            and not _text(m).startswith("ERROR: ")}


def _vue_paths(listing: str) -> list[str]:
    return [p for p in _VUE_PATH.findall(listing) if ".." not in p.split("/")]


def _needles(text: str) -> list[str]:
    return list(dict.fromkeys((_vue_text(text), html.escape(text, quote=False), text)))


def _vue_text(text: str) -> str:
    """Text as it must appear in a Vue template (no markup, no mustaches)."""
    return html.escape(text, quote=False).replace("{{", "&#123;&#123;").replace("}}",
                                                                               "&#125;&#125;")


def vue_project_files(title: str, description: str) -> dict[str, str]:
    """Every file of a new Vue 3 + Vite + Vue Router (hash mode) project, pinned versions."""
    slug = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:50] or "zerocode-app"
    t, d = _vue_text(title), _vue_text(description or title)
    package = {"name": slug, "private": True, "version": "0.0.0", "type": "module",
               "scripts": {"dev": "vite", "build": "vite build", "preview": "vite preview"},
               "dependencies": {k: VERSIONS[k] for k in ("vue", "vue-router")},
               "devDependencies": {k: VERSIONS[k] for k in ("vite", "@vitejs/plugin-vue")}}
    return {
        "package.json": json.dumps(package, indent=2) + "\n",
        "index.html": _VUE_INDEX.replace("TITLE", _page_text(title)),
        "src/main.js": _MAIN_JS,
        "src/App.vue": _APP_VUE.replace("TITLE", t),
        "src/router/index.js": _ROUTER_JS,
        HOME_VIEW: _HOME_VUE.replace("TITLE", t).replace("DESCRIPTION", d),
        "src/views/AboutView.vue": _ABOUT_VUE.replace("DESCRIPTION", d),
    }


_VUE_INDEX = """<!DOCTYPE html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1.0" />
    <title>TITLE</title>
  </head>
  <body>
    <div id="app"></div>
    <script type="module" src="/src/main.js"></script>
  </body>
</html>
"""
_MAIN_JS = """import { createApp } from 'vue'
import App from './App.vue'
import router from './router'

createApp(App).use(router).mount('#app')
"""
_APP_VUE = """<template>
  <header class="bar">
    <strong>TITLE</strong>
    <nav>
      <router-link to="/">Home</router-link>
      <router-link to="/about">About</router-link>
    </nav>
  </header>
  <main class="page">
    <router-view/>
  </main>
</template>

<style>
body { margin: 0; font-family: system-ui, sans-serif; background: #f4f6fb; color: #1f2937; }
.bar { display: flex; justify-content: space-between; align-items: center;
  padding: 1rem 2rem; background: #3b5bdb; color: #fff; }
.bar nav a { color: #fff; margin-left: 1rem; text-decoration: none; }
.bar nav a.router-link-exact-active { text-decoration: underline; }
.page { max-width: 48rem; margin: 2rem auto; padding: 0 1rem; }
</style>
"""
_ROUTER_JS = """import { createRouter, createWebHashHistory } from 'vue-router'
import HomeView from '../views/HomeView.vue'

// Hash mode: the built site is static files, with no server-side fallback for deep links.
export default createRouter({
  history: createWebHashHistory(),
  routes: [
    { path: '/', name: 'home', component: HomeView },
    { path: '/about', name: 'about', component: () => import('../views/AboutView.vue') },
  ],
})
"""
_HOME_VUE = """<script setup>
import { ref } from 'vue'

const clicks = ref(0)
</script>

<template>
  <section>
    <h1>TITLE</h1>
    <p class="lead">DESCRIPTION</p>
    <button type="button" @click="clicks++">Try it</button>
    <p>Clicked {{ clicks }} time{{ clicks === 1 ? '' : 's' }}.</p>
  </section>
</template>

<style scoped>
h1 { color: #3b5bdb; }
button { padding: .6rem 1.2rem; border: 0; border-radius: .5rem; background: #3b5bdb;
  color: #fff; font-size: 1rem; cursor: pointer; }
</style>
"""
_ABOUT_VUE = """<template>
  <section>
    <h1>About</h1>
    <p>This app was generated by zerocode from the description: “DESCRIPTION”.</p>
  </section>
</template>
"""


# -- reading requests ------------------------------------------------------------------------


def _text(message: dict[str, Any]) -> str:
    """A message's text, whether the content is a string or a list of text parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict)
                       and isinstance(p.get("text"), str))
    return ""


def _args(call: dict[str, Any]) -> dict[str, str]:
    try:
        value = json.loads(call.get("function", {}).get("arguments") or "{}")
    except ValueError:
        return {}
    return {k: v for k, v in value.items() if isinstance(v, str)} if isinstance(value, dict) \
        else {}


def _fields(line: str) -> Iterator[tuple[str, str]]:
    """``key: 'value'`` pairs of a ``[Selected element]`` line (values are Python reprs)."""
    for key, literal in _FIELD.findall(line):
        try:
            value = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, str):
            yield key, value


def _pace(text: str) -> float:
    found = _PACE.search(text)
    return int(found.group(1)) / 1000 if found else 0.0


# -- the wire format -------------------------------------------------------------------------


class OfflineTransport(httpx.AsyncBaseTransport):
    """An OpenAI-compatible endpoint in-process: ``/v1/chat/completions`` and ``/v1/models``."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path.rstrip("/")
        try:
            if request.method == "POST" and path.endswith("/chat/completions"):
                body = _request_body(await request.aread())
                return _completion_response(request, body)
            if request.method == "GET" and path.endswith("/models"):
                return httpx.Response(200, json={"object": "list", "data": [
                    {"id": OFFLINE_MODEL, "object": "model", "created": CREATED,
                     "owned_by": "zerocode"}]}, request=request)
            raise OfflineError(404, f"no route for {request.method} {request.url.path}")
        except OfflineError as exc:
            kind = "invalid_request_error" if exc.status < 500 else "server_error"
            return httpx.Response(exc.status, request=request, json={"error": {
                "message": exc.message, "type": kind, "param": None, "code": None}})


def _request_body(raw: bytes) -> dict[str, Any]:
    try:
        body = json.loads(raw)
    except ValueError as exc:
        raise OfflineError(400, "the request body is not valid JSON") from exc
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) \
            or not all(isinstance(m, dict) for m in body["messages"]) or not body["messages"]:
        raise OfflineError(400, "'messages' must be a non-empty list of message objects")
    return body


def _completion_response(request: httpx.Request, body: dict[str, Any]) -> httpx.Response:
    messages: list[dict[str, Any]] = body["messages"]
    script = answer(messages)
    model = str(body.get("model") or OFFLINE_MODEL)
    digest = hashlib.sha256(json.dumps([model, messages, body.get("tools")], sort_keys=True,
                                       ensure_ascii=False).encode()).hexdigest()
    usage = _usage(messages, body.get("tools"), script)
    headers = {"x-request-id": f"req_{digest[:24]}"}
    if not body.get("stream"):
        return httpx.Response(200, request=request, headers=headers,
                              json=_completion(script, model, digest, usage))
    options = body.get("stream_options") or {}
    chunks = stream_chunks(script, model, digest,
                           usage if isinstance(options, dict) and options.get("include_usage")
                           else None)
    return httpx.Response(200, request=request,
                          headers={**headers, "content-type": "text/event-stream; charset=utf-8",
                                   "cache-control": "no-cache"},
                          stream=_EventStream(_sse(chunks)))


def _usage(messages: list[dict[str, Any]], tools: Any, script: Script) -> dict[str, int]:
    try:
        prompt = sum(message_tokens(m) for m in from_openai_list(messages)) + REPLY_PRIMING
    except ValueError:
        prompt = count_tokens(json.dumps(messages, ensure_ascii=False))
    if tools:
        prompt += count_tokens(json.dumps(tools, ensure_ascii=False))
    completion = count_tokens(script.text) + sum(count_tokens(c.name) + count_tokens(c.arguments)
                                                 for c in script.calls)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}


def _call_id(digest: str, index: int) -> str:
    return "call_" + hashlib.sha256(f"{digest}:{index}".encode()).hexdigest()[:24]


def _completion(script: Script, model: str, digest: str,
                usage: dict[str, int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant",
                               "content": script.text or (None if script.calls else ""),
                               "refusal": None}
    if script.calls:
        message["tool_calls"] = [
            {"id": _call_id(digest, i), "type": "function",
             "function": {"name": c.name, "arguments": c.arguments}}
            for i, c in enumerate(script.calls)]
    return {"id": f"chatcmpl-{digest[:24]}", "object": "chat.completion", "created": CREATED,
            "model": model, "system_fingerprint": "fp_offline",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": script.finish_reason}],
            "usage": usage}


@dataclass(frozen=True)
class Chunk:
    """One ``chat.completion.chunk`` and the pause before it is sent."""

    data: dict[str, Any] | None  # None: the connection drops here
    delay: float = 0.0


def stream_chunks(script: Script, model: str, digest: str,
                  usage: dict[str, int] | None) -> list[Chunk]:
    """The answer as the chunks an OpenAI-compatible server streams, in order."""
    base = {"id": f"chatcmpl-{digest[:24]}", "object": "chat.completion.chunk",
            "created": CREATED, "model": model, "system_fingerprint": "fp_offline"}
    if usage is not None:
        base["usage"] = None

    def chunk(delta: dict[str, Any], finish: str | None = None,
              delay: float = script.pace) -> Chunk:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return Chunk({**base, "choices": [choice]}, delay)

    out = [chunk({"role": "assistant", "content": "", "refusal": None})]
    if script.slow:
        out += [chunk({"content": f"{i}… "}, delay=max(script.pace, SLOW_SECONDS))
                for i in range(1, SLOW_DELTAS + 1)]
    pieces = text_pieces(script.text or ("Working on it… " if script.cut else ""))
    if script.cut:
        return [*out, *(chunk({"content": p}) for p in pieces[:max(1, len(pieces) // 2)]),
                Chunk(None)]
    out += [chunk({"content": p}) for p in pieces]
    for index, call in enumerate(script.calls):
        for n, part in enumerate(argument_pieces(call.arguments)):
            fragment: dict[str, Any] = {"index": index, "function": {"arguments": part}}
            if n == 0:
                fragment = {"index": index, "id": _call_id(digest, index), "type": "function",
                            "function": {"name": call.name, "arguments": part}}
            out.append(chunk({"tool_calls": [fragment]}))
    out.append(chunk({}, script.finish_reason))
    if usage is not None:
        out.append(Chunk({**base, "choices": [], "usage": usage}, script.pace))
    return out


def text_pieces(text: str) -> list[str]:
    """Text cut into deltas of a few words (whitespace kept), as a model streams tokens."""
    words = re.findall(r"\s+|\S+\s*", text)
    if text and not words:
        words = [text]
    return ["".join(words[i:i + WORDS_PER_DELTA]) for i in range(0, len(words), WORDS_PER_DELTA)]


def argument_pieces(arguments: str) -> list[str]:
    """Tool-call arguments split into at least two fragments, as real servers send them."""
    if len(arguments) < 2:
        return [arguments, ""]
    n = max(2, math.ceil(len(arguments) / ARGUMENT_PIECE))
    size = math.ceil(len(arguments) / n)
    return [arguments[i:i + size] for i in range(0, len(arguments), size)]


async def _sse(chunks: list[Chunk]) -> AsyncIterator[bytes]:
    for item in chunks:
        if item.delay:
            await asyncio.sleep(item.delay)
        if item.data is None:
            raise httpx.ReadError("offline model: connection dropped mid-stream ([[stream-error]])")
        yield b"data: " + json.dumps(item.data, ensure_ascii=False).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


class _EventStream(httpx.AsyncByteStream):
    """An httpx response body fed piece by piece, so the client sees a real stream."""

    def __init__(self, parts: AsyncIterator[bytes]) -> None:
        self._parts = parts

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for part in self._parts:
            yield part

    async def aclose(self) -> None:
        close = getattr(self._parts, "aclose", None)
        if close is not None:
            await close()
