"""A build's text files precompressed when it is placed (issue 44): each copy decodes to its
original; only text files worth it are compressed; a hostile build's output costs the host a
bounded amount (each file, the whole build) and cannot plant copies of its own; the choice by
``Accept-Encoding`` follows the header's weights; a Vite build's hashed assets are told
apart from the files a builder may replace."""

from __future__ import annotations

import gzip
from pathlib import Path

import brotli
import pytest

from zerocode.publishing import encodings
from zerocode.publishing.encodings import (
    ENCODED_DIR,
    accepted,
    encoded,
    is_immutable,
    precompress,
)

SCRIPT = ("export const words = ['" + "otter', '" * 400 + "'];\n").encode()


def site(root: Path, files: dict[str, bytes]) -> Path:
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return root


def test_each_copy_decodes_to_its_original_and_only_text_worth_it_is_compressed(
    tmp_path: Path,
) -> None:
    page = b"<!doctype html><title>Otters</title>" + b"<p>otters swim</p>" * 100
    root = site(
        tmp_path,
        {
            "index.html": page,
            "assets/index-B3x9_kQz.js": SCRIPT,
            "assets/logo.png": b"\x89PNG" + bytes(4000),  # an image: as it is
            "tiny.css": b"p{}",  # too small to gain
            "data.json": b'{"a": [' + b"1, " * 300 + b"1]}",
        },
    )
    done = precompress(root)
    assert done.files == 3 and done.skipped == 0
    assert done.original_bytes == len(page) + len(SCRIPT) + (root / "data.json").stat().st_size
    assert 0 < done.br_bytes < done.gzip_bytes < done.original_bytes
    assert "compressed 3 file(s)" in done.said()
    for name in ("index.html", "assets/index-B3x9_kQz.js", "data.json"):
        original = (root / name).read_bytes()
        br = (root / ENCODED_DIR / f"{name}.br").read_bytes()
        gz = (root / ENCODED_DIR / f"{name}.gz").read_bytes()
        assert brotli.decompress(br) == original and gzip.decompress(gz) == original
    assert not (root / ENCODED_DIR / "assets/logo.png.br").exists()
    assert not (root / ENCODED_DIR / "tiny.css.br").exists()


def test_a_hostile_outputs_own_copies_are_replaced_and_its_size_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build that ships ``.encoded/index.html.br`` of its own (another page for brotli
    clients) has it replaced by the platform's; files past a bound are served as they are."""
    monkeypatch.setattr(encodings, "MAX_FILE_BYTES", 20_000)
    monkeypatch.setattr(encodings, "MAX_TOTAL_BYTES", 30_000)
    big = b"<p>x</p>" * 4000  # 32 KB: over the per-file bound
    root = site(
        tmp_path,
        {
            "index.html": b"<h1>the real page</h1>" * 50,
            f"{ENCODED_DIR}/index.html.br": brotli.compress(b"<h1>a fake page</h1>"),
            f"{ENCODED_DIR}/planted.js.gz": b"not gzip",
            "big.html": big,
            "a.js": SCRIPT,  # 3.6 KB each: the build's bound is reached on the way
            **{f"more/{n}.js": SCRIPT for n in range(10)},
        },
    )
    done = precompress(root)
    copy = (root / ENCODED_DIR / "index.html.br").read_bytes()
    assert brotli.decompress(copy) == (root / "index.html").read_bytes()
    assert not (root / ENCODED_DIR / "planted.js.gz").exists()
    assert not (root / ENCODED_DIR / "big.html.br").exists()
    compressed = sum(1 for p in (root / ENCODED_DIR).rglob("*.br"))
    assert compressed == done.files and done.skipped >= 2  # big.html, and past the total
    assert done.original_bytes <= 30_000


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("gzip, deflate, br", ["br", "gzip"]),
        ("gzip", ["gzip"]),
        ("br;q=0, gzip", ["gzip"]),
        ("BR; Q=0.5", ["br"]),
        ("*", ["br", "gzip"]),
        ("*, gzip;q=0", ["br"]),
        ("identity", []),
        ("", []),
        ("gzip;q=nonsense", []),
        (",,;;", []),
    ],
)
def test_accept_encoding_is_read_with_its_weights(header: str, expected: list[str]) -> None:
    assert accepted(header) == expected


def test_the_copy_sent_is_the_one_asked_for_and_present(tmp_path: Path) -> None:
    root = site(tmp_path, {"index.html": b"<p>hello otters</p>" * 40})
    precompress(root)
    file = root / "index.html"
    assert encoded(root, file, "br, gzip") == (root / ENCODED_DIR / "index.html.br", "br")
    assert encoded(root, file, "gzip") == (root / ENCODED_DIR / "index.html.gz", "gzip")
    assert encoded(root, file, "identity") is None
    (root / ENCODED_DIR / "index.html.br").unlink()
    assert encoded(root, file, "br, gzip") == (root / ENCODED_DIR / "index.html.gz", "gzip")
    assert encoded(root, tmp_path.parent / "elsewhere.html", "br") is None


@pytest.mark.parametrize(
    ("path", "hashed"),
    [
        ("assets/index-B3x9_kQz.js", True),
        ("assets/AboutView-Cz1k2L9a.css", True),
        ("index.html", False),
        ("assets/summer-vacation.png", False),  # an upload: a builder may replace it
        ("assets/logo.png", False),
        ("assets/index-B3x9_kQz.html", False),  # a page is always revalidated
        ("sub/assets/index-B3x9_kQz.js", False),  # not where Vite puts its files
        ("js/app-B3x9_kQz.js", False),
    ],
)
def test_only_vites_hashed_scripts_and_styles_are_cached_a_year(path: str, *, hashed: bool) -> None:
    assert is_immutable(path) is hashed
