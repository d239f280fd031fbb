"""Publishing in process: the deploy record and the pointer name one build; a failed cover
screenshot never fails a deploy; a crashing builder is a failed build, not a crash."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from zerocode.apps.records import CodeGenType
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.publishing.builds import Build, Builder, BuildJob, BuildOutcome, BuildState
from zerocode.publishing.pointers import site_pointer


async def deploy_html(settings: Settings, builder: Builder | None = None) -> tuple[Platform, Build]:
    p = wiring.platform(settings, builder=builder)
    app = await p.create_app("owner-1", "A page about newts", CodeGenType.HTML)
    p.workspace.write(app.id, "index.html", b"<h1>Newts</h1>")
    build, source = p.publishing.request_deploy(app)
    done = await p.publishing.deploy(build, source)
    return p, done


def test_a_failed_cover_screenshot_never_fails_the_deploy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("playwright")
    settings = Settings(data_dir=tmp_path, chromium_path="/nonexistent/chromium")
    with caplog.at_level(logging.WARNING):
        p, done = asyncio.run(deploy_html(settings))
    assert done.state is BuildState.SUCCEEDED
    app = p.apps.get(done.app_id)
    assert app is not None and app.deploy_build_id == done.id and app.deploy_key
    assert app.cover is None
    assert "cover screenshot" in caplog.text
    pointer = p.publishing.publisher.target(site_pointer(app.deploy_key))
    assert pointer is not None and pointer.build_id == app.deploy_build_id


class Exploding:
    async def build(self, job: BuildJob) -> BuildOutcome:
        raise OSError("disk full")

    def delete_app(self, app_id: str) -> int:
        return 0


def test_a_crashing_builder_is_a_failed_build_and_publishes_nothing(tmp_path: Path) -> None:
    p, done = asyncio.run(deploy_html(Settings(data_dir=tmp_path, covers=False), Exploding()))
    assert done.state is BuildState.FAILED
    assert "disk full" in (done.error or "")
    app = p.apps.get(done.app_id)
    assert app is not None and app.deploy_key is None and app.deploy_build_id is None
