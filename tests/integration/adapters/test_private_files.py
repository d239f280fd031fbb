"""The data directory and the platform's files are private: directories 0700, files 0600
(adapters/local/private.py), SQLite's -wal and -shm included."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from zerocode.adapters.local.private import private_data_dir, private_dir, private_file
from zerocode.adapters.local.workspace import LocalWorkspace
from zerocode.adapters.sqlite.database import SqliteDatabase


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_the_database_and_its_wal_and_shm_are_0600_in_a_0700_directory(tmp_path: Path) -> None:
    data = tmp_path / "data" / "nested"
    db = SqliteDatabase(data / "zerocode.sqlite3")
    try:
        db.conn.execute("CREATE TABLE t (x)")
        db.conn.execute("INSERT INTO t VALUES (1)")
        files = [data / f"zerocode.sqlite3{end}" for end in ("", "-wal", "-shm")]
        assert all(f.exists() for f in files)
        assert [mode(f) for f in files] == [0o600] * 3
        assert mode(data) == mode(data.parent) == 0o700  # every directory it made
    finally:
        db.close()


def test_an_open_database_from_before_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "zerocode.sqlite3"
    SqliteDatabase(path).close()
    for f in tmp_path.glob("zerocode.sqlite3*"):
        f.chmod(0o644)
    SqliteDatabase(path).close()
    assert mode(path) == 0o600


def test_the_data_directory_is_made_private_or_closed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fresh = private_data_dir(tmp_path / "fresh" / ".zerocode")
    assert mode(fresh) == mode(fresh.parent) == 0o700
    old = tmp_path / "old"
    old.mkdir(mode=0o755)
    old.chmod(0o755)
    assert mode(private_data_dir(old)) == 0o700
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp: never changed, only warned about
    with caplog.at_level(logging.WARNING):
        private_data_dir(shared)
    assert mode(shared) == 0o1777 and "open to other users" in caplog.text


def test_private_files_are_made_0600_and_existing_ones_closed(tmp_path: Path) -> None:
    made = private_file(tmp_path / "a")
    assert mode(made) == 0o600 and made.read_bytes() == b""
    old = tmp_path / "b"
    old.write_text("kept")
    old.chmod(0o644)
    assert mode(private_file(old)) == 0o600 and old.read_text() == "kept"
    with pytest.raises(NotADirectoryError):
        private_dir(made)


def test_workspace_files_and_directories_are_private_whatever_the_umask(tmp_path: Path) -> None:
    before = os.umask(0o000)  # the most open: what the platform sets must still hold
    try:
        workspace = LocalWorkspace(tmp_path / "workspaces")
        workspace.write("app1", "src/views/Home.vue", b"<template/>")
        workspace.write("app1", "index.html", b"<h1>hi</h1>")
    finally:
        os.umask(before)
    root = tmp_path / "workspaces"
    assert mode(root) == 0o700
    assert {mode(p) for p in root.rglob("*") if p.is_dir()} == {0o700}
    assert {mode(p) for p in root.rglob("*") if p.is_file()} == {0o600}
