"""Runtime-check benchmark (issue 28, point 2): the time of one runtime check of a preview, as
the engine asks for it after a successful build (``ChromiumCheck.check_url``), in the kept
browser.

Prints JSON and writes bench/results/runtime_check.json; the Markdown lines it prints are for
whoever reports them (docs/benchmarks.md belongs to bench/preview.py, issue 28 point 5).

    .venv/bin/python bench/runtime_check.py            # 20 checks of each preview
    .venv/bin/python bench/runtime_check.py --quick    # 3 (smoke)

Two previews, each served on 127.0.0.1 under its own ``*.localhost`` origin as a preview is:
the offline model's HTML tip calculator and its Vue tip calculator (built once by
``LocalBuilder`` in the box). In one event loop, as in the server: two checks of each as
warm-up (the first starts the kept browser), then the checks alternate between the two, each
timed from the call to its problems, 0.5 s apart (a check follows a build, never directly
another check: the context opened ahead after the last one is ready, as in a turn). The
machine's load is read before and after.
"""

from __future__ import annotations

import asyncio
import functools
import http.server
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.docs import run  # noqa: E402
from zerocode.adapters.local.builder import LocalBuilder  # noqa: E402
from zerocode.adapters.local.chromium import find_chromium  # noqa: E402
from zerocode.adapters.local.chromium_check import ChromiumCheck  # noqa: E402
from zerocode.adapters.local.sandbox import sandbox  # noqa: E402
from zerocode.adapters.local.toolchain_store import ToolchainStore  # noqa: E402
from zerocode.adapters.model.offline.script import answer  # noqa: E402
from zerocode.apps.records import CodeGenType  # noqa: E402
from zerocode.apps.workspace import Snapshot  # noqa: E402
from zerocode.bootstrap.settings import Settings  # noqa: E402
from zerocode.engine import prompts  # noqa: E402
from zerocode.engine.codegen import parse_html  # noqa: E402
from zerocode.publishing.builds import BuildJob, new_build_id  # noqa: E402
from zerocode.publishing.pointers import SiteUrls  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "runtime_check.json"
WARM_UP = 2
APART = 0.5  # seconds between checks (untimed): a check follows a build, never another check


def offline(kind: str, prompt: str) -> Any:
    messages = [
        {"role": "system", "content": prompts.load(kind)},
        {"role": "user", "content": prompt},
    ]
    return answer(messages)


def html_site(directory: Path) -> None:
    for name, body in parse_html(offline("html", "A tip calculator").text).items():
        (directory / name).write_text(body)


def vue_site(directory: Path, work: Path) -> None:
    calls = offline("vue_project", "A vue tip calculator").calls
    files = {a["path"]: a["content"].encode() for a in (json.loads(c.arguments) for c in calls)}
    store = ToolchainStore(work / "toolchain", Settings().npm_cache)
    builder = LocalBuilder(work / "data", sandbox(override=False), store)
    job = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(files),
    )
    outcome = asyncio.run(builder.build(job))
    if not outcome.ok or outcome.output is None:
        raise SystemExit(f"the Vue preview did not build: {outcome.log_tail}")
    output = Path(outcome.output)
    for path in output.rglob("*"):
        if path.is_file():
            target = directory / path.relative_to(output)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def served(directory: Path, host: str) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://{host}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def summary(seconds: list[float]) -> dict[str, Any]:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(seconds),
        "median_s": round(statistics.median(seconds), 3),
        "p95_s": round(p95, 3),
        "max_s": round(ordered[-1], 3),
    }


def measure(n: int) -> dict[str, Any]:
    executable = find_chromium()
    if executable is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="zc-bench-check-") as tmp:
        work = Path(tmp)
        (work / "html").mkdir()
        (work / "vue").mkdir()
        html_site(work / "html")
        vue_site(work / "vue", work / "build")
        with (
            served(work / "html", "p-html.localhost") as html,
            served(work / "vue", "p-vue.localhost") as vue,
        ):
            check = ChromiumCheck(SiteUrls("http://127.0.0.1:9"), executable)
            times: dict[str, list[float]] = {"html": [], "vue": []}

            async def rounds() -> None:
                for i in range(WARM_UP + n):
                    for kind, url in (("html", html), ("vue", vue)):
                        started = time.perf_counter()
                        problems = await check.check_url(url, vue=kind == "vue")
                        took = time.perf_counter() - started
                        if problems != []:
                            raise SystemExit(f"the {kind} preview was not clean: {problems}")
                        if i >= WARM_UP:
                            times[kind].append(took)
                        await asyncio.sleep(APART)

            before = load()
            asyncio.run(rounds())
            after = load()
    return {
        "when": time.strftime("%Y-%m-%d %H:%M:%S"),
        "apart_s": APART,
        "load_before": before,
        "load_after": after,
        "html": summary(times["html"]),
        "vue": summary(times["vue"]),
    }


def lines(r: dict[str, Any]) -> None:
    """The figures as Markdown, printed (docs/benchmarks.md is bench/preview.py's)."""
    print(
        f"\nruntime check, kept browser ({r['html']['n']} checks of each, load "
        f"{r['load_before'][0]:.2f} → {r['load_after'][0]:.2f}):\n\n"
        "| preview | median | p95 | max |\n|---|---|---|---|"
    )
    for kind in ("html", "vue"):
        s = r[kind]
        print(f"| {kind} | {s['median_s']} s | {s['p95_s']} s | {s['max_s']} s |")


def main() -> None:
    run(__doc__, RESULTS, measure, lines, count=("checks", "checks of each preview", 3, 20))


if __name__ == "__main__":
    main()
