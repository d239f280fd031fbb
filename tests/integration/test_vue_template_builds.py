"""The offline model's Vue project builds with the platform's own Builder (real npm + Vite).

npm's download cache is the platform's shared one, so only the first run on a
machine downloads packages.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from zerocode import prompts
from zerocode.adapters.npm_builder import BuildResult, BuildStatus, NpmBuilder
from zerocode.adapters.openai_model import build_chat_model
from zerocode.messages import SystemMessage, UserMessage
from zerocode.model import ModelReply, ModelRole
from zerocode.settings import Settings

MODELS = dict.fromkeys(ModelRole, "zerocode-offline")
pytestmark = pytest.mark.skipif(shutil.which("npm") is None
                                and not os.environ.get("ZEROCODE_REQUIRE_NPM"),
                                reason="npm is not installed")


def created_files(description: str) -> dict[str, str]:
    """The files the offline model writes for a new Vue project, taken from the wire."""
    async def go() -> ModelReply:
        model = build_chat_model(None, None, MODELS)
        messages = [SystemMessage(prompts.load("vue_project")), UserMessage(description)]
        replies = [e async for e in model.stream(ModelRole.VUE, messages)
                   if isinstance(e, ModelReply)]
        return replies[0]
    reply = asyncio.run(go())
    files: dict[str, str] = {}
    for call in reply.message.tool_calls:
        args = call.parsed_arguments()
        assert call.name == "write_file" and args is not None
        files[args["path"]] = args["content"]
    return files


def build(root: Path, description: str, builder: NpmBuilder | None = None) -> BuildResult:
    for path, content in created_files(description).items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    return asyncio.run((builder or NpmBuilder(Settings().npm_cache)).build(root))


def test_created_project_builds_at_the_pinned_versions(tmp_path: Path) -> None:
    result = build(tmp_path, "A recipe book with vue router")
    assert result.status is BuildStatus.SUCCEEDED, result.log_tail
    assert result.output == tmp_path / "dist"
    index = (tmp_path / "dist" / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script type="module" crossorigin src="(\./assets/[^"]+\.js)"', index)
    assert scripts, index  # relative asset URLs: base './' works from any sub-path
    assert all((tmp_path / "dist" / s).is_file() for s in scripts)
    bundle = "".join(p.read_text(encoding="utf-8")
                     for p in (tmp_path / "dist" / "assets").glob("*.js"))
    assert "Recipe Book Vue Router" in bundle
    wanted = json.loads((tmp_path / "package.json").read_text())
    for name, version in {**wanted["dependencies"], **wanted["devDependencies"]}.items():
        meta = json.loads((tmp_path / "node_modules" / name / "package.json").read_text())
        assert meta["version"] == version


def test_broken_vue_fails_the_build_with_the_reason_in_the_log(tmp_path: Path) -> None:
    result = build(tmp_path, "A recipe book with vue router [[broken-vue]]")
    assert result.status is BuildStatus.FAILED and result.output is None
    assert "HomeView.vue" in result.log_tail
    assert not (tmp_path / "dist" / "index.html").exists()


def test_missing_npm_and_time_limits_fail_cleanly(tmp_path: Path) -> None:
    missing = build(tmp_path / "a", "A quiz", NpmBuilder(tmp_path / "cache",
                                                        npm="/nonexistent/npm"))
    assert missing.status is BuildStatus.FAILED and "cannot run npm" in missing.log_tail
    slow = build(tmp_path / "b", "A quiz", NpmBuilder(Settings().npm_cache,
                                                      install_timeout=0.01))
    assert slow.status is BuildStatus.FAILED and "was stopped" in slow.log_tail
