"""clean_path: what a workspace path may be, for every adapter and route alike."""

from __future__ import annotations

import pytest

from zerocode.apps.workspace import PLATFORM_TEMP_PREFIXES, PathRefused, clean_path

BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
INVISIBLE = "\u200b\u200c\u200d\ufeff\u2060\u00ad\u180e\u034f\u3164\ufe0f\U000e0041"


@pytest.mark.parametrize(
    ("char", "said"),
    [
        *((c, "bidirectional control") for c in BIDI),
        *(
            (c, "invisible or non-printing")
            for c in [*INVISIBLE, "\u2028", "\u2029", "\u0085", "\u00a0", "\u3000", "\ue000"]
        ),
    ],
)
def test_bidi_invisible_and_format_characters_are_refused_saying_so(char: str, said: str) -> None:
    with pytest.raises(PathRefused) as refused:
        clean_path(f"src/Safe{char}.vue")
    assert f"U+{ord(char):04X}" in refused.value.message
    assert said in refused.value.message


@pytest.mark.parametrize(
    "path",
    [".zc-tmp-0123456789abcdef", "src/.zc-tmp-x", ".zc-tmp-dir/App.vue", "a/b/.zc-tmp-"],
)
def test_the_platforms_temporary_names_are_refused(path: str) -> None:
    with pytest.raises(PathRefused) as refused:
        clean_path(path)
    assert "temporary files" in refused.value.message
    assert all(prefix in refused.value.message for prefix in PLATFORM_TEMP_PREFIXES)


@pytest.mark.parametrize(
    "path",
    [
        "src/App.vue",
        "src/日本語.vue",
        "src/café.vue",
        "src/Ünïcödé/ok.js",
        "src/my file.js",
        "zc-tmp-not-hidden.txt",
        "src/x.zc-tmp-y",
        "public/emoji-😀.txt",
    ],
)
def test_visible_names_are_kept(path: str) -> None:
    assert clean_path(path) == path
