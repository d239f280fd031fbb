"""The model's tools as the model sees them: names, descriptions and argument schemas
(OpenAI's function format). What each does is :mod:`zerocode.engine.tools`."""

from __future__ import annotations

from typing import Any

_PATH_RULES = (
    "Paths are relative to the project root, e.g. 'src/App.vue'; absolute paths, "
    "'..', node_modules/, dist/ and .git/ are refused."
)


def _tool(
    name: str, description: str, properties: dict[str, str], required: tuple[str, ...]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    k: {"type": "string", "description": v} for k, v in properties.items()
                },
                "required": list(required),
                "additionalProperties": False,
            },
        },
    }


TOOL_DEFINITIONS: list[dict[str, Any]] = [
    _tool(
        "read_dir",
        "List the project's files with their sizes in bytes. " + _PATH_RULES,
        {"path": "Directory to list, e.g. 'src/components'; omit for the whole project."},
        (),
    ),
    _tool(
        "read_file",
        "Read one UTF-8 text file of the project. " + _PATH_RULES,
        {"path": "File to read, e.g. 'src/App.vue'."},
        ("path",),
    ),
    _tool(
        "write_file",
        "Create a file or replace its whole content. Prefer modify_file for "
        "small changes to an existing file. Build configuration is the platform's and is "
        "refused: vite.config.js, lockfiles, postcss/tailwind/babel configs, tsconfig.json, "
        ".env files; so are names starting with '.', tool configs (*.config.*) and files "
        "that are not web sources or assets. Code goes under src/. " + _PATH_RULES,
        {
            "path": "File to write, e.g. 'src/components/Hero.vue'.",
            "content": "The complete new content of the file.",
        },
        ("path", "content"),
    ),
    _tool(
        "modify_file",
        "Replace one exact piece of text in a file. 'old' must match the "
        "file's current text exactly (spaces and line breaks included) and occur exactly "
        "once; include surrounding lines to make it unique. Read the file first if unsure. "
        + _PATH_RULES,
        {
            "path": "File to change.",
            "old": "The exact text to replace; must occur exactly once; not empty.",
            "new": "The replacement text.",
        },
        ("path", "old", "new"),
    ),
    _tool(
        "delete_file",
        "Delete one file. package.json, vite.config.js, index.html and "
        "src/main.js are protected and cannot be deleted. " + _PATH_RULES,
        {"path": "File to delete."},
        ("path",),
    ),
    _tool(
        "list_assets",
        "List the user's own images (uploaded to public/assets/): each one's path, type, size "
        "in pixels and bytes, and how a page refers to it (assets/NAME, relative). Use them "
        "where the user asks; they cannot be written or deleted.",
        {},
        (),
    ),
    _tool(
        "exit", "Call when the requested change is complete; no further tool calls follow.", {}, ()
    ),
]

_CHECK_SCHEMA = {
    "type": "object",
    "properties": {
        "description": {
            "type": "string",
            "description": "What the check proves, for people (at most 200 characters).",
        },
        "steps": {
            "type": "array",
            "items": {"type": "object"},
            "description": 'At most 20 actions, in order: {"goto": "/path"}, '
            '{"click": TARGET}, {"fill": TARGET, "value": "text"}, '
            '{"press": TARGET, "key": "Enter"}, {"select": TARGET, "option": '
            '"label"}, {"wait": ms (at most 5000)}. TARGET is {"role": "button", '
            '"name": "Add"}, {"label": "…"}, {"text": "…"} or {"css": "…"}.',
        },
        "expect": {
            "type": "array",
            "items": {"type": "object"},
            "description": '1 to 10 expectations, checked after the steps: {"visible": '
            'TARGET}, {"hidden": TARGET}, {"text": TARGET, "contains"|"equals": '
            '"…"}, {"count": TARGET, "equals": n}, {"url": {"contains"|"equals": '
            '"/path"}}, {"attribute": TARGET, "name": "…", "equals"|"contains": '
            '"…"}, {"noConsoleErrors": true}.',
        },
    },
    "required": ["description", "steps", "expect"],
    "additionalProperties": False,
}

# Acceptance checks: what the request must do, run in a browser on the new preview.
CHECK_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "add_check",
            "description": "State an acceptance check for the user's request: steps a user "
            "would take in the built app and what they must see. It is kept as the app's "
            "regression suite and runs in a browser after every preview build; a failing "
            "check is shown to you to fix. Add one or a few per request that creates or "
            "changes behaviour.",
            "parameters": _CHECK_SCHEMA,
        },
    },
    _tool(
        "retire_check",
        "Stop applying an acceptance check that no longer describes what the user wants "
        "(they asked to change that behaviour). Say why; it is shown to the user.",
        {"id": "The check's id, e.g. 'c2'.", "reason": "Why it no longer applies."},
        ("id", "reason"),
    ),
]
CHECK_TOOL_NAMES = frozenset({"add_check", "retire_check"})

LIST_CHECKS = _tool(
    "list_checks",
    "List the app's acceptance checks (id, what each proves, whether it is retired) and how "
    "the newest run of them went. Reads only.",
    {},
    (),
)

# What an Ask turn offers (engine/ask.py): tools that read and change nothing.
READ_ONLY_NAMES = ("read_dir", "read_file", "list_assets", "list_checks")
READ_ONLY_TOOLS: list[dict[str, Any]] = [
    t for t in TOOL_DEFINITIONS if t["function"]["name"] in READ_ONLY_NAMES
] + [LIST_CHECKS]

SCHEMAS = {
    t["function"]["name"]: t["function"]["parameters"]
    for t in TOOL_DEFINITIONS + CHECK_TOOLS + [LIST_CHECKS]
}
