"""LocalBuilder with real Vite: immutable outputs, a fresh directory per build, the platform's
toolchain read-only, and the app's own build configuration never used."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from tests.integration.publishing.test_vue_template_builds import created_files
from zerocode.adapters.local.builder import LocalBuilder
from zerocode.adapters.local.sandbox import MISSING, Refusing
from zerocode.adapters.local.toolchain_store import ToolchainStore
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.publishing import toolchain
from zerocode.publishing.builds import REFUSED, BuildJob, BuildOutcome, new_build_id

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


def vue_files(title: str = "A Vue todo list") -> dict[str, bytes]:
    return {p: c.encode() for p, c in created_files(title).items()}


def build(
    builder: LocalBuilder,
    app_id: str,
    files: dict[str, bytes],
    kind: CodeGenType = CodeGenType.VUE_PROJECT,
) -> tuple[str, BuildOutcome]:
    build_id = new_build_id()
    return build_id, asyncio.run(
        builder.build(
            BuildJob(app_id=app_id, build_id=build_id, kind=kind, source=Snapshot.of(files))
        )
    )


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_outputs_are_immutable_and_each_build_has_a_fresh_directory(
    local_builder: LocalBuilder, tmp_path: Path
) -> None:
    files = vue_files()
    first_id, first = build(local_builder, "app1", files)
    assert first.ok and first.output, first.log_tail
    out = Path(first.output)
    assert out == tmp_path / "builds" / "app1" / first_id and (out / "index.html").is_file()
    assert any(out.glob("assets/*.js"))
    assert "$ vite build" in first.log_tail and "npm install" not in first.log_tail
    # The working directory is gone once the build is placed: nothing carries over.
    assert not any((tmp_path / "build-work").rglob("*.vue"))
    before = tree(out)
    changed = dict(files)
    changed["src/App.vue"] = changed["src/App.vue"].replace(
        b"</template>", b"<p>v2</p></template>", 1
    )
    _, second = build(local_builder, "app1", changed)
    assert second.ok and second.output != first.output
    assert tree(out) == before


def test_the_apps_build_configuration_is_never_used(
    local_builder: LocalBuilder, tmp_path: Path
) -> None:
    """A package.json with scripts and a vite.config.js that runs commands (written straight
    into the snapshot, past the tools' checks) change nothing: no npm script runs, the
    platform's config is used, and the build still succeeds."""
    marker = tmp_path / "pwned"
    files = vue_files()
    package = json.loads(files["package.json"])
    package["scripts"] = {
        name: f"touch {marker}-{name}"
        for name in ("preinstall", "install", "postinstall", "prebuild", "build")
    }
    package["dependencies"]["left-pad"] = "1.3.0"
    files["package.json"] = json.dumps(package).encode()
    files["vite.config.js"] = (
        "import { execSync } from 'node:child_process'\n"
        f"execSync('touch {marker}-vite')\nexport default {{}}\n"
    ).encode()
    files["package-lock.json"] = b'{"lockfileVersion": 3, "packages": {}}'
    _, outcome = build(local_builder, "app1", files)
    assert outcome.ok, outcome.log_tail
    assert not list(tmp_path.glob("pwned*"))
    assert not any(Path(outcome.output or "").rglob("vite.config.js"))


def test_broken_projects_and_missing_pages_fail_and_leave_no_output(
    local_builder: LocalBuilder, tmp_path: Path
) -> None:
    files = vue_files()
    files["src/App.vue"] = b"<template><div></template>"
    _, broken = build(local_builder, "app1", files)
    assert not broken.ok and broken.error == "the project did not build" and broken.log_tail
    _, empty = build(local_builder, "app2", {"about.html": b"x"}, CodeGenType.HTML)
    assert not empty.ok and "index.html" in (empty.error or "")
    assert not any((tmp_path / "builds").rglob("index.html"))
    local_builder.delete_app("app1")
    assert not (tmp_path / "build-work" / "app1").exists()


@pytest.mark.parametrize(
    ("source", "shown"),
    [
        ("import env from '/proc/self/environ?raw'", "/proc/self/environ?raw"),
        ("import db from '../../../../zerocode.sqlite3-wal?raw'", "zerocode.sqlite3-wal"),
        ("import db from '../../../x.js'", "../../../x.js"),
        ("import p from '/etc/passwd?raw'", "/etc/passwd"),
        ("import { defineStore } from 'pinia'", "does not declare 'pinia'"),
    ],
)
def test_imports_outside_the_project_fail_the_build_with_a_clear_message(
    local_builder: LocalBuilder, source: str, shown: str
) -> None:
    files = vue_files()
    view = "src/views/HomeView.vue"
    files[view] = files[view].replace(b"<script setup>", f"<script setup>\n{source}".encode(), 1)
    assert source.encode() in files[view]
    _, outcome = build(local_builder, "app1", files)
    assert not outcome.ok and outcome.error and outcome.error.startswith("zerocode: ")
    assert shown in outcome.error and "HomeView.vue" in outcome.error
    if "pinia" not in source:
        assert "outside the project" in outcome.error


def test_declared_allowed_packages_build(local_builder: LocalBuilder) -> None:
    files = vue_files()
    package = json.loads(files["package.json"])
    package["dependencies"]["dayjs"] = toolchain.ALLOWED["dayjs"]
    files["package.json"] = json.dumps(package).encode()
    view = "src/views/HomeView.vue"
    files[view] = files[view].replace(
        b"<script setup>", b"<script setup>\nimport dayjs from 'dayjs'\nconsole.log(dayjs)", 1
    )
    _, outcome = build(local_builder, "app1", files)
    assert outcome.ok, outcome.log_tail


def test_without_a_sandbox_vue_builds_are_refused_and_html_still_copies(tmp_path: Path) -> None:
    builder = LocalBuilder(
        tmp_path, Refusing(), ToolchainStore(tmp_path / "tc", tmp_path / "cache")
    )
    _, vue = build(builder, "app1", vue_files())
    assert not vue.ok and vue.error == REFUSED + MISSING and "bubblewrap" in MISSING
    assert not (tmp_path / "tc").exists()  # nothing installed, nothing run
    _, page = build(builder, "app2", {"index.html": b"<h1>hi</h1>"}, CodeGenType.HTML)
    assert page.ok


def test_a_relative_data_directory_builds(
    tmp_path: Path, toolchain_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make run` uses ZEROCODE_DATA_DIR=.zerocode, a relative path: the sandbox must get
    absolute ones (a fresh-clone `make run` caught it)."""
    from tests.conftest import any_build_sandbox
    from zerocode.bootstrap.settings import Settings

    monkeypatch.chdir(tmp_path)
    builder = LocalBuilder(
        Path(".zerocode"), any_build_sandbox(), ToolchainStore(toolchain_dir, Settings().npm_cache)
    )
    _, outcome = build(builder, "app1", vue_files())
    assert outcome.ok, outcome.log_tail
    assert Path(outcome.output or "").is_absolute()


def test_a_private_data_directory_installs_and_builds_in_the_sandbox(tmp_path: Path) -> None:
    """`zerocode serve` runs with umask 077 in a 0700 data directory (docs/security.md): the
    toolchain it installs there is still sealed readable, and the box's user (nobody, as
    root) still reads the build directory the platform prepares and writes its output."""
    from tests.conftest import any_build_sandbox
    from zerocode.adapters.local.private import UMASK, private_data_dir
    from zerocode.bootstrap.settings import Settings

    data = private_data_dir(tmp_path / "data")
    before = os.umask(UMASK)
    try:
        builder = LocalBuilder(
            data, any_build_sandbox(), ToolchainStore(data / "toolchain", Settings().npm_cache)
        )
        build_id, outcome = build(builder, "app1", vue_files("A private todo list"))
    finally:
        os.umask(before)
    assert outcome.ok, outcome.log_tail
    assert any(b"A private todo list" in c for c in tree(Path(outcome.output or "")).values())
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for name in ("builds", "build-work"):
        assert stat.S_IMODE((data / name).stat().st_mode) == 0o700
    output = data / "builds" / "app1" / build_id
    assert all(not stat.S_IMODE(p.stat().st_mode) & 0o077 for p in [output, *output.rglob("*")])


def test_an_html_site_serves_its_page_files_not_its_data_model(tmp_path: Path) -> None:
    builder = LocalBuilder(
        tmp_path, Refusing(), ToolchainStore(tmp_path / "tc", tmp_path / "cache")
    )
    files = {"index.html": b"<h1>hi</h1>", "zerocode.data.json": b'{"collections": {}}'}
    _, page = build(builder, "app3", files, CodeGenType.HTML)
    assert page.ok and page.output is not None
    assert sorted(p.name for p in Path(page.output).iterdir()) == ["index.html"]
