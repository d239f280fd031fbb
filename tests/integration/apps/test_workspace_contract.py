"""One contract for every Workspace adapter: a local directory and an S3 prefix (moto)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from zerocode.apps.workspace import (
    DEFAULT_LIMITS,
    FileInfo,
    FileMissing,
    PathRefused,
    Workspace,
    WorkspaceFull,
    WorkspaceLimits,
)

MakeWorkspace = Callable[..., Workspace]
BAD_PATHS = [
    "/etc/passwd",
    "../x",
    "a/../../x",
    "C:\\x",
    "node_modules/x",
    "dist/index.html",
    ".git/config",
    "",
    "   ",
    "a\x00b",
    "src\\App.vue",
    ".",
]


@pytest.fixture(params=["local", "s3"])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> MakeWorkspace:
    if request.param == "local":
        from zerocode.adapters.local.workspace import LocalWorkspace

        return lambda limits=DEFAULT_LIMITS: LocalWorkspace(tmp_path / "ws", limits)
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.aws.s3_workspace import S3Workspace

    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket="zc-workspaces")
    return lambda limits=DEFAULT_LIMITS: S3Workspace(client, "zc-workspaces", limits=limits)


@pytest.fixture
def ws(make: MakeWorkspace) -> Workspace:
    return make()


def test_round_trip(ws: Workspace) -> None:
    ws.write("app1", "index.html", b"<h1>hi</h1>")
    assert ws.read("app1", "index.html") == b"<h1>hi</h1>"
    ws.write("app1", "index.html", b"<h1>bye</h1>")
    assert ws.read("app1", "index.html") == b"<h1>bye</h1>"
    assert ws.list("app1") == [FileInfo("index.html", 12)]
    ws.delete("app1", "index.html")
    assert ws.list("app1") == []
    with pytest.raises(FileMissing):
        ws.read("app1", "index.html")


def test_nested_paths_are_normalised_and_listed_sorted(ws: Workspace) -> None:
    ws.write("app1", "src/components/Hero.vue", b"<template/>")
    ws.write("app1", "./src/App.vue", b"app")
    ws.write("app1", "src//main.js", b"main")
    ws.write("app1", "README.md", b"")
    assert ws.list("app1") == [
        FileInfo("README.md", 0),
        FileInfo("src/App.vue", 3),
        FileInfo("src/components/Hero.vue", 11),
        FileInfo("src/main.js", 4),
    ]
    assert ws.read("app1", "src/App.vue") == b"app"
    assert ws.read("app1", "src/./components/Hero.vue") == b"<template/>"


def test_binary_content_round_trips(ws: Workspace) -> None:
    data = bytes(range(256)) * 4
    ws.write("app1", "public/logo.png", data)
    assert ws.read("app1", "public/logo.png") == data


def test_missing_files(ws: Workspace) -> None:
    with pytest.raises(FileMissing):
        ws.read("app1", "nope.txt")
    with pytest.raises(FileMissing):
        ws.delete("app1", "nope.txt")
    ws.write("app1", "src/a.js", b"a")
    with pytest.raises(FileMissing):
        ws.read("app1", "src/b.js")
    with pytest.raises(FileMissing):
        ws.read("app1", "src/a.js/b.js")
    assert ws.list("never-written") == []


def test_file_size_limit(make: MakeWorkspace) -> None:
    ws = make(WorkspaceLimits(max_file_bytes=10, max_files=5))
    ws.write("app1", "ok.txt", b"x" * 10)
    with pytest.raises(WorkspaceFull, match="11 bytes"):
        ws.write("app1", "big.txt", b"x" * 11)
    with pytest.raises(WorkspaceFull):
        ws.write("app1", "ok.txt", b"x" * 11)
    assert ws.read("app1", "ok.txt") == b"x" * 10
    assert [f.path for f in ws.list("app1")] == ["ok.txt"]


def test_an_image_has_its_own_larger_bound(make: MakeWorkspace) -> None:
    ws = make(WorkspaceLimits(max_file_bytes=10, max_files=5, max_image_bytes=40))
    ws.write("app1", "assets/logo.png", b"x" * 40)
    with pytest.raises(WorkspaceFull, match="41 bytes; the limit is 40"):
        ws.write("app1", "assets/logo.png", b"x" * 41)
    with pytest.raises(WorkspaceFull, match="the limit is 10"):
        ws.write("app1", "assets/logo.txt", b"x" * 11)
    assert ws.read("app1", "assets/logo.png") == b"x" * 40


def test_file_count_limit_applies_to_new_files_only(make: MakeWorkspace) -> None:
    ws = make(WorkspaceLimits(max_file_bytes=100, max_files=3))
    for name in ("a", "b", "c"):
        ws.write("app1", f"src/{name}.js", b"1")
    with pytest.raises(WorkspaceFull, match="3 files"):
        ws.write("app1", "src/d.js", b"1")
    ws.write("app1", "src/a.js", b"replaced")  # replacing is not creating
    assert ws.read("app1", "src/a.js") == b"replaced"
    ws.write("app2", "src/d.js", b"1")  # the limit is per app
    ws.delete("app1", "src/c.js")
    ws.write("app1", "src/d.js", b"1")
    assert [f.path for f in ws.list("app1")] == ["src/a.js", "src/b.js", "src/d.js"]


@pytest.mark.parametrize("path", BAD_PATHS)
def test_path_refusals(ws: Workspace, path: str) -> None:
    with pytest.raises(PathRefused):
        ws.write("app1", path, b"x")
    with pytest.raises(PathRefused):
        ws.read("app1", path)
    with pytest.raises(PathRefused):
        ws.delete("app1", path)
    assert ws.list("app1") == []


@pytest.mark.parametrize("app_id", ["", "../x", "a/b", "a" * 65, "a.b", "é"])
def test_app_id_refusals(ws: Workspace, app_id: str) -> None:
    with pytest.raises(PathRefused):
        ws.write(app_id, "index.html", b"x")
    with pytest.raises(PathRefused):
        ws.list(app_id)
    with pytest.raises(PathRefused):
        ws.delete_app(app_id)


def test_delete_app_is_isolated(ws: Workspace) -> None:
    for app in ("app1", "app10", "app2"):
        ws.write(app, "index.html", app.encode())
        ws.write(app, "src/App.vue", b"x")
    assert ws.delete_app("app1") == 2
    assert ws.list("app1") == []
    with pytest.raises(FileMissing):
        ws.read("app1", "index.html")
    for app in ("app10", "app2"):
        assert ws.read(app, "index.html") == app.encode()
        assert len(ws.list(app)) == 2
    assert ws.delete_app("app1") == 0
    ws.write("app1", "index.html", b"again")  # a deleted app can start over
    assert ws.read("app1", "index.html") == b"again"


def test_apps_do_not_share_files(ws: Workspace) -> None:
    ws.write("app1", "index.html", b"one")
    ws.write("app2", "index.html", b"two")
    assert ws.read("app1", "index.html") == b"one"
    assert ws.read("app2", "index.html") == b"two"
    ws.delete("app1", "index.html")
    assert ws.read("app2", "index.html") == b"two"
