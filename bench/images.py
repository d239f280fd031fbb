"""The builder's images (issue 41): what taking one in costs, and what one costs the window.

Prints JSON, writes bench/results/images.json and the "images" section of docs/benchmarks.md.

    .venv/bin/python bench/images.py               # 5 runs of each
    .venv/bin/python bench/images.py --quick       # 2 (smoke)
    .venv/bin/python bench/images.py --docs-only   # docs/benchmarks.md from the last results

- **intake**: ``apps/image_intake.take`` (the type sniffed, the bounds read, the pixels
  re-encoded with no metadata) on photo-like pictures (noise over gradients, which compress
  as photos do) of about 1, 2.5 and 4.5 MB as JPEG, and as PNG and WebP, the median of the
  runs, and per MB of upload;
- **upload**: ``POST /api/apps/{id}/assets`` through a real ``zerocode serve`` (the form
  read, the intake, the version, the html preview rebuilt and told to the model), the
  median wall time of the runs for each size;
- **window**: the tokens an image costs the window by OpenAI's rule
  (``memory/tokens.image_tokens``) at common sizes, and the window of a turn with four
  pasted screenshots, against the same turn without them.
"""

from __future__ import annotations

import io
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from PIL import Image

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.checks import commit, others  # noqa: E402
from bench.docs import replace_section, run  # noqa: E402
from tests.e2e.conftest import Server, chat, create, signed_in  # noqa: E402
from zerocode.apps.image_intake import ImageLimits, take  # noqa: E402
from zerocode.memory.messages import ImageRef, UserMessage  # noqa: E402
from zerocode.memory.tokens import image_tokens, message_tokens  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "images.json"
LIMITS = ImageLimits()
# (name, sides, JPEG quality): a JPEG of about 1, 2.5 and 4.5 MB (the limit is 5 MiB).
SIZES = (("1 MB", (1400, 1050), 95), ("2.5 MB", (2200, 1650), 95), ("4.5 MB", (2900, 2175), 96))
WINDOW_SIZES = ((512, 512), (1280, 720), (1920, 1080), (1080, 2400), (4032, 3024))


def photo(size: tuple[int, int]) -> Image.Image:
    """Gradients with noise: compresses about as a photograph does."""
    across = Image.linear_gradient("L").resize(size)
    down = Image.linear_gradient("L").rotate(90).resize(size)
    base = Image.merge("RGB", (across, down, Image.effect_noise(size, 64)))
    grain = Image.merge("RGB", [Image.effect_noise(size, 48) for _ in range(3)])
    return Image.blend(base, grain, 0.3)


def encoded(im: Image.Image, fmt: str, quality: int) -> bytes:
    out = io.BytesIO()
    options: dict[str, Any] = {"quality": quality} if fmt in ("JPEG", "WEBP") else {}
    im.save(out, fmt, **options)
    return out.getvalue()


def median_seconds(fn: Any, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def intake(runs: int) -> list[dict[str, Any]]:
    rows = []
    for name, size, quality in SIZES:
        im = photo(size)
        for fmt in ("JPEG", "PNG", "WEBP"):
            data = encoded(im, fmt, quality if fmt == "JPEG" else 90)
            if len(data) > LIMITS.max_file_bytes:
                continue  # over the limit: refused before a pixel is decoded
            seconds = median_seconds(lambda d=data: take(d, LIMITS), runs)
            mb = len(data) / 1_048_576
            rows.append(
                {
                    "picture": name,
                    "format": fmt.lower(),
                    "pixels": f"{size[0]}×{size[1]}",
                    "bytes": len(data),
                    "seconds": round(seconds, 3),
                    "secondsPerMB": round(seconds / mb, 3),
                }
            )
    return rows


def upload(runs: int) -> list[dict[str, Any]]:
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp), forked=False)
        server.env = {**server.env, "ZEROCODE_RATE_DEPLOY": "100000"}
        server.start()
        try:
            client = signed_in(server)
            app = create(client, "A page for a photographer", "html")
            chat(client, app["id"], app["initPrompt"])
            for name, size, quality in SIZES:
                data = encoded(photo(size), "JPEG", quality)
                times = []
                for n in range(runs):
                    started = time.perf_counter()
                    got = client.post(
                        f"/api/apps/{app['id']}/assets",
                        files={"file": (f"photo-{n}.jpg", data, "image/jpeg")},
                    )
                    times.append(time.perf_counter() - started)
                    assert got.status_code == 201, got.text
                seconds = statistics.median(times)
                rows.append(
                    {
                        "picture": name,
                        "bytes": len(data),
                        "seconds": round(seconds, 3),
                        "secondsPerMB": round(seconds / (len(data) / 1_048_576), 3),
                    }
                )
        finally:
            server.stop()
    return rows


def window() -> dict[str, Any]:
    sizes = [{"pixels": f"{w}×{h}", "tokens": image_tokens(w, h)} for w, h in WINDOW_SIZES]
    shot = ImageRef("0" * 64, "image/png", 1920, 1080, 1)
    text = "A landing page like these screenshots"
    plain = message_tokens(UserMessage(text))
    four = message_tokens(UserMessage(text, (shot,) * 4))
    return {"sizes": sizes, "requestWithout": plain, "requestWithFour1080p": four}


def measure(runs: int) -> dict[str, Any]:
    load, busy = [round(x, 2) for x in os.getloadavg()], others()
    return {
        "commit": commit(),
        "runs": runs,
        "loadAverageAtStart": load,
        "otherWork": busy,
        "intake": intake(runs),
        "upload": upload(runs),
        "window": window(),
    }


def write_docs(r: dict[str, Any]) -> None:
    lines = [
        "## The builder's images (issue 41)",
        "",
        f"`bench/images.py` at {r['commit']}, the median of {r['runs']} runs on this machine "
        f"(load average {r['loadAverageAtStart'][0]} at the start"
        + (f"; other work: {', '.join(r['otherWork'])}" if r["otherWork"] else "")
        + "). Pictures are photo-like (noise over gradients), as a phone's photo compresses.",
        "",
        "Taking an upload in (`apps/image_intake.take`: sniffed, bounded, re-encoded with no "
        "metadata):",
        "",
        "| picture | format | pixels | bytes | seconds | seconds per MB |",
        "|---|---|---|---:|---:|---:|",
    ]
    for row in r["intake"]:
        lines.append(
            f"| {row['picture']} | {row['format']} | {row['pixels']} | {row['bytes']:,} | "
            f"{row['seconds']} | {row['secondsPerMB']} |"
        )
    lines += [
        "",
        "The whole upload, `POST /api/apps/{id}/assets` on a real `zerocode serve` (the form "
        "read, the intake, a version, the html preview rebuilt, the model told):",
        "",
        "| picture (JPEG) | bytes | seconds | seconds per MB |",
        "|---|---:|---:|---:|",
    ]
    for row in r["upload"]:
        lines.append(
            f"| {row['picture']} | {row['bytes']:,} | {row['seconds']} | {row['secondsPerMB']} |"
        )
    w = r["window"]
    lines += [
        "",
        "What an image costs the window (OpenAI's rule at high detail: `memory/tokens.py`):",
        "",
        "| pixels | tokens |",
        "|---|---:|",
        *(f"| {s['pixels']} | {s['tokens']:,} |" for s in w["sizes"]),
        "",
        f"A request of one line costs {w['requestWithout']} tokens; with four 1920×1080 "
        f"screenshots, {w['requestWithFour1080p']:,}. The window keeps the newest four images "
        "of the conversation and names older ones in a line each (docs/memory.md).",
    ]
    replace_section("images", lines)


def main() -> None:
    run(__doc__ or "", RESULTS, measure, write_docs, count=("runs", "runs of each", 2, 5))


if __name__ == "__main__":
    main()
