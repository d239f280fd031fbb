"""The offline model's Vue project builds with real npm + Vite at the pinned versions.

npm's cache is shared across runs (``~/.cache/zerocode-npm``), so only the
first run downloads packages; later runs stay well under a minute.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from zerocode import prompts
from zerocode.adapters.openai_model import build_chat_model
from zerocode.messages import SystemMessage, UserMessage
from zerocode.model import ModelReply, ModelRole

NPM = shutil.which("npm")
NPM_CACHE = Path(os.environ.get("ZEROCODE_NPM_CACHE", Path.home() / ".cache" / "zerocode-npm"))
MODELS = dict.fromkeys(ModelRole, "zerocode-offline")

pytestmark = pytest.mark.skipif(NPM is None and not os.environ.get("ZEROCODE_REQUIRE_NPM"),
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


def write(root: Path, files: dict[str, str]) -> None:
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")


def npm(root: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    assert NPM is not None, "npm is required (ZEROCODE_REQUIRE_NPM is set)"
    env = {**os.environ, "npm_config_cache": str(NPM_CACHE), "npm_config_update_notifier": "false"}
    return subprocess.run([NPM, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A project from the offline model with its dependencies installed (once per module)."""
    root = tmp_path_factory.mktemp("vue-app")
    write(root, created_files("A recipe book with vue router"))
    done = npm(root, "install", "--no-audit", "--no-fund", "--prefer-offline")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    yield root


def test_created_project_builds(installed: Path) -> None:
    done = npm(installed, "run", "build", timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    index = (installed / "dist" / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script type="module" crossorigin src="(\./assets/[^"]+\.js)"', index)
    assert scripts, index  # relative asset URLs: base './' works from any sub-path
    assert all((installed / "dist" / s).is_file() for s in scripts)
    assert "/src/main.js" not in index
    bundle = "".join(p.read_text(encoding="utf-8")
                     for p in (installed / "dist" / "assets").glob("*.js"))
    assert "Recipe Book Vue Router" in bundle


def test_installed_versions_are_the_pinned_ones(installed: Path) -> None:
    wanted = json.loads((installed / "package.json").read_text())
    for name, version in {**wanted["dependencies"], **wanted["devDependencies"]}.items():
        meta = json.loads((installed / "node_modules" / name / "package.json").read_text())
        assert meta["version"] == version


def test_broken_vue_trigger_fails_the_build(installed: Path, tmp_path: Path) -> None:
    files = created_files("A recipe book with vue router [[broken-vue]]")
    write(tmp_path, files)
    (tmp_path / "node_modules").symlink_to(installed / "node_modules", target_is_directory=True)
    done = npm(tmp_path, "run", "build", timeout=120)
    assert done.returncode != 0
    assert "HomeView.vue" in done.stdout + done.stderr
    assert not (tmp_path / "dist" / "index.html").exists()
