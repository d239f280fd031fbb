"""What a local server's start makes of the builds its predecessor left unfinished (they died
with it): failed, saying why, except a deploy that was published before the process died
(a deploy is published, then recorded succeeded: publishing/service.py). That one is what
its site serves and what the API calls published, so it is recorded succeeded, never failed
while it is live."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from zerocode.apps.records import App, CodeGenType, new_app_id
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints import server
from zerocode.publishing.builds import Build, BuildPurpose, BuildState, new_build_id


def running(app: App, purpose: BuildPurpose, output: str | None) -> Build:
    build = Build(
        id=new_build_id(),
        app_id=app.id,
        purpose=purpose,
        kind=CodeGenType.HTML,
        source_digest="d",
    ).running()
    return replace(build, output=output)


def test_a_published_deploy_left_running_is_recorded_succeeded_the_rest_failed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(data_dir=tmp_path, runtime_check=False, covers=False)
    before = wiring.platform(settings)
    app = App(
        id=new_app_id(), owner="u1", name="Newts", code_gen_type=CodeGenType.HTML, init_prompt=""
    )
    live = running(app, BuildPurpose.DEPLOY, "out/live")  # published, not yet recorded done
    held = running(app, BuildPurpose.DEPLOY, "out/held")  # built, its publishing not begun
    preview = running(app, BuildPurpose.PREVIEW, None)
    before.apps.put(replace(app, deploy_key="k" * 20, deploy_build_id=live.id))
    for build in (live, held, preview):
        before.builds.put(build)

    after = server._start(settings)  # the next server's start
    capsys.readouterr()

    found = {b.id: b for b in after.builds.list(app.id, limit=10).builds}
    assert found[live.id].state is BuildState.SUCCEEDED and found[live.id].output == "out/live"
    assert found[live.id].finished_at is not None and found[live.id].error is None
    for build in (held, preview):
        assert found[build.id].state is BuildState.FAILED
        assert found[build.id].error == "the server stopped before this build finished"
