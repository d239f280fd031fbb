"""docs/benchmarks.md is written by the benchmarks: each owns one marked section."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

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


def run(
    doc: str,
    results: Path,
    measure: Callable[[int], dict[str, Any]],
    write_docs: Callable[[dict[str, Any]], None],
    *,
    count: tuple[str, str, int, int],
) -> dict[str, Any] | None:
    """A benchmark's command line: ``count`` is (option, what it counts, quick, full).
    Measures (or, with --docs-only, rewrites the docs from the last results), keeps the JSON
    in ``results`` and the docs section; the result, or None for --docs-only."""
    option, what, quick, full = count
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument(f"--{option}", type=int, default=None, help=f"{what} ({full})")
    parser.add_argument("--quick", action="store_true", help=f"{quick} instead")
    parser.add_argument("--no-docs", action="store_true", help="leave docs/benchmarks.md")
    parser.add_argument(
        "--docs-only", action="store_true", help=f"only write the docs from {results.name}"
    )
    args = parser.parse_args()
    if args.docs_only:
        write_docs(json.loads(results.read_text()))
        return None
    result = measure(getattr(args, option) or (quick if args.quick else full))
    print(json.dumps(result, indent=2))
    results.write_text(json.dumps(result, indent=2) + "\n")
    if not args.no_docs:
        write_docs(result)
    return result
