"""Parsing html / multi_file answers, and saving them all-or-nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from zerocode.adapters.local.workspace import LocalWorkspace
from zerocode.apps.workspace import PathRefused, WorkspaceFull, WorkspaceLimits
from zerocode.engine.codegen import (
    CodeParseError,
    has_code,
    parse_html,
    parse_multi_file,
    save_files,
)
from zerocode.errors import InvalidInput

PAGE = "<!DOCTYPE html>\n<html>\n<body><h1>Hi</h1></body>\n</html>"


def fenced(lang: str, body: str) -> str:
    return f"```{lang}\n{body}\n```"


def test_parse_html_takes_the_first_html_block() -> None:
    text = f"Here is your page:\n\n{fenced('html', PAGE)}\n\nand another\n{fenced('html', '<p>')}"
    assert parse_html(text) == {"index.html": PAGE + "\n"}


@pytest.mark.parametrize(
    "opening", ["```html", "```HTML", "``` html", "```htm", "  ```html", "```html title=index.html"]
)
def test_parse_html_accepts_fence_variants(opening: str) -> None:
    assert parse_html(f"{opening}\n<div>x</div>\n```")["index.html"] == "<div>x</div>\n"


def test_parse_html_keeps_inner_backticks_and_indentation() -> None:
    body = "<div>\n  <pre>`code` and ``` inline</pre>\n</div>"
    assert parse_html(fenced("html", body))["index.html"] == body + "\n"


def test_parse_html_ignores_other_languages() -> None:
    text = fenced("bash", "npm i") + "\n" + fenced("html", "<main>x</main>")
    assert parse_html(text) == {"index.html": "<main>x</main>\n"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("Sure! What colour would you like?", "no ```html code block"),
        (fenced("css", "body{}"), "no ```html code block"),
        (fenced("", "<div>x</div>"), "no ```html code block"),
        (fenced("html", ""), "empty"),
        (fenced("html", "   \n\n  "), "empty"),
        ("```html\n<html><body>cut off mid-", "not closed"),
        (fenced("html", "Here is a lovely page about cats."), "does not contain HTML markup"),
        (fenced("html", "1 < 2 and 3 > 2"), "does not contain HTML markup"),
    ],
)
def test_parse_html_failures(text: str, message: str) -> None:
    with pytest.raises(CodeParseError, match=message) as exc:
        parse_html(text)
    assert isinstance(exc.value, InvalidInput) and exc.value.code == "code_parse_error"


def test_parse_multi_file() -> None:
    text = "\n".join(
        [
            "Files:",
            fenced("html", PAGE),
            fenced("css", "h1 { color: red; }"),
            fenced("javascript", "console.log(1)"),
        ]
    )
    assert parse_multi_file(text) == {
        "index.html": PAGE + "\n",
        "style.css": "h1 { color: red; }\n",
        "script.js": "console.log(1)\n",
    }


def test_parse_multi_file_accepts_js_and_any_order() -> None:
    text = "\n".join([fenced("js", "let a = 1"), fenced("css", "p{}"), fenced("html", PAGE)])
    assert parse_multi_file(text)["script.js"] == "let a = 1\n"


def test_parse_multi_file_without_css_or_script_writes_empty_files() -> None:
    assert parse_multi_file(fenced("html", PAGE)) == {
        "index.html": PAGE + "\n",
        "style.css": "",
        "script.js": "",
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("no code at all", "no ```html"),
        (fenced("css", "p{}") + "\n" + fenced("js", "x()"), "no ```html"),
        (fenced("html", "just words") + "\n" + fenced("css", "p{}"), "HTML markup"),
        (fenced("html", PAGE) + "\n" + fenced("css", " "), "```css code block is empty"),
        (
            fenced("html", PAGE) + "\n" + fenced("javascript", ""),
            "```javascript code block is empty",
        ),
        (fenced("html", PAGE) + "\n```js\nlet a =", "```javascript code block is not closed"),
    ],
)
def test_parse_multi_file_failures(text: str, message: str) -> None:
    with pytest.raises(CodeParseError, match=message):
        parse_multi_file(text)


def test_has_code() -> None:
    assert has_code(fenced("html", "<div/>"))
    assert has_code("```js\nunfinished")
    assert has_code(fenced("css", "p{}"))
    assert not has_code("Which colour do you prefer?")
    assert not has_code("Run this:\n" + fenced("bash", "npm run dev"))


def test_save_files(tmp_path: Path) -> None:
    ws = LocalWorkspace(tmp_path)
    files = parse_multi_file(fenced("html", PAGE) + "\n" + fenced("css", "p{}"))
    before = {"index.html": None, "style.css": None, "script.js": None}
    assert save_files(ws, "app1", files) == before  # each path written, and it was new
    assert ws.read("app1", "index.html") == (PAGE + "\n").encode()
    assert ws.read("app1", "script.js") == b""
    again = save_files(ws, "app1", {"index.html": "<h1>new</h1>"})
    assert again == {"index.html": (PAGE + "\n").encode()}  # what it held before


def test_save_files_validates_every_path_before_writing(tmp_path: Path) -> None:
    ws = LocalWorkspace(tmp_path)
    with pytest.raises(PathRefused):
        save_files(ws, "app1", {"index.html": "<h1>x</h1>", "../evil.js": "x"})
    assert ws.list("app1") == []
    with pytest.raises(CodeParseError):
        save_files(ws, "app1", {})


def test_save_files_undoes_a_half_done_save(tmp_path: Path) -> None:
    ws = LocalWorkspace(tmp_path, WorkspaceLimits(max_file_bytes=20))
    ws.write("app1", "index.html", b"<h1>old</h1>")
    with pytest.raises(WorkspaceFull):
        save_files(
            ws, "app1", {"index.html": "<h1>new</h1>", "style.css": "p{}", "script.js": "x" * 21}
        )
    assert ws.read("app1", "index.html") == b"<h1>old</h1>"
    assert [f.path for f in ws.list("app1")] == ["index.html"]
