"""Checks after a build (issue 40, point 3): what a preview's runtime check and a suite of 3
acceptance checks take once the build has succeeded, in the kept browser as the server runs
them (one loop, one boxed Chromium kept warm, a fresh confined context per check).

Prints JSON, writes bench/results/checks_together.json and the "checks-together" section of
docs/benchmarks.md.

    .venv/bin/python bench/checks_together.py              # 20 repetitions
    .venv/bin/python bench/checks_together.py --quick      # 3 (smoke)
    .venv/bin/python bench/checks_together.py --docs-only  # docs from the last results

The app is bench/checks.py's todo page on its own origin; the suite is its first 3 checks.
Each repetition runs three ways, alternating so drift in the machine's load falls on all,
after the browser was idle for a second (as it is while a turn's model answers and its build
runs):

- **at once** (issue 40, now): the turn's own code (engine/page_checks.py ``checked``, with
  the SQLite check store): the runtime check and the suite together, the suite's events held
  until the page has passed, its run recorded;
- **in turn**: the runtime check, then the suite as ``ChromiumAcceptance`` runs it (its
  checks at once, the user's share of contexts; the app's files read once for the suite
  and served from memory), the engine's order before the runtime check and the suite ran
  together;
- **one by one** (before issue 40): the same, with one check at a time, one context opened
  ahead and every file fetched on the platform's side for every check (the runner as it
  was, in a kept browser of its own).

Then, 10 times each repetition, a check's fixed part in the kept browser: a context taken
from the pool (opened ahead) and aimed, the app loaded from the suite's memory, given back.
The machine's load average and other heavy work are recorded: the machine is shared; on a
loaded one, where the at-once suite's time goes, per check, tells more than the totals: the
wait for its context, its page's load, its steps, its expectations, its end to its verdict.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checks import CHECKS, App, commit, others, summary  # noqa: E402
from bench.docs import replace_section, run  # noqa: E402
from zerocode.adapters.local import chromium_acceptance  # noqa: E402
from zerocode.adapters.local.browser_pool import BrowserPool  # noqa: E402
from zerocode.adapters.local.browser_shares import Tenant  # noqa: E402
from zerocode.adapters.local.chromium import find_chromium  # noqa: E402
from zerocode.adapters.local.chromium_acceptance import ChromiumAcceptance  # noqa: E402
from zerocode.adapters.local.chromium_check import ChromiumCheck  # noqa: E402
from zerocode.adapters.local.served_files import ServedFiles  # noqa: E402
from zerocode.adapters.sqlite.checks import SqliteCheckStore  # noqa: E402
from zerocode.adapters.sqlite.database import SqliteDatabase  # noqa: E402
from zerocode.apps.records import App as AppRecord  # noqa: E402
from zerocode.apps.records import CodeGenType  # noqa: E402
from zerocode.engine.check_suite import CheckResult, RunOutcome, StoredCheck  # noqa: E402
from zerocode.engine.events import CheckEvent  # noqa: E402
from zerocode.engine.page_checks import checked  # noqa: E402
from zerocode.engine.parts import EngineParts  # noqa: E402
from zerocode.engine.suite_step import SuiteVerdict  # noqa: E402
from zerocode.engine.turn_state import TurnState  # noqa: E402
from zerocode.memory.facade import Turn  # noqa: E402
from zerocode.publishing.builds import Build, BuildPurpose, BuildState  # noqa: E402
from zerocode.publishing.pointers import SiteUrls  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "checks_together.json"
SUITE = [StoredCheck(id=f"c{i + 1}", check=c, added_turn=1) for i, c in enumerate(CHECKS[:3])]
APP = AppRecord(id="app1", owner="u1", name="t", code_gen_type=CodeGenType.HTML, init_prompt="")
TENANT = Tenant(APP.owner, APP.id)
BUILD = Build(
    id="b1",
    app_id=APP.id,
    purpose=BuildPurpose.PREVIEW,
    kind=CodeGenType.HTML,
    source_digest="d1",
    state=BuildState.SUCCEEDED,
)
WAYS = ("at_once", "in_turn", "one_by_one")
FIXED = 10  # fixed parts measured per repetition
IDLE_SECONDS = 1.0  # the browser idle before a build's checks (a turn's model and build)


class Preview(ChromiumCheck):
    """The runtime check with the preview at the bench's site (no preview pointer here)."""

    def __init__(self, executable: str, pool: BrowserPool, url: str) -> None:
        super().__init__(SiteUrls("http://127.0.0.1:9"), executable, browsers=pool)
        self.url = url

    def preview_url(self, app: AppRecord, build: Any) -> str | None:
        return self.url


class OneByOne(BrowserPool):
    """The pool as the runner used it before: one check of a suite at a time, one context
    opened ahead."""

    @property
    def share(self) -> int:
        return 1

    def _here(self) -> Any:
        kept = super()._here()
        kept.most_spares = 1
        return kept


@contextmanager
def no_memory() -> Iterator[None]:
    """Every file fetched for every check (ServedFiles that keeps nothing)."""
    names = vars(chromium_acceptance)  # the runner's module: what it calls ServedFiles
    real = names["ServedFiles"]
    names["ServedFiles"] = lambda: ServedFiles(most=0)
    try:
        yield
    finally:
        names["ServedFiles"] = real


class Parts:
    """Where each check of a suite spends its time (ms), from the runner's own calls."""

    def __init__(self) -> None:
        self.found: dict[str, list[float]] = {}
        self.start = 0.0
        self.checks: dict[str, dict[str, float]] = {}  # by check: its instants and sums
        self.current: ContextVar[dict[str, float]] = ContextVar("check")

    def add(self, name: str, value: float) -> None:
        self.found.setdefault(f"part_{name}_ms", []).append(value * 1000)

    @contextmanager
    def watching(self) -> Iterator[None]:
        names = vars(chromium_acceptance)
        real = {name: names[name] for name in ("check_in_page", "_step", "_expect")}

        async def check_in_page(page: Any, url: str, check: Any, **bounds: Any) -> Any:
            mine = {"begun": time.perf_counter(), "steps": 0.0, "expect": 0.0}
            self.checks[check.description] = mine
            self.current.set(mine)
            try:
                return await real["check_in_page"](page, url, check, **bounds)
            finally:
                mine["ended"] = time.perf_counter()

        def timed(name: str) -> Any:
            async def call(*args: Any, **kwargs: Any) -> Any:
                mine = self.current.get()
                began = time.perf_counter()
                mine.setdefault("first", began)
                try:
                    return await real[name](*args, **kwargs)
                finally:
                    key = "steps" if name == "_step" else "expect"
                    mine[key] += time.perf_counter() - began

            return call

        names.update(check_in_page=check_in_page, _step=timed("_step"), _expect=timed("_expect"))
        try:
            yield
        finally:
            names.update(real)

    def told(self, description: str) -> None:
        """A check's verdict told: its parts are complete."""
        mine = self.checks.pop(description)
        self.add("context", mine["begun"] - self.start)
        self.add("load", mine.get("first", mine["ended"]) - mine["begun"])
        self.add("steps", mine["steps"])
        self.add("expect", mine["expect"])
        self.add("verdict", time.perf_counter() - mine["ended"])


class Told(ChromiumAcceptance):
    """The runner, its verdicts also told to ``parts`` and its end timed."""

    def __init__(self, check: ChromiumCheck, parts: Parts) -> None:
        super().__init__(check)
        self.parts, self.ended = parts, 0.0

    async def run(
        self,
        app: AppRecord,
        build: Build | None,
        checks: Any,
        seconds: float | None = None,
        on_result: Any = None,
    ) -> RunOutcome:
        by_id = {stored.id: stored.check.description for stored in SUITE}

        def told(result: CheckResult) -> None:
            self.parts.told(by_id[result.check_id])
            if on_result is not None:
                on_result(result)

        with self.parts.watching():
            outcome = await super().run(app, build, checks, seconds, told)
        self.ended = time.perf_counter()
        return outcome


class Timed(Preview):
    """The runtime check, the moment of its verdict kept."""

    verdict = 0.0
    found: Any = None

    async def check(self, app: AppRecord, build: Build) -> Any:
        self.found = await super().check(app, build)
        self.verdict = time.perf_counter()
        return self.found


class Engine:
    """What engine/page_checks.py's ``checked`` uses of the engine's parts."""

    def __init__(self, check: Timed, runner: Told, store: SqliteCheckStore) -> None:
        self.runtime_check, self.acceptance, self.checks = check, runner, store
        self.workspace = None  # the build names its digest: no snapshot is taken


async def at_once(check: Timed, runner: Told, store: SqliteCheckStore) -> dict[str, float]:
    """What follows ``build: succeeded`` in a turn now, through the turn's own code."""
    await asyncio.sleep(IDLE_SECONDS)
    st = TurnState()
    st.turn = Turn(app_id=APP.id, number=1, start=1, head=1, head_uid="")
    runner.parts.start = start = time.perf_counter()
    told, verdict = 0, None
    async for item in checked(cast(EngineParts, Engine(check, runner, store)), APP, st, BUILD):
        if isinstance(item, CheckEvent):
            told += item.status == "passed"
        elif isinstance(item, SuiteVerdict):
            verdict = item
    end = time.perf_counter()
    if check.found != []:
        raise RuntimeError(f"the runtime check found problems: {check.found}")
    if verdict is None or verdict.failure is not None:
        print("not passed:", verdict, file=sys.stderr)
    return {
        "runtime_s": check.verdict - start,
        "suite_s": runner.ended - start,
        "total_s": end - start,
        "not_passed": float(len(SUITE) - told),
    }


async def in_turn(check: Preview, runner: ChromiumAcceptance) -> dict[str, float]:
    """The runtime check, then the suite: the turn's order before page_checks.py."""
    await asyncio.sleep(IDLE_SECONDS)
    start = time.perf_counter()
    found = await check.check_url(check.url, vue=False, tenant=TENANT)
    checked_at = time.perf_counter()
    outcome = await runner.run(APP, None, SUITE)
    end = time.perf_counter()
    if found != []:
        raise RuntimeError(f"the runtime check found problems: {found}")
    failed = [f"{r.check_id}: {r.evidence}" for r in outcome.results if r.status != "passed"]
    for said in failed:  # a check past its bound on a loaded machine: counted, and said
        print("not passed:", said, file=sys.stderr)
    return {
        "runtime_s": checked_at - start,
        "suite_s": end - checked_at,
        "total_s": end - start,
        "not_passed": float(len(failed)),
    }


async def fixed(pool: BrowserPool, url: str, files: ServedFiles) -> float:
    """One check's fixed part: a context taken and aimed, the app loaded, given back."""
    start = time.perf_counter()
    async with pool.page(url, tenant=TENANT, files=files) as page:
        await page.goto(url, wait_until="load")
    return (time.perf_counter() - start) * 1000


async def repetitions(executable: str, url: str, runs: int, db: Path) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    parts = Parts()
    store = SqliteCheckStore(SqliteDatabase(db))
    for stored in SUITE:
        store.add(APP.id, stored.check, 1)
    now, before = BrowserPool(executable), OneByOne(executable)
    timed = Timed(executable, now, url)
    engine_runner = Told(timed, parts)
    plain = Preview(executable, now, url)
    old = Preview(executable, before, url)
    ways: dict[str, Callable[[], Awaitable[dict[str, float]]]] = {
        "at_once": lambda: at_once(timed, engine_runner, store),
        "in_turn": lambda: in_turn(plain, ChromiumAcceptance(plain)),
        "one_by_one": lambda: in_turn(old, ChromiumAcceptance(old)),
    }
    try:
        await now.warm()
        await before.warm()
        for name, way in ways.items():  # warm: browser started, disk caches, imports
            with no_memory() if name == "one_by_one" else nullcontext():
                await way()
        parts.found.clear()
        for _ in range(runs):
            for name, way in ways.items():
                with no_memory() if name == "one_by_one" else nullcontext():
                    times = await way()
                for key, value in times.items():
                    found.setdefault(f"{name}_{key}", []).append(value)
            files = ServedFiles()
            for _ in range(FIXED):
                found.setdefault("fixed_ms", []).append(await fixed(now, url, files))
    finally:
        await now.close()
        await before.close()
    return {**found, **parts.found}


def measure(runs: int) -> dict[str, Any]:
    executable = find_chromium()
    if executable is None or shutil.which("bwrap") is None:
        raise SystemExit("bench/checks_together.py needs Chromium and bubblewrap")
    load_start, busy = [round(x, 2) for x in os.getloadavg()], others()
    site = App()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            found = asyncio.run(repetitions(executable, site.url, runs, Path(tmp) / "checks.db"))
    finally:
        site.stop()
    not_passed = {f"{way}_not_passed": int(sum(found.pop(f"{way}_not_passed", []))) for way in WAYS}
    return {
        "runs": runs,
        **not_passed,
        "commit": commit(),
        "cores": os.cpu_count(),
        "load_start": load_start,
        "load_end": [round(x, 2) for x in os.getloadavg()],
        "others": sorted(set(busy) | set(others())),
        **{key: summary(values, 3) for key, values in found.items()},
    }


def write_docs(r: dict[str, Any]) -> None:
    def row(label: str, key: str, unit: str = "s") -> str:
        s = r[key]
        return f"| {label} | {s['median']} {unit} | {s['p95']} {unit} | {s['min']}–{s['max']} |"

    replace_section(
        "checks-together",
        [
            "## Checks after a build: runtime check + a suite of 3 (`bench/checks_together.py`)",
            "",
            f"bench/checks.py's todo page on its own origin; the runtime check and its first "
            f"3 checks, in one kept boxed Chromium (a fresh confined context per check), as a "
            f"turn runs them once `build: succeeded`. {r['runs']} repetitions, the three ways "
            f"alternating; {r['cores']} cores, load average {r['load_start']} → "
            f"{r['load_end']} (1, 5, 15 min), other heavy work seen: "
            f"{', '.join(r['others']) or 'none'}; at {r['commit']}.",
            "",
            "| | median | p95 | range |",
            "|---|---:|---:|---:|",
            row(
                "**runtime check + suite of 3, at once** (the turn's code now, "
                "engine/page_checks.py; the run recorded)",
                "at_once_total_s",
            ),
            row("– the runtime check's verdict (from the start)", "at_once_runtime_s"),
            row("– the suite's last verdict (from the start)", "at_once_suite_s"),
            row(
                "runtime check, then suite of 3 at once (before page_checks.py)", "in_turn_total_s"
            ),
            row("– the runtime check", "in_turn_runtime_s"),
            row("– the suite: 3 at once, files from memory", "in_turn_suite_s"),
            row("runtime check, then suite one by one (before issue 40)", "one_by_one_total_s"),
            row("– the suite: one at a time, every file fetched", "one_by_one_suite_s"),
            row(
                "a check's fixed part: context taken, app loaded (memory), given back",
                "fixed_ms",
                "ms",
            ),
            *parts_rows(r),
            "",
            f"Checks not passed (past an action's 3 s bound on this machine): at once "
            f"{r['at_once_not_passed']}, in turn {r['in_turn_not_passed']}, one by one "
            f"{r['one_by_one_not_passed']}, of {3 * r['runs']} each. The target (issue 40) is "
            "≤ 0.5 s on a quiet machine, median of 20. The fixed part is measured back to back "
            "(10 in a row, no idle between): the contexts opened ahead are not ready yet, so "
            "it includes opening one; a check that finds one ready skips that (taking it: "
            "~0 ms).",
        ],
    )


def parts_rows(r: dict[str, Any]) -> list[str]:
    """The at-once suite's checks, part by part (each check's own, at once with the others
    and the runtime check)."""
    said = {
        "context": "the wait for its context (from the start)",
        "load": "its page loaded (`load`)",
        "steps": "its steps",
        "expect": "its expectations",
        "verdict": "its end to its verdict told",
    }
    rows = []
    for part, label in said.items():
        s = r.get(f"part_{part}_ms")
        if s is not None:
            rows.append(
                f"| – a check of the suite: {label} | {s['median']} ms | {s['p95']} ms "
                f"| {s['min']}–{s['max']} |"
            )
    return rows


def main() -> None:
    run(__doc__, RESULTS, measure, write_docs, count=("runs", "repetitions", 3, 20))


if __name__ == "__main__":
    main()
