"""LocalBuilder with real npm + Vite: immutable outputs, reused dependency trees."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest

from tests.integration.test_vue_template_builds import created_files
from zerocode.adapters.local_builder import DEPS_MARKER, LocalBuilder
from zerocode.adapters.npm_builder import NpmBuilder
from zerocode.apps import CodeGenType
from zerocode.builds import BuildJob, BuildOutcome, Snapshot, new_build_id
from zerocode.settings import Settings

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


def vue_files(title: str = "A Vue todo list") -> dict[str, bytes]:
    return {p: c.encode() for p, c in created_files(title).items()}


def build(builder: LocalBuilder, app_id: str, files: dict[str, bytes],
          kind: CodeGenType = CodeGenType.VUE_PROJECT) -> tuple[str, BuildOutcome]:
    build_id = new_build_id()
    return build_id, asyncio.run(builder.build(BuildJob(app_id, build_id, kind,
                                                        Snapshot.of(files))))


def test_outputs_are_immutable_and_dependencies_are_reused_across_apps(tmp_path: Path) -> None:
    builder = LocalBuilder(tmp_path, NpmBuilder(Settings().npm_cache))
    files = vue_files()
    first_id, first = build(builder, "app1", files)
    assert first.ok and first.output, first.log_tail
    out = Path(first.output)
    assert out == tmp_path / "builds" / "app1" / first_id and (out / "index.html").is_file()
    assert any(out.glob("assets/*.js"))
    # A second app with the same dependencies: linked from the store, no npm install.
    _, second = build(builder, "app2", files)
    assert second.ok and "npm install skipped" in second.log_tail, second.log_tail
    assert "$ npm install" not in second.log_tail and "$ npm ci" not in second.log_tail
    vite = tmp_path / "build-work" / "app2" / "node_modules" / "vite" / "package.json"
    stored = next((tmp_path / "deps").glob("*")) / "vite" / "package.json"
    assert os.stat(vite).st_ino == os.stat(stored).st_ino  # a link, not a copy
    # A changed source builds into a new directory; the earlier output is untouched.
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    changed = dict(files)
    changed["src/App.vue"] = changed["src/App.vue"].replace(b"</template>",
                                                            b"<p>v2</p></template>", 1)
    _, third = build(builder, "app1", changed)
    assert third.ok and third.output != first.output
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_dependency_change_installs_again_without_touching_the_store(tmp_path: Path) -> None:
    builder = LocalBuilder(tmp_path, NpmBuilder(Settings().npm_cache))
    files = vue_files()
    assert build(builder, "app1", files)[1].ok
    store = next((tmp_path / "deps").glob("*"))
    marker = (store / DEPS_MARKER).read_text()
    changed = dict(files)
    changed["package.json"] = changed["package.json"].replace(b'"private": true',
                                                              b'"private": true, "x": 1', 1)
    assert changed["package.json"] != files["package.json"]
    _, outcome = build(builder, "app1", changed)
    assert outcome.ok and "$ npm install" in outcome.log_tail, outcome.log_tail
    assert (store / DEPS_MARKER).read_text() == marker  # the old tree is as it was
    assert len(list((tmp_path / "deps").glob("*"))) == 2


def test_broken_projects_and_missing_pages_fail_and_leave_no_output(tmp_path: Path) -> None:
    builder = LocalBuilder(tmp_path, NpmBuilder(Settings().npm_cache))
    files = vue_files()
    files["src/App.vue"] = b"<template><div></template>"
    _, broken = build(builder, "app1", files)
    assert not broken.ok and broken.error == "the project did not build" and broken.log_tail
    _, empty = build(builder, "app2", {"about.html": b"x"}, CodeGenType.HTML)
    assert not empty.ok and "index.html" in (empty.error or "")
    assert not any((tmp_path / "builds").rglob("index.html"))
    assert builder.delete_app("app1") == 1 and not (tmp_path / "build-work" / "app1").exists()
