"""Acceptance-check benchmark (issue 25): the cost of running a suite of 10 checks on one
preview, in the confined Chromium the platform runs them in.

Prints JSON, writes bench/results/checks.json and the "checks" section of docs/benchmarks.md.

    .venv/bin/python bench/checks.py               # 7 repetitions
    .venv/bin/python bench/checks.py --quick       # 2 repetitions (smoke)
    .venv/bin/python bench/checks.py --docs-only   # docs/benchmarks.md from the last results

The app is a small todo page (a heading, a labelled input in a form, an Add button, a
filter, a list, a counter, an about page; its script and style are files of their own)
served on 127.0.0.1 under ``app1.localhost:{port}``, its own origin, as a preview is. Each
repetition runs two suites the way ``ChromiumAcceptance.run`` does — Playwright's driver
started, one browser launched in its box (``chromium.launch``) for the suite, each check in
a fresh confined context (``run_check``, the platform's action and expectation timeouts),
the browser closed — without its browser slot and preview lookup:

- passing: the 10 checks of ``CHECKS``, all passing;
- failing: the first 9 of them and ``FAILING``, which fails on purpose (its expectation is
  polled until its time is up, then the evidence and its screenshot are taken). Its twin,
  ``CHECKS[4]``, has the same steps and passes: the difference is the failure's cost.

A suite of one check warms the disk caches first and is not counted; the suites alternate,
so drift in the machine's load falls on both. Then, in one more browser per repetition, 10
times what every check pays before its first step, in parts: the confined context opened
(routes, init script), its page, the app loaded, the context closed. Peak memory of the
browser's processes (Chromium's, not Playwright's driver) is sampled every 100 ms from
/proc during the suites: the sum of their RSS (shared pages counted once per process) and,
where /proc allows, of their PSS (shared pages divided among the sharers).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import itertools
import os
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.docs import replace_section, run  # noqa: E402
from zerocode.adapters.local import chromium_acceptance  # noqa: E402
from zerocode.adapters.local.chromium import confined, find_chromium, launch  # noqa: E402
from zerocode.adapters.local.chromium_acceptance import run_check  # noqa: E402
from zerocode.engine.acceptance import Check, parse_check  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "checks.json"

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Todos</title>
<link rel="stylesheet" href="/style.css"></head>
<body><main>
<h1>Todos</h1>
<form id="new-form">
  <label for="new">New todo</label>
  <input id="new" placeholder="What needs doing?" autocomplete="off">
  <button type="submit">Add</button>
</form>
<label for="show">Show</label>
<select id="show"><option>All</option><option>Active</option><option>Done</option></select>
<ul id="list"></ul>
<p id="count" role="status">0 items left</p>
<nav><a href="/about">About</a></nav>
</main>
<script src="/app.js"></script></body></html>"""
SCRIPT = """const list = document.getElementById("list");
const input = document.getElementById("new");
const show = document.getElementById("show");
function render() {
  const items = [...list.children];
  const left = items.filter((li) => !li.classList.contains("done")).length;
  document.getElementById("count").textContent =
    left + (left === 1 ? " item" : " items") + " left";
  for (const li of items) {
    const done = li.classList.contains("done");
    li.hidden = (show.value === "Active" && done) || (show.value === "Done" && !done);
  }
}
document.getElementById("new-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  const li = document.createElement("li");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.setAttribute("aria-label", "Done: " + text);
  box.addEventListener("change", () => {
    li.classList.toggle("done", box.checked);
    render();
  });
  const span = document.createElement("span");
  span.textContent = text;
  li.append(box, " ", span);
  list.append(li);
  input.value = "";
  render();
});
show.addEventListener("change", render);
"""
STYLE = """body { font-family: sans-serif; max-width: 40rem; margin: 2rem auto; }
li.done span { text-decoration: line-through; color: #888; }
"""
ABOUT = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>About</title>
<link rel="stylesheet" href="/style.css"></head>
<body><main><h1>About</h1><p>A small todo app, made with zerocode.</p>
<a href="/">Back to the list</a></main></body></html>"""
FILES = {
    "/": ("text/html", PAGE),
    "/about": ("text/html", ABOUT),
    "/app.js": ("text/javascript", SCRIPT),
    "/style.css": ("text/css", STYLE),
}

ADD = [
    {"fill": {"label": "New todo"}, "value": "Buy milk"},
    {"click": {"role": "button", "name": "Add"}},
]
DONE = [*ADD, {"click": {"role": "checkbox", "name": "Done: Buy milk"}}]
RAW_CHECKS: list[dict[str, Any]] = [
    {
        "description": "The page shows its title",
        "expect": [{"visible": {"role": "heading", "name": "Todos"}}, {"noConsoleErrors": True}],
    },
    {
        "description": "Adding a todo shows it in the list",
        "steps": ADD,
        "expect": [
            {"count": {"css": "ul li"}, "equals": 1},
            {"text": {"css": "ul li"}, "equals": "Buy milk"},
            {"noConsoleErrors": True},
        ],
    },
    {
        "description": "Enter adds a todo",
        "steps": [
            {"fill": {"label": "New todo"}, "value": "Walk the dog"},
            {"press": {"label": "New todo"}, "key": "Enter"},
        ],
        "expect": [{"visible": {"text": "Walk the dog"}}],
    },
    {
        "description": "The counter counts what is left",
        "steps": [
            *ADD,
            {"fill": {"label": "New todo"}, "value": "Call mum"},
            {"click": {"role": "button", "name": "Add"}},
        ],
        "expect": [{"text": {"role": "status"}, "equals": "2 items left"}],
    },
    {
        "description": "A todo marked done is crossed out and no longer counted",
        "steps": DONE,
        "expect": [
            {"attribute": {"css": "ul li"}, "name": "class", "contains": "done"},
            {"text": {"role": "status"}, "equals": "0 items left"},
        ],
    },
    {
        "description": "The Done filter hides what is not done",
        "steps": [*ADD, {"select": {"label": "Show"}, "option": "Done"}],
        "expect": [
            {"hidden": {"text": "Buy milk"}},
            {"count": {"css": "ul li"}, "equals": 1},
        ],
    },
    {
        "description": "An empty todo is not added",
        "steps": [{"click": {"role": "button", "name": "Add"}}],
        "expect": [
            {"count": {"css": "ul li"}, "equals": 0},
            {"text": {"role": "status"}, "equals": "0 items left"},
        ],
    },
    {
        "description": "The About link leads to the about page",
        "steps": [{"click": {"role": "link", "name": "About"}}],
        "expect": [
            {"url": {"equals": "/about"}},
            {"visible": {"role": "heading", "name": "About"}},
        ],
    },
    {
        "description": "The about page opens by its address",
        "steps": [{"goto": "/about"}],
        "expect": [
            {"text": {"css": "main p"}, "contains": "small todo app"},
            {"noConsoleErrors": True},
        ],
    },
    {
        "description": "The page settles without errors and invites a todo",
        "steps": [{"wait": 300}],
        "expect": [
            {
                "attribute": {"label": "New todo"},
                "name": "placeholder",
                "equals": "What needs doing?",
            },
            {"noConsoleErrors": True},
        ],
    },
]
# Fails on purpose: the app has no "done" count. Same steps as its twin, RAW_CHECKS[4].
TWIN = 4
RAW_FAILING: dict[str, Any] = {
    "description": "The counter shows how many are done",
    "steps": DONE,
    "expect": [{"text": {"role": "status"}, "contains": "1 done"}],
}
CHECKS = [parse_check(raw) for raw in RAW_CHECKS]
FAILING = parse_check(RAW_FAILING)


class App:
    """The preview's origin: FILES by path, anything else a 404."""

    def __init__(self) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                found = FILES.get(self.path.split("?")[0])
                if found is None:
                    self.send_error(404)
                    return
                body = found[1].encode()
                self.send_response(200)
                self.send_header("content-type", f"{found[0]}; charset=utf-8")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        # The app's own origin, as the platform names a preview (a *.localhost name, asked
        # for at 127.0.0.1 by the confinement); the browser reaches nothing else.
        self.url = f"http://app1.localhost:{self.server.server_address[1]}/"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def processes() -> dict[int, tuple[int, str]]:
    """Every process: its parent and name, from /proc."""
    found = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        name, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :]
        found[int(stat.parent.name)] = (int(rest.split()[1]), name)
    return found


def descendants(root: int, table: dict[int, tuple[int, str]]) -> list[int]:
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kib(path: str, field: str) -> int:
    """``field``'s kB in a /proc file; 0 when the process is gone or the field is not there."""
    try:
        found = re.search(rf"^{field}:\s+(\d+) kB", Path(path).read_text(), re.M)
    except OSError:
        return 0
    return int(found[1]) if found else 0


class Memory:
    """Peak memory of this process's Chromium descendants, sampled from /proc in a thread."""

    def __init__(self) -> None:
        self.peak_rss = 0.0  # MB, summed over the processes
        self.peak_pss = 0.0  # MB, summed; 0 when /proc does not tell (smaps_rollup unreadable)
        self.processes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.1):
            table = processes()
            browsers = [pid for pid in descendants(me, table) if table[pid][1].startswith("chrom")]
            rss = sum(kib(f"/proc/{pid}/status", "VmRSS") for pid in browsers)
            pss = sum(kib(f"/proc/{pid}/smaps_rollup", "Pss") for pid in browsers)
            self.peak_rss = max(self.peak_rss, rss / 1024)
            self.peak_pss = max(self.peak_pss, pss / 1024)
            self.processes = max(self.processes, len(browsers))

    @contextlib.contextmanager
    def sampled(self) -> Iterator[None]:
        self._thread.start()
        try:
            yield
        finally:
            self._stop.set()
            self._thread.join()


class Screenshots:
    """Times the evidence a failing check takes (run_check's ``_evidence``: the screenshot)."""

    def __init__(self) -> None:
        self.ms: list[float] = []
        self.kib: list[float] = []
        self.original = chromium_acceptance._evidence

    async def timed(self, page: Any, failed: Any) -> chromium_acceptance.Evidence:
        start = time.perf_counter()
        found = await self.original(page, failed)
        self.ms.append((time.perf_counter() - start) * 1000)
        self.kib.append(len(found.screenshot or b"") / 1024)
        return found

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        chromium_acceptance._evidence = self.timed
        try:
            yield
        finally:
            chromium_acceptance._evidence = self.original


async def suite(executable: str, url: str, checks: list[Check]) -> dict[str, Any]:
    """One suite as ChromiumAcceptance.run runs it: driver, browser, checks, close."""
    from playwright.async_api import async_playwright

    checks_ms: list[float] = []
    statuses: list[str] = []
    start = time.perf_counter()
    async with async_playwright() as pw:
        driver = time.perf_counter()
        browser = await launch(pw, executable, url)
        launched = time.perf_counter()
        try:
            for check in checks:
                begun = time.perf_counter()
                outcome = await run_check(browser, url, check)
                checks_ms.append((time.perf_counter() - begun) * 1000)
                statuses.append(outcome.status)
        finally:
            closing = time.perf_counter()
            await browser.close()
            closed = time.perf_counter()
    end = time.perf_counter()
    return {
        "suite_s": end - start,
        "driver_start_s": driver - start,
        "launch_s": launched - driver,
        "checks_s": closing - launched,
        "close_s": closed - closing,
        "driver_stop_s": end - closed,
        "checks_ms": checks_ms,
        "statuses": statuses,
    }


async def contexts(executable: str, url: str, n: int) -> dict[str, list[float]]:
    """What every check pays before its first step, in parts: the confined context (the
    context, its routes and init script), its page, the app's load, the close."""
    from playwright.async_api import async_playwright

    parts: dict[str, list[float]] = {"context": [], "page": [], "load": [], "close": []}
    async with async_playwright() as pw:
        browser = await launch(pw, executable, url)
        try:
            for _ in range(n):
                times = [time.perf_counter()]
                context = await confined(browser, url)
                times.append(time.perf_counter())
                page = await context.new_page()
                times.append(time.perf_counter())
                await page.goto(url, wait_until="load")
                times.append(time.perf_counter())
                await context.close()
                times.append(time.perf_counter())
                for name, (a, b) in zip(parts, itertools.pairwise(times), strict=True):
                    parts[name].append((b - a) * 1000)
        finally:
            await browser.close()
    return parts


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def summary(values: list[float], digits: int = 1) -> dict[str, Any]:
    return {
        "median": round(statistics.median(values), digits),
        "p95": round(pct(values, 95), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def others() -> list[str]:
    """Other heavy work on the machine (test suites, browsers), which skews these figures."""
    table = processes()
    mine = {os.getpid(), *descendants(os.getpid(), table)}
    seen = set()
    for pid in table.keys() - mine:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = b" ".join(argv[:3]).decode(errors="replace")
        for heavy in ("pytest", "chromium", "playwright", "npm", "node", "vite", "mypy"):
            if heavy in words:
                seen.add(heavy)
    return sorted(seen)


def commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return head.stdout.strip() or "?"


def measure(runs: int) -> dict[str, Any]:
    executable = find_chromium()
    if executable is None or shutil.which("bwrap") is None:
        raise SystemExit("bench/checks.py needs Chromium and bubblewrap (the browser's box)")
    load_start, busy = [round(x, 2) for x in os.getloadavg()], others()
    app, memory, shots = App(), Memory(), Screenshots()
    passing: list[dict[str, Any]] = []
    failing: list[dict[str, Any]] = []
    context: dict[str, list[float]] = {"context": [], "page": [], "load": [], "close": []}
    started = time.perf_counter()
    try:
        with memory.sampled(), shots.installed():
            asyncio.run(suite(executable, app.url, CHECKS[:1]))  # warm: disk caches, imports
            shots.ms.clear()
            for _ in range(runs):
                passing.append(asyncio.run(suite(executable, app.url, CHECKS)))
                failing.append(asyncio.run(suite(executable, app.url, [*CHECKS[:9], FAILING])))
        for _ in range(runs):
            for name, ms in asyncio.run(contexts(executable, app.url, 10)).items():
                context[name] += ms
    finally:
        app.stop()
    took = time.perf_counter() - started
    wrong = [(i, s) for run in passing for i, s in enumerate(run["statuses"]) if s != "passed"] + [
        (i, s) for run in failing for i, s in enumerate(run["statuses"][:9]) if s != "passed"
    ]
    if wrong or any(run["statuses"][9] != "failed" for run in failing):
        raise SystemExit(f"the checks did not come out as designed: {wrong}")
    suites = passing + failing
    per_check = {
        check.description: [round(run["checks_ms"][i], 1) for run in suites[: 2 * runs]]
        if i < 9
        else [round(run["checks_ms"][i], 1) for run in passing]
        for i, check in enumerate(CHECKS)
    }
    failing_ms = [run["checks_ms"][9] for run in failing]
    twin_ms = [run["checks_ms"][TWIN] for run in failing]
    pooled = [ms for run in passing for ms in run["checks_ms"]]
    pooled += [ms for run in failing for ms in run["checks_ms"][:9]]
    return {
        "commit": commit(),
        "runs": runs,
        "cpus": os.cpu_count(),
        "load_average_start": load_start,
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "other_heavy_processes": sorted({*busy, *others()}),
        "seconds_in_all": round(took, 1),
        "chromium": subprocess.run(
            [executable, "--version"], capture_output=True, text=True
        ).stdout.strip(),
        "timeouts_ms": {
            "action": chromium_acceptance.ACTION_MS,
            "expect": chromium_acceptance.EXPECT_MS,
        },
        "checks": [c.description for c in CHECKS],
        "failing_check": FAILING.description,
        "suite_passing_s": summary([r["suite_s"] for r in passing], 2),
        "suite_failing_s": summary([r["suite_s"] for r in failing], 2),
        "suite_passing_runs_s": [round(r["suite_s"], 2) for r in passing],
        "suite_failing_runs_s": [round(r["suite_s"], 2) for r in failing],
        "driver_start_s": summary([r["driver_start_s"] for r in suites], 3),
        "launch_s": summary([r["launch_s"] for r in suites], 3),
        "launch_runs_s": [round(r["launch_s"], 3) for r in suites],
        "checks_passing_s": summary([r["checks_s"] for r in passing], 2),
        "close_s": summary([r["close_s"] + r["driver_stop_s"] for r in suites], 3),
        "per_check_ms": summary(pooled),
        "per_check_ms_by_check": {name: summary(ms) for name, ms in per_check.items()},
        "failing_check_ms": summary(failing_ms),
        "twin_ms": summary(twin_ms),
        "failure_extra_ms": summary([f - t for f, t in zip(failing_ms, twin_ms, strict=True)]),
        "screenshot_ms": summary(shots.ms),
        "screenshot_kib": round(statistics.median(shots.kib), 1),
        "context_ms": {name: summary(ms) for name, ms in context.items()},
        "context_whole_ms": summary([sum(t) for t in zip(*context.values(), strict=True)]),
        "browser_peak_mb": {
            "rss_sum": round(memory.peak_rss, 1),
            "pss_sum": round(memory.peak_pss, 1) or None,
            "processes": memory.processes,
        },
    }


def write_docs(r: dict[str, Any]) -> None:
    def row(label: str, s: dict[str, Any], unit: str) -> str:
        return f"| {label} | {s['median']} {unit} | {s['p95']} {unit} | {s['min']}–{s['max']} |"

    mem, c = r["browser_peak_mb"], r["context_ms"]
    pss = "" if mem["pss_sum"] is None else f", {mem['pss_sum']} MB summed PSS"
    busy = ", ".join(r["other_heavy_processes"]) or "none"
    n = r["runs"]
    lines = [
        "## Acceptance checks: a suite of 10 on one preview (`bench/checks.py`)",
        "",
        "A small todo page (heading, labelled input, Add button, filter, list, counter, an "
        "about page; script and style files of their own) on its own origin at 127.0.0.1; 10 "
        "checks of the kinds a model writes (fill and click, Enter, select, goto, a link, "
        "visible, hidden, count, text, attribute, url, noConsoleErrors, one 300 ms wait), run "
        "as `ChromiumAcceptance` runs a suite: Playwright's driver, one browser in its box "
        "for the suite, a fresh confined context per check, the browser closed. "
        f"{n} repetition{'s' if n != 1 else ''} of each suite, alternating; {r['chromium']}, "
        f"action and expectation timeouts {r['timeouts_ms']['action']} / "
        f"{r['timeouts_ms']['expect']} ms, at {r['commit']}.",
        "",
        "| | median | p95 | range |",
        "|---|---:|---:|---:|",
        row("**suite of 10, all passing** (start to end)", r["suite_passing_s"], "s"),
        row("suite of 9 passing + 1 failing", r["suite_failing_s"], "s"),
        row("Playwright's driver started", r["driver_start_s"], "s"),
        row("browser launched (in its box)", r["launch_s"], "s"),
        row("the 10 passing checks alone", r["checks_passing_s"], "s"),
        row("browser closed, driver stopped", r["close_s"], "s"),
        row(f"one passing check (all {9 * 2 * n + n}, pooled)", r["per_check_ms"], "ms"),
        row("a check's fixed part: context, page, app loaded, closed", r["context_whole_ms"], "ms"),
        row("– the confined context opened (routes, init script)", c["context"], "ms"),
        row("– its page opened", c["page"], "ms"),
        row("– the app loaded (3 files, fetched on the platform's side)", c["load"], "ms"),
        row("– the context closed", c["close"], "ms"),
        row(f"the failing check ({r['failing_check']})", r["failing_check_ms"], "ms"),
        row("its passing twin (the same steps)", r["twin_ms"], "ms"),
        row("failure's extra cost (failing − twin)", r["failure_extra_ms"], "ms"),
        row(
            f"of which the evidence screenshot (PNG, {r['screenshot_kib']} KiB)",
            r["screenshot_ms"],
            "ms",
        ),
        "",
        "Each check, median ms (p95): "
        + "; ".join(
            f"{name} {s['median']} ({s['p95']})" for name, s in r["per_check_ms_by_check"].items()
        )
        + ".",
        "",
        f"Peak memory of the browser's processes during the suites: {mem['rss_sum']} MB "
        f"summed RSS{pss}, {mem['processes']} processes at most (/proc, every 100 ms). "
        f"The machine: {r['cpus']} cores, load average {r['load_average_start'][0]} at the "
        f"start and {r['load_average_end'][0]} at the end (1 min); other heavy work seen: "
        f"{busy}.",
        "",
        *reading(r),
    ]
    replace_section("checks", lines)


def reading(r: dict[str, Any]) -> list[str]:
    """What the figures say, worked out from them (so a re-run keeps it true)."""
    suite_s = r["suite_passing_s"]["median"]
    start_s = r["driver_start_s"]["median"] + r["launch_s"]["median"]
    stop_s = r["close_s"]["median"]
    checks_s = r["checks_passing_s"]["median"]
    check_ms, fixed_ms = r["per_check_ms"]["median"], r["context_whole_ms"]["median"]
    c = r["context_ms"]
    said = {
        "context": "opening the context",
        "page": "opening its page",
        "load": "loading the app",
        "close": "closing it",
    }
    first, second = sorted(c, key=lambda name: c[name]["median"], reverse=True)[:2]
    biggest = (
        f"{said[first]} {c[first]['median']:.0f} ms and {said[second]} "
        f"{c[second]['median']:.0f} ms the largest parts"
    )
    by_check = [s["median"] for s in r["per_check_ms_by_check"].values()]
    first_ms, rest_ms = by_check[0], statistics.median(by_check[1:])
    extra, shot = r["failure_extra_ms"]["median"], r["screenshot_ms"]["median"]
    expect_ms = r["timeouts_ms"]["expect"]
    loaded = max(r["load_average_start"][0], r["load_average_end"][0]) > r["cpus"]
    return [
        f"Reading: {'the checks' if start_s < checks_s else 'the start'} dominate a suite: "
        f"of its {suite_s} s, starting Playwright's driver and the boxed browser takes "
        f"{start_s:.2f} s ({start_s / suite_s:.0%}) and stopping them {stop_s:.2f} s, once per "
        f"suite, while the 10 checks take {checks_s} s. "
        + (
            "Most of a check is its fresh confined context rather than its steps: "
            if fixed_ms > check_ms / 2
            else "Most of a check is its steps and waits, not its fresh context: "
        )
        + f"opening the context and its page, loading the app through the platform-side "
        f"fetch and closing it take {fixed_ms:.0f} ms ({biggest}; measured "
        f"apart, in a browser of their own), {fixed_ms / check_ms:.0%} of a passing check's "
        f"median {check_ms:.0f} ms; the steps and expectations (one 300 ms wait among them) "
        f"are the rest. "
        + (
            f"The first check of a suite ({first_ms:.0f} ms, median) costs more than the "
            f"others ({rest_ms:.0f} ms, median of their medians), presumably the browser's "
            "first page starting cold. "
            if first_ms > 1.2 * rest_ms
            else ""
        )
        + f"A failing check costs {extra:.0f} ms more than its passing twin, "
        f"about the {expect_ms} ms its expectation is polled before it is given up; the "
        f"evidence screenshot is {shot:.0f} ms of a failure."
        + (
            " The machine was heavily loaded (load average above its core count"
            + (", other test suites running" if "pytest" in r["other_heavy_processes"] else "")
            + "): the absolute figures are high and spread; the proportions are what to read."
            if loaded
            else ""
        ),
    ]


def main() -> None:
    run(__doc__, RESULTS, measure, write_docs, count=("runs", "repetitions", 2, 7))


if __name__ == "__main__":
    main()
