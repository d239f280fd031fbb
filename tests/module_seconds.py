"""How long each test module takes, so ``make test`` starts the longest first (a long
module scheduled last keeps every other worker idle at the end). The figures are only an
order: stale ones cost balance, never correctness; a module not listed counts 1 s.

Refresh from a run's ``--durations=0`` output:
    .venv/bin/pytest -n 3 --dist loadgroup --durations=0 | .venv/bin/python -m tests.module_seconds
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

FILE = Path(__file__).with_name("module_seconds.json")
LINE = re.compile(r"^([\d.]+)s (?:setup|call|teardown)\s+(\S+?)::")


def load() -> dict[str, float]:
    loaded: dict[str, float] = json.loads(FILE.read_text()) if FILE.exists() else {}
    return loaded


def main() -> None:
    seconds: dict[str, float] = defaultdict(float)
    for line in sys.stdin:
        found = LINE.match(line)
        if found:
            seconds[found.group(2)] += float(found.group(1))
    kept = {m: round(s, 1) for m, s in sorted(seconds.items(), key=lambda i: -i[1]) if s >= 2}
    FILE.write_text(json.dumps(kept, indent=1) + "\n")
    print(f"{len(kept)} modules written to {FILE}")


if __name__ == "__main__":
    main()
