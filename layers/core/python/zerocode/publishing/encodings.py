"""Compressed copies of a build's text files, made once when the build's output is placed, and
the choice of one by a request's ``Accept-Encoding`` (issue 44: a site's HTML, JS, CSS, SVG
and JSON go out as brotli or gzip, never compressed per request).

The copies live beside the output, under ``.encoded/`` (``.encoded/assets/app-1a2b.js.br``),
which no site serves by its own path. A copy is kept only where it is smaller. The output may
be a hostile app's: what is compressed is bounded (each file, the whole build), so one
tenant's build costs the host at most a known amount of CPU (:data:`MAX_FILE_BYTES`,
:data:`MAX_TOTAL_BYTES`); past the bound files are served as they are.
"""

from __future__ import annotations

import gzip
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import brotli

from zerocode.publishing.media_types import media_type

ENCODED_DIR = ".encoded"
ENCODINGS = (("br", ".br"), ("gzip", ".gz"))  # preferred first
COMPRESSIBLE = frozenset(
    {
        "text/html",
        "text/css",
        "text/javascript",
        "text/plain",
        "application/json",
        "application/manifest+json",
        "application/xml",
        "image/svg+xml",
    }
)
MIN_BYTES = 256  # smaller files gain nothing worth a header
MAX_FILE_BYTES = 4 * 1024 * 1024  # a file larger than this is served as it is
MAX_TOTAL_BYTES = 16 * 1024 * 1024  # what one build's files may cost in compression
# Brotli's best quality (about 1 s of CPU per MiB) for a build's first 2 MiB of text, in
# files of at most 512 KiB; a fast one (and gzip's default level) past that.
BEST_BUDGET, BEST_UP_TO = 2 * 1024 * 1024, 512 * 1024
# Vite's hashed file names (``assets/index-B3x9_kQz.js``): their content never changes.
_HASHED = re.compile(r"assets/[^/]+-[A-Za-z0-9_-]{8}\.(?:js|css)")


@dataclass(frozen=True)
class Compressed:
    """What :func:`precompress` did: files compressed, their bytes, and the copies' bytes."""

    files: int = 0
    original_bytes: int = 0
    br_bytes: int = 0
    gzip_bytes: int = 0
    skipped: int = 0  # compressible files past a bound, served as they are
    seconds: float = 0.0
    head: tuple[str, ...] = ()  # what the page was given (publishing/site_head.py)

    def said(self) -> str:
        """The build log's lines: what the page was given, what was compressed."""
        given = f"zerocode: the page was given {', '.join(self.head)}\n" if self.head else ""
        return given + self._compressed()

    def _compressed(self) -> str:
        if not self.files and not self.skipped:
            return "zerocode: no text file to compress"
        line = (
            f"zerocode: compressed {self.files} file(s), {self.original_bytes} bytes → "
            f"{self.br_bytes} brotli, {self.gzip_bytes} gzip, in {self.seconds:.2f} s"
        )
        if self.skipped:
            line += f"; {self.skipped} over the bound served uncompressed"
        return line


def precompress(root: Path) -> Compressed:
    """Brotli and gzip copies of ``root``'s text files under ``root/.encoded/``."""
    started = time.monotonic()
    shutil.rmtree(root / ENCODED_DIR, ignore_errors=True)  # only the platform's copies
    files = original = br_total = gz_total = skipped = 0
    budget, best = MAX_TOTAL_BYTES, BEST_BUDGET
    for path in sorted(root.rglob("*")):
        if path.is_symlink() or not path.is_file():
            continue
        rel = path.relative_to(root)
        if rel.parts[0] == ENCODED_DIR or media_type(path.name) not in COMPRESSIBLE:
            continue
        size = path.stat().st_size
        if size < MIN_BYTES:
            continue
        if size > MAX_FILE_BYTES or size > budget:
            skipped += 1
            continue
        budget -= size
        data = path.read_bytes()
        finest = size <= BEST_UP_TO and size <= best
        best -= size if finest else 0
        br = brotli.compress(data, quality=11 if finest else 5)
        gz = gzip.compress(data, compresslevel=9 if finest else 6, mtime=0)
        kept = False
        for suffix, copy in ((".br", br), (".gz", gz)):
            if len(copy) < size:
                target = root / ENCODED_DIR / f"{rel}{suffix}"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(copy)
                kept = True
        if kept:
            files += 1
            original += size
            br_total += min(len(br), size)
            gz_total += min(len(gz), size)
    return Compressed(files, original, br_total, gz_total, skipped, time.monotonic() - started)


def accepted(header: str) -> list[str]:
    """The encodings of :data:`ENCODINGS` a request's ``Accept-Encoding`` accepts, preferred
    first (brotli before gzip; ``q=0`` refuses one, ``*`` accepts what is not named)."""
    weights: dict[str, float] = {}
    for part in header.split(","):
        name, _, params = part.strip().partition(";")
        name = name.strip().lower()
        if not name:
            continue
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        weights[name] = q
    star = weights.get("*", 0.0)
    return [name for name, _ in ENCODINGS if weights.get(name, star) > 0]


def encoded(root: Path, file: Path, header: str) -> tuple[Path, str] | None:
    """The compressed copy of ``file`` (under ``root``) to send for ``Accept-Encoding``
    ``header``, and its encoding; None: send the file as it is."""
    try:
        rel = file.relative_to(root)
    except ValueError:
        return None
    suffixes = dict(ENCODINGS)
    for name in accepted(header):
        copy = root / ENCODED_DIR / f"{rel}{suffixes[name]}"
        if copy.is_file() and not copy.is_symlink():
            return copy, name
    return None


def compressible(name: str) -> bool:
    return media_type(name) in COMPRESSIBLE


SITE_CACHE, PREVIEW_CACHE = "no-cache", "no-store"
IMMUTABLE_CACHE = "public, max-age=31536000, immutable"  # a site's hashed assets


def site_cache(path: str, *, preview: bool) -> str:
    """The ``Cache-Control`` of a build's file at ``path``, the same locally and on AWS: a
    preview's never kept (it changes with every turn), a site's hashed assets a year, the
    rest of a site revalidated (its ETag, so a rollback shows at once)."""
    if preview:
        return PREVIEW_CACHE
    return IMMUTABLE_CACHE if is_immutable(path) else SITE_CACHE


def is_immutable(path: str) -> bool:
    """Whether a site's file (its path in the build) is one of Vite's hashed scripts or
    styles, whose name changes whenever its content does: a year in a cache. Nothing else is
    (revalidated instead), and nothing else can be named so there: the site's ``assets/``
    holds only Vite's output and the builder's uploads, which are images, and no tool, answer
    or hand edit writes into it (apps/assets.py)."""
    return bool(_HASHED.fullmatch(path))
