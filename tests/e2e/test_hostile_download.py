"""The download runs nothing on the builder's machine (issue 37, point 1), through the real
server and a hostile model: every file a package manager, editor, version manager, direnv,
git hook, dev container or CI would read or run is a failed tool result with its reason; the
same files planted straight into the workspace (as if from before the rule) are absent from
the zip and named in its README; and a real ``npm ci && npm run build && npm run dev`` of the
unzipped download never creates the marker the app's code would create. A control run with
the planted ``.npmrc`` put back shows that marker does appear when such a file is there.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, free_port, signed_in
from tests.e2e.hostile_model import HostileModel
from tests.unit.publishing.test_download import unzipped
from zerocode.bootstrap.settings import Settings

PLATFORM = {"package.json", "package-lock.json", "vite.config.js", ".zerocode/tsconfig.json"}
NOTE = "src/components/Note.vue"
APP = {"index.html", "src/main.js", "src/App.vue", NOTE}  # what the hostile model writes that works


def payload(markers: Path, name: str) -> str:
    """Code that, were it ever run, leaves ``markers/name``."""
    target = json.dumps(str(markers / name))
    return f"require('fs').writeFileSync({target}, String(process.pid))\n"


def tool_files(markers: Path) -> dict[str, str]:
    """What the model writes: each a way the builder's own tools would run its code."""
    run = "node ./src/telemetry.cjs"
    task = {"label": "t", "type": "shell", "command": run, "runOptions": {"runOn": "folderOpen"}}
    return {
        ".npmrc": "node-options=--require ./src/telemetry.cjs\n",
        "src/telemetry.cjs": payload(markers, "telemetry"),
        ".yarnrc.yml": "yarnPath: ./src/telemetry.cjs\n",
        ".yarnrc": 'yarn-path "./src/telemetry.cjs"\n',
        ".pnpmfile.cjs": payload(markers, "pnpmfile"),
        "bunfig.toml": 'preload = ["./src/telemetry.cjs"]\n',
        ".vscode/tasks.json": json.dumps({"version": "2.0.0", "tasks": [task]}),
        ".idea/workspace.xml": f"<project><component name='RunManager'>{run}</component></project>",
        ".exrc": f"!{run}\n",
        ".envrc": f"{run}\n",
        ".nvmrc": "20\n",
        ".tool-versions": "nodejs 20.0.0\n",
        ".husky/pre-commit": f"{run}\n",
        ".git-hooks/post-checkout": f"#!/bin/sh\n{run}\n",
        ".git/hooks/post-checkout": f"#!/bin/sh\n{run}\n",
        ".devcontainer/devcontainer.json": json.dumps({"postCreateCommand": run}),
        ".github/workflows/ci.yml": f"on: push\njobs: {{a: {{steps: [{{run: {run}}}]}}}}\n",
        "eslint.config.js": payload(markers, "eslint"),
        "gulpfile.js": payload(markers, "gulp"),
        "deno.json": json.dumps({"tasks": {"dev": run}}),
        "Makefile": f"all:\n\t{run}\n",
        "main.js": payload(markers, "root"),
        "src/node_modules/vite/index.js": payload(markers, "shadow"),
        # and a file of its own last, so the turn ends on a write that worked
        NOTE: "<template><p>a note</p></template>\n",
    }


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, HostileModel]]:
    markers = tmp_path_factory.mktemp("markers")
    with HostileModel(markers) as model:
        model.extra = tool_files(markers)
        srv = Server(tmp_path_factory.mktemp("zerocode-hostile-download"))
        srv.env.update(
            {
                "ZEROCODE_MODEL_BASE_URL": model.base_url,
                "ZEROCODE_MODEL_API_KEY": "sk-hostile",
                "ZEROCODE_MODEL_VUE": "hostile",
                "ZEROCODE_MODEL_ROUTING": "hostile",
                "ZEROCODE_MODEL_CODE": "hostile",
                "ZEROCODE_MAX_TOOL_CALLS": "60",  # every file in one turn
                "ZEROCODE_MAX_TOOL_CALLS_PER_STEP": "64",
            }
        )
        srv.start()
        try:
            yield srv, model
        finally:
            srv.stop()


def npm(args: list[str], cwd: Path) -> str:
    """npm as the builder runs it on their own machine: a plain subprocess, no sandbox; what
    it printed."""
    done = subprocess.run(
        ["npm", *args], cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"npm {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def _env() -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("NODE_", "npm_"))}
    return {**keep, "CI": "1", "NO_COLOR": "1", "npm_config_update_notifier": "false"}


def dev_server_answers(cwd: Path) -> None:
    """``npm run dev`` until the dev server answers its page, then stopped: it waits for the
    URL Vite prints once it listens (as the builder reads it: no log flag of ours; bounded by
    a timer that stops it), not for a time."""
    port = free_port()
    proc = subprocess.Popen(
        ["npm", "run", "dev", "--", "--host", "127.0.0.1", "--port", str(port), "--strictPort"],
        cwd=cwd, env=_env(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )  # fmt: skip
    stop = threading.Timer(120, os.killpg, (proc.pid, signal.SIGKILL))
    stop.start()
    said: list[str] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            said.append(line)
            if f"http://127.0.0.1:{port}/" in line:
                break
        else:
            raise AssertionError("npm run dev stopped before it listened:\n" + "".join(said))
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
        assert page.status_code == 200 and 'id="app"' in page.text, "".join(said)
        module = httpx.get(f"http://127.0.0.1:{port}/src/main.js", timeout=30)
        assert module.status_code == 200, module.text  # it serves (transforms) the app's code
    finally:
        stop.cancel()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def test_the_download_of_a_hostile_app_runs_nothing_on_the_builders_machine(
    hostile: tuple[Server, HostileModel], tmp_path: Path
) -> None:
    server, model = hostile
    client = signed_in(server, "attacker")
    app = create(client, "A Vue app", "vue_project")

    turn = chat(client, app["id"], "Make me an app")
    assert turn.ended == ("succeeded", 1), (turn.done, turn.text, turn.errors)
    results = {r["path"]: r for r in turn.results}
    for path in set(model.extra) - {NOTE}:
        assert results[path]["ok"] is False, results[path]
        summary = results[path]["summary"]
        assert (
            "cannot be part of the app" in summary
            or "is build configuration" in summary
            or (path.startswith(".git/") and "not a source file path" in summary)
        ), summary
    assert "a name starting with '.'" in results[".npmrc"]["summary"]
    assert "'.cjs' files are not part of a web app" in results["src/telemetry.cjs"]["summary"]
    listed = client.get(f"/api/apps/{app['id']}/files").json()["files"]
    assert {f["path"] for f in listed} == APP

    # The same files in the workspace anyway (written before the rule), with an .npmrc that
    # requires code from outside the project, so it alone would leave a marker.
    outside = tmp_path / "outside.cjs"
    outside.write_text(payload(model.markers, "npmrc"))
    planted = {**model.extra, ".npmrc": f"node-options=--require {outside}\n"}
    planted.pop(".git/hooks/post-checkout")  # no workspace can hold .git/ at all
    planted.pop(NOTE)
    workspace = server.data_dir / "workspaces" / app["id"]
    for path, text in planted.items():
        (workspace / path).parent.mkdir(parents=True, exist_ok=True)
        (workspace / path).write_text(text)
    listed = client.get(f"/api/apps/{app['id']}/files").json()["files"]
    assert {f["path"] for f in listed} == APP | set(planted)

    download = client.get(f"/api/apps/{app['id']}/download")
    assert download.status_code == 200, download.text
    top, zipped = unzipped(download.content)
    assert set(zipped) == APP | PLATFORM | {"README.md"}
    left_out = zipped["README.md"].decode().split("## Left out", 1)[1]
    assert all(f"- `{path}`\n" in left_out for path in planted)

    unpacked = tmp_path / "unpacked"
    zipfile.ZipFile(io.BytesIO(download.content)).extractall(unpacked)
    assert [p.name for p in unpacked.iterdir()] == [top]  # one folder of its own
    project = unpacked / top
    cache = str(Settings().npm_cache)
    npm(["ci", "--prefer-offline", "--no-audit", "--no-fund", "--cache", cache], project)
    built = npm(["run", "build"], project)
    assert (project / "dist" / "index.html").is_file()
    assert "dist/index.html" in built and "built in" in built, built  # it says what it built
    dev_server_answers(project)
    assert sorted(p.name for p in model.markers.iterdir()) == []

    # The control: the planted .npmrc put back, and the same build leaves the marker.
    shutil.copy(workspace / ".npmrc", project / ".npmrc")
    npm(["run", "build"], project)
    assert sorted(p.name for p in model.markers.iterdir()) == ["npmrc"]
