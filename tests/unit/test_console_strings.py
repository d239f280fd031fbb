"""The console's two languages say the same things: every key of web/strings_en.js has a
Chinese string in web/strings_zh.js and none is left over, and each string's placeholders
are the same in both (a missing one would show as "{n}" to a reader)."""

from __future__ import annotations

import re
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "web"
ENTRY = re.compile(r'^\s*"([\w.]+)":\s*"((?:[^"\\]|\\.)*)"', re.M)


def strings(name: str) -> dict[str, str]:
    return dict(ENTRY.findall((WEB / name).read_text(encoding="utf-8")))


def test_both_languages_have_the_same_keys_and_placeholders() -> None:
    en, zh = strings("strings_en.js"), strings("strings_zh.js")
    assert len(en) > 300  # the files are read (each holds hundreds)
    assert sorted(set(en) - set(zh)) == [] and sorted(set(zh) - set(en)) == []
    for key, text in en.items():
        assert set(re.findall(r"\{(\w+)\}", text)) == set(re.findall(r"\{(\w+)\}", zh[key])), key
