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
