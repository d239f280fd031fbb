"""The offline model's Vue project builds with the platform's own Builder (real Vite, in the
sandbox when bubblewrap is installed) at the toolchain's pinned versions."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from zerocode.adapters.model.openai import build_chat_model
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.engine import prompts
from zerocode.engine.model import ModelReply, ModelRole
from zerocode.memory.messages import Message, SystemMessage, UserMessage
from zerocode.publishing import toolchain
from zerocode.publishing.builds import BuildJob, BuildOutcome, new_build_id

MODELS = dict.fromkeys(ModelRole, "zerocode-offline")
pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")


def created_files(description: str) -> dict[str, str]:
    """The files the offline model writes for a new Vue project, taken from the wire."""

    async def go() -> ModelReply:
        model = build_chat_model(None, None, MODELS)
        messages: list[Message] = [
            SystemMessage(prompts.load("vue_project")),
            UserMessage(description),
        ]
        replies = [
            e async for e in model.stream(ModelRole.VUE, messages) if isinstance(e, ModelReply)
        ]
        return replies[0]

    reply = asyncio.run(go())
    files: dict[str, str] = {}
    for call in reply.message.tool_calls:
        args = call.parsed_arguments()
        assert call.name == "write_file" and args is not None
        files[args["path"]] = args["content"]
    return files


def build(builder: Any, description: str) -> BuildOutcome:
    files = {p: c.encode() for p, c in created_files(description).items()}
    job = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(files),
    )
    outcome: BuildOutcome = asyncio.run(builder.build(job))
    return outcome


def test_created_project_builds_at_the_pinned_versions(local_builder: Any) -> None:
    files = created_files("A recipe book with vue router")
    assert toolchain.check_package_json(files["package.json"].encode()) is None
    assert "vite.config.js" not in files  # the platform's, never the model's
    outcome = build(local_builder, "A recipe book with vue router")
    assert outcome.ok and outcome.output, outcome.log_tail
    dist = Path(outcome.output)
    index = (dist / "index.html").read_text(encoding="utf-8")
    scripts = re.findall(r'<script type="module" crossorigin src="(\./assets/[^"]+\.js)"', index)
    assert scripts, index  # relative asset URLs: base './' works from any sub-path
    assert all((dist / s).is_file() for s in scripts)
    bundle = "".join(p.read_text(encoding="utf-8") for p in (dist / "assets").glob("*.js"))
    assert "Recipe Book" in bundle
    modules = local_builder.store.modules
    for name, version in {**toolchain.ALLOWED, **toolchain.BUILD_TOOLS}.items():
        meta = json.loads((modules / name / "package.json").read_text())
        assert meta["version"] == version


def test_broken_vue_fails_the_build_with_the_reason_in_the_log(local_builder: Any) -> None:
    outcome = build(local_builder, "A recipe book with vue router [[broken-vue]]")
    assert not outcome.ok and outcome.output is None
    assert outcome.error == "the project did not build"
    assert "HomeView.vue" in outcome.log_tail


def test_a_toolchain_that_cannot_be_installed_fails_cleanly(tmp_path: Path) -> None:
    from zerocode.adapters.local.builder import LocalBuilder
    from zerocode.adapters.local.sandbox import Unsandboxed
    from zerocode.adapters.local.toolchain_store import ToolchainStore

    builder = LocalBuilder(
        tmp_path,
        Unsandboxed("node"),
        ToolchainStore(tmp_path / "tc", tmp_path / "cache", npm="/nonexistent/npm"),
    )
    outcome = build(builder, "A quiz")
    assert not outcome.ok and outcome.error == (
        "the build was refused: the platform's build toolchain could not be installed"
    )
    assert "installing the toolchain failed" in outcome.log_tail
    assert not (tmp_path / "tc" / toolchain.digest()).exists()
