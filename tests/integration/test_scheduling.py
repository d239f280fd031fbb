"""``make test``'s scheduling keeps a module's tests on one worker (tests/conftest.py): run
three small modules on two workers the way the Makefile does and read where each test ran.
xdist's own loadgroup spread them out on pytest 9.2, silently, so this checks the
outcome, not the configuration."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

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
        # Not the outer run's options (CI's --cov would measure this small run too).
        env={k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"},
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


def test_the_longest_units_go_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers sort the collection by each unit's seconds (tests/module_seconds.json), all
    of tests/infra counting as one unit, and keep each unit's own order."""
    import tests.conftest as conftest
    import tests.module_seconds as module_seconds

    seconds = {"tests/unit/a.py": 3.0, "tests/e2e/b.py": 9.0, "tests/infra/x.py": 5.0,
               "tests/infra/y.py": 5.0}  # fmt: skip
    monkeypatch.setattr(module_seconds, "load", lambda: seconds)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    names = ["tests/unit/a.py::t1", "tests/infra/x.py::t", "tests/unit/a.py::t2",
             "tests/e2e/b.py::t", "tests/unknown.py::t", "tests/infra/y.py::t"]  # fmt: skip
    items: list[Any] = [SimpleNamespace(nodeid=n) for n in names]
    conftest.pytest_collection_modifyitems(None, items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [
        "tests/infra/x.py::t",
        "tests/infra/y.py::t",
        "tests/e2e/b.py::t",
        "tests/unit/a.py::t1",
        "tests/unit/a.py::t2",
        "tests/unknown.py::t",
    ]
