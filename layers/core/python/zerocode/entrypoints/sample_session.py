"""A deterministic Vue-style editing session, as the engine would record it.

Used by the memory demo (``zerocode demo``) and by ``bench/memory.py`` to
measure windows on realistic traffic: a first turn that writes a project, then
turns that list the files, read one or two, and modify them, sometimes failing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from zerocode.memory.messages import AssistantMessage, ToolCall, ToolResult

FILES = [
    "package.json",
    "vite.config.js",
    "index.html",
    "src/main.js",
    "src/App.vue",
    "src/router/index.js",
    "src/views/HomeView.vue",
    "src/components/TodoCard.vue",
]
COLOURS = ["teal", "crimson", "navy", "orange", "olive", "purple", "gold", "slate"]


@dataclass(frozen=True)
class Step:
    call: AssistantMessage
    results: tuple[ToolResult, ...]


@dataclass(frozen=True, kw_only=True)
class SessionTurn:
    number: int
    request: str
    steps: tuple[Step, ...]
    reply: str  # the closing assistant text
    display: str  # what the chat showed people (the old platform's only memory)


def file_body(path: str, version: int) -> str:
    """Plausible source of ``path`` after ``version`` edits: a 3–4 KB single-file component."""
    colour = COLOURS[version % len(COLOURS)]
    rows = "\n".join(
        f'      <li class="item item-{i}" @click="toggle({i})">'
        f'<input type="checkbox" :checked="items[{i}].done" /> {{{{ items[{i}].title }}}}</li>'
        for i in range(14 + len(path) % 5)
    )
    return (
        f'<!-- {path} v{version} -->\n<template>\n  <section class="panel">\n'
        f'    <h2>{{{{ heading }}}}</h2>\n    <ul class="list">\n{rows}\n    </ul>\n'
        '    <form @submit.prevent="add"><input v-model="draft" placeholder="New task" />'
        "<button>Add</button></form>\n  </section>\n</template>\n\n<script setup>\n"
        "import { ref, computed } from 'vue'\n\n"
        "const items = ref(Array.from({ length: 24 }, (_, i) => ({ title: `Task ${i}`, "
        "done: false })))\nconst draft = ref('')\n"
        "const heading = computed(() => `${items.value.filter(t => !t.done).length} open`)\n"
        "function toggle(i) { items.value[i].done = !items.value[i].done }\n"
        "function add() {\n  if (!draft.value.trim()) return\n"
        "  items.value.push({ title: draft.value.trim(), done: false })\n"
        "  draft.value = ''\n}\n"
        "</script>\n\n<style scoped>\n"
        f".panel {{ max-width: 40rem; margin: 2rem auto; color: {colour}; }}\n"
        ".list { list-style: none; padding: 0; }\n"
        ".item { margin: .25rem 0; padding: .5rem; border-bottom: 1px solid #eee; }\n"
        "form { display: flex; gap: .5rem; }\n</style>\n"
    )


def _call(turn: int, step: int, index: int, name: str, **args: str) -> ToolCall:
    return ToolCall(f"call_{turn}_{step}_{index}", name, json.dumps(args, ensure_ascii=False))


def vue_editing_session(turns: int) -> Iterator[SessionTurn]:
    versions = dict.fromkeys(FILES, 0)
    for n in range(1, turns + 1):
        if n == 1:
            steps = []
            for s, chunk in enumerate((FILES[:4], FILES[4:])):
                calls = tuple(
                    _call(n, s, i, "write_file", path=p, content=file_body(p, 0))
                    for i, p in enumerate(chunk)
                )
                steps.append(
                    Step(
                        AssistantMessage(None, calls),
                        tuple(ToolResult.success(c, "written") for c in calls),
                    )
                )
            yield SessionTurn(
                number=n,
                request="Build a todo app with Vue 3, a home view and task cards.",
                steps=tuple(steps),
                reply="Created the todo app (8 files).",
                display="✅ Created the project: package.json, vite.config.js, index.html, "
                "src/main.js, src/App.vue, router, HomeView, TodoCard.",
            )
            continue
        target = FILES[4 + n % 4]
        colour = COLOURS[n % len(COLOURS)]
        listing = _call(n, 0, 0, "read_dir", path=".")
        read = _call(n, 1, 0, "read_file", path=target)
        old, new = file_body(target, versions[target]), file_body(target, versions[target] + 1)
        fails = n % 7 == 0  # the model's old text is stale now and then
        modify = _call(
            n,
            2,
            0,
            "modify_file",
            path=target,
            old=old[:90] + ("stale" if fails else ""),
            new=new[:90],
        )
        steps = [
            Step(
                AssistantMessage(None, (listing,)), (ToolResult.success(listing, "\n".join(FILES)),)
            ),
            Step(AssistantMessage(None, (read,)), (ToolResult.success(read, old),)),
            Step(
                AssistantMessage(None, (modify,)),
                (
                    ToolResult.failure(modify, "old text not found in " + target)
                    if fails
                    else ToolResult.success(modify, "modified " + target),
                ),
            ),
        ]
        if fails:
            retry = _call(n, 3, 0, "modify_file", path=target, old=old[:90], new=new[:90])
            steps.append(
                Step(
                    AssistantMessage("The text changed; retrying.", (retry,)),
                    (ToolResult.success(retry, "modified " + target),),
                )
            )
        versions[target] += 1
        yield SessionTurn(
            number=n,
            request=f"Make the list in {target} {colour}.",
            steps=tuple(steps),
            reply=f"Made the list {colour} in {target}.",
            display=f"✅ File modified: {target} — the list is now {colour}.",
        )
