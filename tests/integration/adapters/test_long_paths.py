"""Long paths against real storage: a name the file system itself refuses (a real
ENAMETOOLONG) is ``path_refused`` from the local workspace, never an OSError; a key S3 would
refuse is ``path_refused`` from the S3 workspace (moto); a model's write_file with a 300-byte
name is a failed tool result, and its next call works."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import boto3
import pytest

from zerocode.adapters.aws.s3_workspace import S3Workspace
from zerocode.adapters.local.workspace import LocalWorkspace
from zerocode.apps.workspace import FileMissing, PathRefused
from zerocode.engine.tools import ToolBox
from zerocode.memory.messages import FAILED_PREFIX, ToolCall
from zerocode.publishing.builds import snapshot

LONG = "n" * 250 + ".js"  # 253 bytes: within the path rules
TOO_LONG = "n" * 297 + ".js"  # 300 bytes


def deep_root(tmp_path: Path, length: int) -> Path:
    """A directory whose absolute path is ``length`` bytes: its files' paths can pass
    PATH_MAX (4096) while every part and every workspace path is within the rules."""
    root = tmp_path
    while len(str(root)) < length - 250:
        root = root / ("d" * 200)
    root = root / ("e" * (length - len(str(root)) - 1))
    root.mkdir(parents=True)
    assert len(str(root).encode()) == length
    return root


def plant(app_dir: Path, directories: str, name: str) -> None:
    """A file made one directory at a time (no whole path is ever given to the kernel)."""
    fd = os.open(app_dir, os.O_RDONLY | os.O_DIRECTORY)
    for part in directories.split("/"):
        os.mkdir(part, dir_fd=fd)
        sub = os.open(part, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(os.open(name, os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd))
    os.close(fd)


def test_a_name_the_file_system_refuses_is_path_refused_never_an_os_error(
    tmp_path: Path,
) -> None:
    ws = LocalWorkspace(deep_root(tmp_path, 3900))
    ws.write("app1", "index.html", b"<h1>fits</h1>")
    path = f"src/{LONG}"
    assert len(str(ws.path("app1") / path).encode()) > 4096
    with pytest.raises(PathRefused, match=r"refused by the server's file system \(File name too"):
        ws.write("app1", path, b"never written")
    assert not (ws.path("app1") / "src").exists()  # refused before anything was made
    with pytest.raises(PathRefused, match="File name too long"):
        ws.read("app1", path)
    assert [f.path for f in ws.list("app1")] == ["index.html"]
    # Such a file made another way: reading it is refused and the listing leaves it out (so
    # the app's snapshot still reads every listed file); deleting it works.
    plant(ws.path("app1"), "src", LONG)
    assert (ws.path("app1") / "src").is_dir()
    assert [f.path for f in ws.list("app1")] == ["index.html"]
    with pytest.raises(PathRefused, match="File name too long"):
        ws.read("app1", path)
    ws.delete("app1", path)
    with pytest.raises(FileMissing):
        ws.delete("app1", path)


def test_a_file_made_before_the_bounds_is_left_out_of_the_listing(tmp_path: Path) -> None:
    """A path past 1,024 bytes (each part within 255) from before the rule: the listing
    leaves it out, as the S3 workspace leaves out keys that are not clean paths, so the
    app's snapshot (every listed file read) still works."""
    ws = LocalWorkspace(tmp_path / "ws")
    ws.write("app1", "index.html", b"<h1>fits</h1>")
    deep = "/".join(["d" * 250] * 5)
    plant(ws.path("app1"), deep, "old.js")  # 1,261 bytes in all
    assert [f.path for f in ws.list("app1")] == ["index.html"]
    assert snapshot(ws, "app1").files == {"index.html": b"<h1>fits</h1>"}
    with pytest.raises(PathRefused, match="a path longer than 1024 bytes"):
        ws.read("app1", f"{deep}/old.js")


def call(tools: ToolBox, name: str, **args: str) -> tuple[bool, str]:
    outcome = tools.run(ToolCall(f"call_{name}", name, json.dumps(args)))
    return outcome.result.ok, outcome.result.content


def test_a_models_long_names_are_failed_tool_results_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    ws = LocalWorkspace(deep_root(tmp_path, 3900))
    tools = ToolBox(ws, "app1")
    for name in ("write_file", "read_file"):
        ok, said = call(tools, name, path=f"src/{TOO_LONG}", content="x")
        assert not ok and said.startswith(FAILED_PREFIX), said
        assert "a part longer than 255 bytes (300 bytes in UTF-8)" in said
    ok, said = call(tools, "write_file", path=f"src/{LONG}", content="x")  # the kernel's no
    assert not ok and "File name too long" in said, said
    ok, said = call(tools, "write_file", path="src/main.js", content="console.log(1)")
    assert ok, said
    assert [f.path for f in ws.list("app1")] == ["src/main.js"]


def test_a_path_whose_s3_key_would_pass_1024_bytes_is_refused(aws: None) -> None:
    s3: Any = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="zc-ws")
    ws = S3Workspace(s3, "zc-ws")  # keys "workspaces/app1/{path}": 16 bytes before the path
    head = "/".join(["d" * 200] * 4) + "/"
    fits, over = head + "f" * (1008 - len(head)), head + "f" * (1009 - len(head))
    ws.write("app1", fits, b"x")
    assert ws.read("app1", fits) == b"x"
    with pytest.raises(PathRefused, match="storage key would be 1025 bytes, longer than S3's"):
        ws.write("app1", over, b"x")
    with pytest.raises(PathRefused, match="a part longer than 255 bytes"):
        ws.write("app1", f"src/{TOO_LONG}", b"x")
    assert [f.path for f in ws.list("app1")] == [fits]
