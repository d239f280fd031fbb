"""``make test``'s scheduling keeps a module's tests on one worker (tests/conftest.py): run
three small modules on two workers the way the Makefile does and read where each test ran.
xdist's own loadgroup spread them out on pytest 9.2, silently, so this checks the
outcome, not the configuration."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULES = [
    "tests/unit/http/test_headers.py",
    "tests/unit/http/test_gateway_claims.py",
    "tests/unit/memory/test_window_steps.py",
]


def test_each_module_runs_on_one_worker() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-o",
            "addopts=",
            "-v",
            "-p",
            "no:cacheprovider",
            *MODULES,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    workers: dict[str, set[str]] = defaultdict(set)
    for worker, nodeid in re.findall(r"\[(gw\d+)\] \[[ \d]+%\] PASSED (\S+)", done.stdout):
        workers[nodeid.split("::", 1)[0]].add(worker)
    assert set(workers) == set(MODULES), done.stdout[-3000:]
    assert {m: len(w) for m, w in workers.items()} == dict.fromkeys(MODULES, 1), workers
    assert len(set().union(*workers.values())) == 2, "both workers took a module"
