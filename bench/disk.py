"""Disk benchmark (issue 29, point 4): what ordinary use leaves in a data directory, the
SQLite WAL and the preview builds, before and after their bounds.

Prints JSON, writes bench/results/disk.json and the "disk" section of docs/benchmarks.md.

    .venv/bin/python bench/disk.py               # 50 turns per configuration
    .venv/bin/python bench/disk.py --quick       # 10 (smoke)
    .venv/bin/python bench/disk.py --docs-only   # docs/benchmarks.md from the last results

In process, as tests/integration/http does it: the local platform (SQLite, the offline
scripted model, no browser) on a fresh temporary data directory behind the real API app
(FastAPI's TestClient). One user makes five apps, html and multi-file alternating, and
sends their turns round-robin: each app's first turn, then changes of its heading picked
as an element (``Rename it to "…"``), every turn changing files and so making a preview
build. After each turn the ``-wal`` file's size is read from the disk. Two configurations,
the same code: **before**, SQLite's defaults (``WAL_LIMIT_BYTES = None``: no
``journal_size_limit``, the automatic checkpoint at 1,000 pages, no checkpoint after
turns), and **after**, the bound (1 MiB, a truncating checkpoint when a turn closes), each
checkpoint timed. Then the build sweep runs once as an hour later would
(``keep_seconds=0``) and ``builds/`` is measured before and after it.
"""

from __future__ import annotations

import os
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from bench.docs import replace_section, run  # noqa: E402
from zerocode.adapters.sqlite import database  # noqa: E402
from zerocode.bootstrap import local_sweep, wiring  # noqa: E402
from zerocode.bootstrap.settings import Settings  # noqa: E402
from zerocode.http.app import create_app  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "disk.json"
APPS = 5
PASSWORD = "correct horse"


def size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    total = 0
    for base, _dirs, files in os.walk(path):
        total += sum(os.lstat(os.path.join(base, f)).st_size for f in files)
    return total


def h1(page: str) -> str:
    return page.split("<h1>", 1)[1].split("</h1>", 1)[0]


class Session:
    """One user's API calls over the in-process app."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        account = f"bench-{secrets.token_hex(4)}"
        client.post("/api/users/register", json={"account": account, "password": PASSWORD})
        token = client.post(
            "/api/users/login", json={"account": account, "password": PASSWORD}
        ).json()["token"]
        client.cookies.clear()
        self.headers = {"Authorization": f"Bearer {token}"}

    def create(self, prompt: str, mode: str) -> str:
        made = self.client.post(
            "/api/apps", headers=self.headers, json={"initPrompt": prompt, "codeGenType": mode}
        )
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    def chat(self, app_id: str, message: str, element: dict[str, str] | None = None) -> None:
        body: dict[str, Any] = {"message": message}
        if element:
            body["element"] = element
        with self.client.stream(
            "POST", f"/api/apps/{app_id}/chat", headers=self.headers, json=body
        ) as stream:
            text = "".join(stream.iter_text())
        assert '"status": "succeeded"' in text or '"status":"succeeded"' in text, text[-400:]

    def rename(self, app_id: str, title: str) -> None:
        page = self.client.get(f"/api/apps/{app_id}/files/index.html", headers=self.headers)
        shown = self.client.get(f"/api/apps/{app_id}/preview", headers=self.headers).json()
        element = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": h1(page.text)}
        element["buildId"] = shown["buildId"]  # the preview the heading is picked in
        self.chat(app_id, f'Rename it to "{title}"', element)


def configuration(turns: int, *, bounded: bool) -> dict[str, Any]:
    database.WAL_LIMIT_BYTES = (1 << 20) if bounded else None
    checkpoints: list[float] = []
    original = database.SqliteDatabase.checkpoint

    def timed(self: database.SqliteDatabase) -> database.Checkpoint | None:
        done = original(self)
        if done is not None:
            checkpoints.append(done.seconds)
        return done

    database.SqliteDatabase.checkpoint = timed  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory(prefix="zerocode-disk-") as tmp:
            return _measure(Path(tmp), turns, checkpoints)
    finally:
        database.SqliteDatabase.checkpoint = original  # type: ignore[method-assign]


def _measure(data: Path, turns: int, checkpoints: list[float]) -> dict[str, Any]:
    settings = Settings(
        data_dir=data,
        covers=False,
        rate_chat=100_000,
        rate_create=100_000,
        rate_deploy=100_000,
        rate_login_address=100_000,
    )
    wal = data / "zerocode.sqlite3-wal"
    sizes: list[int] = []
    seconds: list[float] = []
    with TestClient(create_app(wiring.platform(settings))) as client:
        user = Session(client)
        apps = [
            user.create(f"A page for bakery number {i}", "html" if i % 2 else "multi_file")
            for i in range(APPS)
        ]
        for n in range(turns):
            app_id = apps[n % APPS]
            started = time.perf_counter()
            if n < APPS:
                user.chat(app_id, f"A page for bakery number {n}")
            else:
                user.rename(app_id, f"Bakery {n}")
            seconds.append(time.perf_counter() - started)
            sizes.append(size(wal))
        builds_before = size(data / "builds")
        outputs_before = sum(1 for a in (data / "builds").iterdir() for _ in a.iterdir())
        sweep = local_sweep.build_sweep(settings)
        sweep.keep_seconds = 0  # as the hourly sweep an hour later
        started = time.perf_counter()
        report = sweep.run(time.time())
        sweep_seconds = time.perf_counter() - started
    return {
        "turns": turns,
        "wal_after_each_turn_max": max(sizes),
        "wal_at_end": sizes[-1],
        "wal_after_turns": sizes,
        "database": size(data / "zerocode.sqlite3"),
        "turn_ms_median": round(statistics.median(seconds) * 1000, 1),
        "checkpoints": len(checkpoints),
        "checkpoint_ms_median": round(statistics.median(checkpoints) * 1000, 2)
        if checkpoints
        else None,
        "checkpoint_ms_max": round(max(checkpoints) * 1000, 2) if checkpoints else None,
        "builds_outputs_before_sweep": outputs_before,
        "builds_bytes_before_sweep": builds_before,
        "builds_bytes_after_sweep": size(data / "builds"),
        "sweep": report.as_dict(),
        "sweep_ms": round(sweep_seconds * 1000, 1),
    }


def measure(turns: int) -> dict[str, Any]:
    return {
        "before": configuration(turns, bounded=False),
        "after": configuration(turns, bounded=True),
        "cores": os.cpu_count(),
        "load": os.getloadavg()[0],
    }


def kb(n: int | None) -> str:
    return "–" if n is None else f"{n / 1024:,.0f} KB"


def write_docs(result: dict[str, Any]) -> None:
    b, a = result["before"], result["after"]
    lines = [
        "## The disk: the SQLite WAL and preview builds (`bench/disk.py`, issue 29)",
        "",
        f"{a['turns']} turns over the API in process (five apps, html and multi-file, each "
        "turn changing files and making a preview build; the offline model), the same code "
        "with SQLite's defaults (before) and with the WAL's bound (after: "
        "`journal_size_limit` and the automatic checkpoint at 1 MiB, a truncating checkpoint "
        f"when a turn closes). Load average {result['load']:.1f} on {result['cores']} cores.",
        "",
        "| | before | after |",
        "| --- | --- | --- |",
        f"| `-wal` file after the last turn | {kb(b['wal_at_end'])} | {kb(a['wal_at_end'])} |",
        f"| `-wal` file after any turn, largest | {kb(b['wal_after_each_turn_max'])} "
        f"| {kb(a['wal_after_each_turn_max'])} |",
        f"| database file | {kb(b['database'])} | {kb(a['database'])} |",
        f"| database and WAL together | {kb(b['database'] + b['wal_at_end'])} "
        f"| {kb(a['database'] + a['wal_at_end'])} |",
        f"| checkpoints after turns (median, max) | – | {a['checkpoints']}: "
        f"{a['checkpoint_ms_median']} ms, {a['checkpoint_ms_max']} ms |",
        f"| turn over the API, median | {b['turn_ms_median']} ms | {a['turn_ms_median']} ms |",
        f"| `builds/` before the sweep | {b['builds_outputs_before_sweep']} outputs, "
        f"{kb(b['builds_bytes_before_sweep'])} | {a['builds_outputs_before_sweep']} outputs, "
        f"{kb(a['builds_bytes_before_sweep'])} |",
        f"| `builds/` after one sweep | {kb(b['builds_bytes_after_sweep'])} "
        f"({b['sweep']['removed']} removed, {b['sweep']['kept']} kept, {b['sweep_ms']} ms) "
        f"| {kb(a['builds_bytes_after_sweep'])} ({a['sweep']['removed']} removed, "
        f"{a['sweep']['kept']} kept, {a['sweep_ms']} ms) |",
        "",
        "Before, the WAL grows to SQLite's automatic checkpoint (1,000 pages, about 4 MB) "
        "and stays that size: SQLite reuses the file and never gives the space back. After, "
        "it holds a page or two between turns (the writes after a turn's close wait for "
        "the next checkpoint). A one-shot turn here closes twice (its answer, then the note "
        "telling the model what its checks block did), so two checkpoints per turn; each "
        "runs in the turn's worker thread, "
        "and its maximum is a machine this loaded; the turns' medians differ by that load "
        "(other work ran beside both runs), not by the checkpoint's few ms. The sweep keeps "
        "one preview per app (the one shown) and every deploy (none here); the offline "
        "model's pages are small, so "
        "the figure that matters is the count: without the sweep, one output per changing "
        "turn, for ever (a small Vue app's is a few hundred KB).",
    ]
    replace_section("disk", lines)


if __name__ == "__main__":
    run(__doc__ or "", RESULTS, measure, write_docs, count=("turns", "turns", 10, 50))
