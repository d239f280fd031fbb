"""docs/benchmarks.md is written by the benchmarks: each owns one marked section."""

from __future__ import annotations

import re
from pathlib import Path

PATH = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
HEADER = (
    "# Benchmarks\n\nMeasured on the development machine (2 cores); re-run the scripts "
    "to refresh.\n\n"
)


def replace_section(name: str, lines: list[str]) -> None:
    """Put ``lines`` between ``<!-- name:start -->`` and ``<!-- name:end -->``."""
    section = "\n".join([f"<!-- {name}:start -->", *lines, f"<!-- {name}:end -->"])
    text = PATH.read_text() if PATH.exists() else HEADER
    marked = re.compile(rf"<!-- {name}:start -->.*<!-- {name}:end -->", re.S)
    if marked.search(text):
        text = marked.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    PATH.write_text(text)
