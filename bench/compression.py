"""Compression at publish (issue 44): what precompressing a build's text files adds to its
placing, and what it saves a visitor.

Prints JSON, writes bench/results/compression.json and the "compression" section of
docs/benchmarks.md.

    .venv/bin/python bench/compression.py              # 20 runs per site
    .venv/bin/python bench/compression.py --quick      # 3 runs (smoke)
    .venv/bin/python bench/compression.py --docs-only  # docs/benchmarks.md from the last results

In-process, over the local platform (SQLite, offline scripted model, the real Vite build in
its box): one html page, one multi-file site and one Vue app, each made by the offline
model's first answer and built once; then ``precompress`` (publishing/encodings.py) is timed
on a copy of each build's output, as the builder runs it before the output is placed, and
the bytes a visitor downloads are summed with and without brotli and gzip. The build itself
is timed too, for scale.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checks import commit, others  # noqa: E402
from bench.docs import replace_section, run  # noqa: E402
from zerocode.apps.records import CodeGenType  # noqa: E402
from zerocode.bootstrap import wiring  # noqa: E402
from zerocode.bootstrap.settings import Settings  # noqa: E402
from zerocode.engine.events import BuildEvent, DoneEvent  # noqa: E402
from zerocode.publishing.encodings import ENCODED_DIR, precompress  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "compression.json"
SITES = {
    "html": (CodeGenType.HTML, "A page about otters"),
    "multi-file": (CodeGenType.MULTI_FILE, "A multi-file site about owls with separate css"),
    "vue": (CodeGenType.VUE_PROJECT, "A Vue todo app with an about page"),
}


async def built(p: Any, kind: CodeGenType, prompt: str) -> tuple[Path, float]:
    """The output directory of the app's first preview build, and that build's seconds."""
    app = await p.create_app("bench", prompt, kind)
    events = [e async for e in p.engine.start(app, prompt, None).events()]
    (done,) = [e for e in events if isinstance(e, DoneEvent)]
    assert done.status == "succeeded", done
    build_id = [e for e in events if isinstance(e, BuildEvent)][-1].buildId
    build = p.builds.get(app.id, build_id)
    assert build is not None and build.output
    return Path(build.output), float(build.seconds or 0)


def measure(count: int) -> dict[str, Any]:
    load_start, busy = [round(x, 2) for x in os.getloadavg()], others()
    sites: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="zerocode-compression-bench-") as tmp:
        p = wiring.platform(Settings(data_dir=Path(tmp) / "data", runtime_check=False))
        for name, (kind, prompt) in SITES.items():
            output, build_seconds = asyncio.run(built(p, kind, prompt))
            times, result = [], None
            for n in range(count):
                copy = Path(tmp) / f"{name}-{n}"
                shutil.copytree(output, copy, ignore=shutil.ignore_patterns(ENCODED_DIR))
                start = time.perf_counter()
                result = precompress(copy)
                times.append((time.perf_counter() - start) * 1000)
                shutil.rmtree(copy)
            assert result is not None
            files = [f for f in output.rglob("*") if f.is_file() and ENCODED_DIR not in f.parts]
            sites[name] = {
                "build_s": round(build_seconds, 2),
                "files": len(files),
                "compressed_files": result.files,
                "bytes": sum(f.stat().st_size for f in files),
                "text_bytes": result.original_bytes,
                "br_bytes": result.br_bytes,
                "gzip_bytes": result.gzip_bytes,
                "precompress_ms_p50": round(statistics.median(times), 2),
                "precompress_ms_max": round(max(times), 2),
            }
    return {
        "commit": commit(),
        "cpus": os.cpu_count(),
        "load_start": load_start,
        "busy": busy,
        "runs": count,
        "sites": sites,
    }


def write_docs(r: dict[str, Any]) -> None:
    rows = []
    for name, s in r["sites"].items():
        saved = 100 * (1 - s["br_bytes"] / s["text_bytes"]) if s["text_bytes"] else 0.0
        rows.append(
            f"| {name} | {s['files']} ({s['compressed_files']} text) | {s['text_bytes']:,} | "
            f"{s['br_bytes']:,} | {s['gzip_bytes']:,} | {saved:.0f}% | "
            f"{s['precompress_ms_p50']} | {s['build_s']} |"
        )
    busy = f"; other work on the machine: {', '.join(r['busy'])}" if r["busy"] else ""
    lines = [
        "## Compression at publish (`bench/compression.py`, issue 44)",
        "",
        f"At {r['commit']}, {r['cpus']} cores, load {r['load_start'][0]} at the start{busy}. "
        f"Each site as the offline model first makes it, built once; `precompress` timed "
        f"{r['runs']} times on a copy of its output (ms, median), as the builder runs it "
        "before the output is placed. Bytes: the text files a visitor downloads, as they are "
        "and as brotli (quality 11) and gzip (level 9) copies.",
        "",
        "| site | files | text bytes | brotli | gzip | saved (br) | precompress ms | build s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "What compression adds to a build: "
        + "; ".join(
            f"{name} {site['precompress_ms_p50']:.0f} ms"
            + (
                f" ({100 * site['precompress_ms_p50'] / 1000 / site['build_s']:.1f}% of its "
                f"{site['build_s']} s build)"
                if site["build_s"] >= 1
                else " (its build, a copy of the files, takes a few ms: compression is most "
                "of it, and still milliseconds)"
            )
            for name, site in r["sites"].items()
        )
        + f". At the best qualities that is {rate(r):.2f} s of CPU per MiB of text, so they "
        "are kept for a build's first 2 MiB of text (in files up to 512 KiB), faster ones "
        "after; files over 4 MiB, and what a build holds past 16 MiB of text, are served as "
        "they are: the bound on what a hostile build costs the host.",
    ]
    replace_section("compression", lines)


def rate(r: dict[str, Any]) -> float:
    """Seconds of precompress per MiB of text, from the largest site measured."""
    site = max(r["sites"].values(), key=lambda s: s["text_bytes"])
    seconds, mib = float(site["precompress_ms_p50"]) / 1000, float(site["text_bytes"]) / 2**20
    return seconds / mib


def main() -> None:
    run(
        __doc__ or "",
        RESULTS,
        measure,
        write_docs,
        count=("runs", "precompress runs per site", 3, 20),
    )


if __name__ == "__main__":
    main()
