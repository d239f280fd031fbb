"""System prompts, shipped as package resources so every runtime (wheel, Lambda layer) has them.

Each prompt's first line is a marker comment (``<!-- zerocode:prompt=NAME -->``):
the offline scripted model tells requests apart by it, and a real model ignores it.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

NAMES = ("html", "multi_file", "vue_project", "routing", "naming", "summary", "ask")
MARKER = re.compile(r"<!--\s*zerocode:prompt=([a-z_]+)\s*-->")


@functools.cache
def load(name: str) -> str:
    """The prompt text for ``name`` (one of :data:`NAMES`); ValueError for anything else."""
    if name not in NAMES:
        raise ValueError(f"unknown prompt {name!r}; expected one of {', '.join(NAMES)}")
    return resources.files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def marker_of(text: str) -> str | None:
    """The prompt name a system message was built from, if it carries a marker."""
    found = MARKER.search(text)
    return found.group(1) if found else None


# Ask mode (engine/ask.py): the question as the transcript keeps it, said to be one, for this
# turn's model and every later one (a Build turn reads it as a question answered).
ASKED = (
    "[Ask mode: a question about the app. Answer it from the project's files; nothing may be "
    "changed in this turn.]"
)


def asked(text: str) -> str:
    """The user's message as the model sees it in Ask mode."""
    return f"{ASKED}\n\n{text}"


def asking(base: str) -> str:
    """The system prompt of an Ask turn: the app's own, with what this turn may do."""
    addendum = load("ask")
    addendum = addendum.split("\n", 1)[1] if addendum.startswith("<!--") else addendum
    return f"{base.rstrip()}\n\n{addendum}"
