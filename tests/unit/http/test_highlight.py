"""The code view's highlighting: hostile file content comes out escaped, lexers by name."""

from __future__ import annotations

from zerocode.http.highlight import MAX_HIGHLIGHT_BYTES, code_html, diff_html

HOSTILE = b'</pre></div><script>alert(1)</script><img src=x onerror="alert(2)">'


def test_hostile_content_is_escaped_whatever_the_language() -> None:
    for path in ("index.html", "src/App.vue", "script.js", "notes.unknown", "README"):
        _, html = code_html(path, HOSTILE)
        assert "<script" not in html and "<img" not in html and "</pre></div><" not in html
        assert "&lt;script&gt;" in html or "&lt;/" in html
    diff = diff_html("+" + HOSTILE.decode() + "\n")
    assert "<script" not in diff and "&lt;script&gt;" in diff


def test_lexers_by_file_name_and_fallbacks() -> None:
    assert code_html("index.html", b"<h1>x</h1>")[0] == "HTML"
    assert code_html("src/App.vue", b"<template></template>")[0] == "HTML"
    assert code_html("main.js", b"let x = 1")[0] == "JavaScript"
    assert code_html("style.css", b"h1{}")[0] == "CSS"
    assert code_html("data.bin", b"\xff\xfe\x00")[0] == "binary"
    assert code_html("big.js", b"x" * (MAX_HIGHLIGHT_BYTES + 1))[0] == "Text only"
    assert diff_html("") == ""
