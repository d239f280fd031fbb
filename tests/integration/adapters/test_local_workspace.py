"""LocalWorkspace specifics: symbolic links never lead out of the app directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zerocode.adapters.local.workspace import LocalWorkspace
from zerocode.apps.workspace import FileInfo, FileMissing, PathRefused


@pytest.fixture
def ws(tmp_path: Path) -> LocalWorkspace:
    return LocalWorkspace(tmp_path / "ws")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside"
    target.mkdir()
    (target / "secret.txt").write_text("secret")
    return target


def test_path_is_a_real_directory_per_app(ws: LocalWorkspace, tmp_path: Path) -> None:
    app_dir = ws.path("app1")
    assert app_dir.is_dir() and app_dir == (tmp_path / "ws" / "app1").resolve()
    ws.write("app1", "src/App.vue", b"x")
    assert (app_dir / "src" / "App.vue").read_bytes() == b"x"
    with pytest.raises(PathRefused):
        ws.path("../escape")


def test_file_link_to_outside_is_refused(ws: LocalWorkspace, outside: Path) -> None:
    app_dir = ws.path("app1")
    (app_dir / "leak.txt").symlink_to(outside / "secret.txt")
    with pytest.raises(PathRefused):
        ws.read("app1", "leak.txt")
    with pytest.raises(PathRefused):
        ws.write("app1", "leak.txt", b"overwritten")
    with pytest.raises(PathRefused):
        ws.delete("app1", "leak.txt")
    assert (outside / "secret.txt").read_text() == "secret"
    assert (app_dir / "leak.txt").is_symlink()


def test_directory_link_to_outside_is_refused(ws: LocalWorkspace, outside: Path) -> None:
    app_dir = ws.path("app1")
    (app_dir / "src").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused):
        ws.read("app1", "src/secret.txt")
    with pytest.raises(PathRefused):
        ws.write("app1", "src/secret.txt", b"overwritten")
    with pytest.raises(PathRefused):
        ws.write("app1", "src/new.txt", b"planted")
    with pytest.raises(PathRefused):
        ws.delete("app1", "src/secret.txt")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret"
    assert ws.list("app1") == []  # links are not source files


def test_links_inside_the_app_are_readable_but_never_written_through(ws: LocalWorkspace) -> None:
    ws.write("app1", "src/App.vue", b"real")
    app_dir = ws.path("app1")
    (app_dir / "alias.vue").symlink_to(app_dir / "src" / "App.vue")
    (app_dir / "lib").symlink_to(app_dir / "src", target_is_directory=True)
    assert ws.read("app1", "alias.vue") == b"real"
    assert ws.read("app1", "lib/App.vue") == b"real"
    with pytest.raises(PathRefused, match="link"):
        ws.write("app1", "alias.vue", b"through the link")
    with pytest.raises(PathRefused, match="link"):
        ws.write("app1", "lib/App.vue", b"through the link")
    assert ws.read("app1", "src/App.vue") == b"real"


def test_dangling_and_relative_escaping_links(ws: LocalWorkspace, outside: Path) -> None:
    app_dir = ws.path("app1")
    (app_dir / "dangling").symlink_to(outside / "not-there.txt")
    (app_dir / "rel").symlink_to(Path("..") / ".." / "outside" / "secret.txt")
    for name in ("dangling", "rel"):
        with pytest.raises(PathRefused):
            ws.read("app1", name)
        with pytest.raises(PathRefused):
            ws.write("app1", name, b"x")
    assert not (outside / "not-there.txt").exists()


def test_link_loops_are_refused(ws: LocalWorkspace) -> None:
    app_dir = ws.path("app1")
    (app_dir / "x").symlink_to(app_dir / "y")
    (app_dir / "y").symlink_to(app_dir / "x")
    for path in ("x", "x/z"):
        with pytest.raises(PathRefused):
            ws.read("app1", path)
        with pytest.raises(PathRefused):
            ws.write("app1", path, b"1")
    with pytest.raises(PathRefused):
        ws.delete("app1", "x")


def test_app_directory_that_is_a_link_is_refused(ws: LocalWorkspace, outside: Path) -> None:
    (ws.root / "app1").symlink_to(outside, target_is_directory=True)
    with pytest.raises(PathRefused):
        ws.read("app1", "secret.txt")
    with pytest.raises(PathRefused):
        ws.write("app1", "secret.txt", b"x")
    assert ws.delete_app("app1") == 0  # removes the link, not what it points to
    assert (outside / "secret.txt").read_text() == "secret"


def test_directories_are_not_files(ws: LocalWorkspace) -> None:
    ws.write("app1", "src/App.vue", b"x")
    with pytest.raises(PathRefused):
        ws.read("app1", "src")
    with pytest.raises(PathRefused):
        ws.write("app1", "src", b"x")
    with pytest.raises(PathRefused):
        ws.delete("app1", "src")
    with pytest.raises(PathRefused):  # a file where a directory is needed
        ws.write("app1", "src/App.vue/x.js", b"x")
    with pytest.raises(FileMissing):
        ws.delete("app1", "src/App.vue/x.js")


def test_atomic_write_leaves_no_temporary_files(ws: LocalWorkspace) -> None:
    for i in range(5):
        ws.write("app1", "src/App.vue", f"version {i}".encode())
    ws.write("app1", "index.html", b"<h1>x</h1>")
    app_dir = ws.path("app1")
    found = sorted(str(p.relative_to(app_dir)) for p in app_dir.rglob("*") if p.is_file())
    assert found == ["index.html", "src/App.vue"]
    assert ws.read("app1", "src/App.vue") == b"version 4"


def test_replacing_a_file_swaps_the_inode(ws: LocalWorkspace) -> None:
    """A reader holding the old file keeps a whole old version: nothing is rewritten in place."""
    ws.write("app1", "a.txt", b"old")
    path = ws.path("app1") / "a.txt"
    with path.open("rb") as handle:
        ws.write("app1", "a.txt", b"new")
        assert handle.read() == b"old"
    assert path.read_bytes() == b"new"


def test_list_skips_build_output_and_tooling(ws: LocalWorkspace) -> None:
    ws.write("app1", "src/App.vue", b"x")
    app_dir = ws.path("app1")
    for sub in ("node_modules/vue", "dist/assets", ".git"):
        (app_dir / sub).mkdir(parents=True)
        (app_dir / sub / "file.js").write_text("x")
    assert ws.list("app1") == [FileInfo("src/App.vue", 1)]
    assert ws.delete_app("app1") == 4
    assert not app_dir.exists()


def test_unreadable_permissions_are_not_swallowed(ws: LocalWorkspace) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads everything")
    ws.write("app1", "a.txt", b"x")
    (ws.path("app1") / "a.txt").chmod(0)
    with pytest.raises(PermissionError):
        ws.read("app1", "a.txt")
