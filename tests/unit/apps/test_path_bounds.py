"""The byte bounds of a path (255 per name part, 1,024 per path, in UTF-8): one rule for
source paths (clean_path) and output paths (the build's hand-over), at their exact edges."""

from __future__ import annotations

import pytest

from zerocode.apps.path_bounds import MAX_PART_BYTES, MAX_PATH_BYTES, too_long, utf8_size
from zerocode.apps.workspace import PathRefused, clean_path
from zerocode.publishing.output_archive import refuse_name

# Names of exactly 255 bytes, and one byte (or one character) more, in 1- to 4-byte UTF-8.
EDGES = [
    ("a" * 255, "a" * 256),
    ("é" * 127 + "a", "é" * 128),  # 2 bytes each: 128 characters are 256 bytes
    ("日" * 85, "日" * 85 + "a"),  # 3 bytes each: 255, then 256
    ("😀" * 63 + "abc", "😀" * 64),  # 4 bytes each: 252 + 3, then 256
]


def long_path(size: int, last: str = "f") -> str:
    """A path of exactly ``size`` bytes in UTF-8, every part within 255 bytes."""
    head = "/".join(["d" * 200] * 4) + "/"  # 804 bytes
    rest = size - len(head)
    tail = last * (rest // utf8_size(last))
    tail += "f" * (rest - utf8_size(tail))
    assert utf8_size(head + tail) == size
    return head + tail


@pytest.mark.parametrize(("fits", "over"), EDGES)
def test_a_name_part_may_have_255_bytes_not_256(fits: str, over: str) -> None:
    assert utf8_size(fits) == MAX_PART_BYTES and utf8_size(over) > MAX_PART_BYTES
    assert len(over) <= 256  # counted in bytes: "é" * 128 is 128 characters
    assert clean_path(f"src/{fits}") == f"src/{fits}"
    assert refuse_name(f"dist/{fits}") is None
    with pytest.raises(PathRefused) as refused:
        clean_path(f"src/{over}")
    assert refused.value.code == "path_refused"
    assert "a part longer than 255 bytes" in refused.value.message
    assert f"({utf8_size(over)} bytes in UTF-8)" in refused.value.message
    assert refuse_name(f"dist/{over}") == too_long(over)


@pytest.mark.parametrize("last", ["f", "é", "日", "😀"])
def test_a_path_may_have_1024_bytes_not_1025(last: str) -> None:
    fits, over = long_path(MAX_PATH_BYTES, last), long_path(MAX_PATH_BYTES + 1, last)
    assert clean_path(fits) == fits
    assert refuse_name(fits) is None
    with pytest.raises(PathRefused) as refused:
        clean_path(over)
    assert "a path longer than 1024 bytes (1025 bytes in UTF-8)" in refused.value.message
    assert refuse_name(over) == "a path longer than 1024 bytes (1025 bytes in UTF-8)"


def test_the_refusal_says_the_bounds_and_shows_only_the_paths_start() -> None:
    with pytest.raises(PathRefused) as refused:
        clean_path("src/" + "x" * 100_000 + ".js")
    message = refused.value.message
    assert len(message) < 300
    assert "at most 255 bytes per name and 1024 bytes per path, in UTF-8" in message
    assert message.startswith("path 'src/xxx") and "…" in message


def test_a_site_path_under_dist_is_output_not_source() -> None:
    """Vite copies a Vue app's public/ to the site's root: the source public/dist/a.txt is
    the site's dist/a.txt, which the output rule takes and the source rule refuses."""
    assert clean_path("public/dist/a.txt") == "public/dist/a.txt"
    assert refuse_name("dist/a.txt") is None
    with pytest.raises(PathRefused):
        clean_path("dist/a.txt")


def test_a_lone_surrogate_is_counted_not_a_crash() -> None:
    assert utf8_size("\ud800") == 3
    assert too_long("\ud800" * 86) is not None  # 258 bytes
