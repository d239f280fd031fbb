"""Prerendering in the real kept browser (issue 44, point 3), on outputs written by hand: the
routes the pages link to are rendered from the output's own files and nothing else; a page
that throws or renders nothing is not kept; a hostile output's prerender is bounded in pages
and time; the output's part writes pages without replacing the app's own files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import shared_loop
from tests.integration.adapters.test_browser_confinement import boxed_or_skip
from zerocode.adapters.local import prerender_browser
from zerocode.adapters.local.browser_pool import BrowserPool
from zerocode.adapters.local.prerender_browser import BrowserPrerender, DirFiles
from zerocode.publishing.prerender import SHELL, Prerendered, place, with_base

SHELL_PAGE = (
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>t</title></head>'
    '<body><div id="app"></div><script src="./app.js"></script></body></html>'
)
APP = """
const views = {
  "/": '<h1>Home</h1><a href="/a">A</a> <a href="/b/c">B</a> <a href="/gone">G</a>' +
       ' <a href="https://elsewhere.example/x">x</a> <a href="/notes.txt">t</a>' +
       ' <a href="/a?x=1#y">again</a> <a href="/_api/items">api</a>',
  "/a": '<h1>A page</h1><a href="/">Home</a>',
  "/gone": '',
};
const path = location.pathname;
fetch("https://elsewhere.example/track").catch(() => {});
fetch("/_api/items").then((r) => { window.apiStatus = r.status; });
if (path === "/b/c") throw new Error("this view breaks");
document.getElementById("app").innerHTML = views[path] ?? "<h1>Unknown</h1>";
"""


def output(tmp_path: Path, app: str = APP) -> Path:
    root = tmp_path / "out"
    root.mkdir()
    (root / "index.html").write_text(SHELL_PAGE)
    (root / "app.js").write_text(app)
    (root / "notes.txt").write_text("notes")
    return root


def render(root: Path) -> Prerendered:
    pool = BrowserPool(boxed_or_skip())
    return shared_loop.run(BrowserPrerender(pool).render(root, "owner-1", "app-1"))


def test_the_linked_routes_are_rendered_from_the_outputs_own_files(tmp_path: Path) -> None:
    root = output(tmp_path)
    done = render(root)
    assert [p.route for p in done.pages] == ["/", "/a"], done
    home, a = done.pages
    assert "<h1>Home</h1>" in home.html and "<h1>A page</h1>" in a.html
    # /b/c threw, /gone rendered nothing: neither is kept, and the rest went on.
    assert done.note == ""
    written = place(root, done.pages)
    assert written == ["/", "/a"]
    assert (root / SHELL).read_text() == SHELL_PAGE  # the app's page as built, for other paths
    assert "<h1>A page</h1>" in (root / "a" / "index.html").read_text()
    assert "<h1>Home</h1>" in (root / "index.html").read_text()
    assert not (root / "b").exists() and not (root / "gone").exists()


def test_a_prerender_is_bounded_in_pages_and_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    many = """
const n = Number(location.pathname.slice(2) || 0);
let links = "";
for (let i = 0; i < 200; i++) links += `<a href="/p${n * 200 + i + 1}">${i}</a>`;
document.getElementById("app").innerHTML = `<h1>Page ${n}</h1>` + links;
"""
    monkeypatch.setattr(prerender_browser, "MAX_ROUTES", 4)
    done = render(output(tmp_path, many))
    assert [p.route for p in done.pages] == ["/", "/p1", "/p2", "/p3"]

    spinning = """
document.getElementById("app").innerHTML = '<h1>Spin</h1><a href="/x">x</a>';
if (location.pathname === "/x") setTimeout(() => { for (;;) {} }, 0);
"""
    monkeypatch.setattr(prerender_browser, "SECONDS", 4.0)
    other = tmp_path / "spin"
    other.mkdir()
    done = render(output(other, spinning))
    assert [p.route for p in done.pages] == ["/"]
    assert done.note.startswith("stopped after 4 s") or "browser failed" in done.note, done.note


def test_the_page_never_reads_past_the_output(tmp_path: Path) -> None:
    root = output(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("the platform's")
    os.symlink(secret, root / "link.txt")
    files = DirFiles(root)
    assert files._read("../secret.txt") is None
    assert files._read("link.txt") is None
    assert files._read("notes.txt") == ("notes.txt", b"notes")
    assert files._read("some/route") == ("index.html", SHELL_PAGE.encode())
    assert files._read("") == ("index.html", SHELL_PAGE.encode())


def test_the_apps_own_files_win_over_a_rendered_page(tmp_path: Path) -> None:
    root = output(tmp_path)
    (root / "a").mkdir()
    (root / "a" / "index.html").write_text("the app's own")
    (root / "b").write_text("a file where the route's folder would go")
    from zerocode.publishing.prerender import Rendered

    pages = [Rendered("/", "<html>home</html>"), Rendered("/a", "<html>a</html>")]
    pages.append(Rendered("/b/c", "<html>c</html>"))
    assert place(root, pages) == ["/"]
    assert (root / "a" / "index.html").read_text() == "the app's own"
    assert (root / "b").read_text().startswith("a file")


def test_the_page_gets_a_base_first_in_its_head(tmp_path: Path) -> None:
    root = output(tmp_path)
    assert with_base(root)
    assert (
        (root / "index.html")
        .read_text()
        .startswith('<!DOCTYPE html><html lang="en"><head><base href="/"><meta charset')
    )
    assert not with_base(root)  # it has one now: never a second
    other = tmp_path / "scheme"
    other.mkdir()
    (other / "index.html").write_text(SHELL_PAGE)
    assert with_base(other, own_origin=False)
    assert "location.pathname" in (other / "index.html").read_text()
