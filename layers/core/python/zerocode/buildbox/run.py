"""One AWS build, start to end (the package's doc says what and why)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections import deque
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path

from zerocode.adapters.aws import build_handoff as handoff
from zerocode.adapters.local.toolchain_store import share_cache
from zerocode.buildbox import box_checks, box_report, transfer
from zerocode.buildbox.browser import DataOf, check_site
from zerocode.buildbox.own_source import OwnSource
from zerocode.publishing import toolchain
from zerocode.publishing.picker import PICKER_FILE, with_picker
from zerocode.publishing.prerender import place, with_base

KINDS = ("vue_project", "html", "multi_file")
TOOLCHAIN = "/opt/zerocode/toolchain"  # the image's: node_modules, package.json, lockfile
# Node's compile cache, made when the image is built (``warm_up``) and read-only afterwards:
# Vite and the rest load without being compiled again (docs/builds.md, "Builds start warm").
COMPILE_CACHE = "/opt/zerocode/compile-cache"
BUILD_SECONDS = 180  # a local build's default (ZEROCODE_BUILD_TIMEOUT_SECONDS)
LOG_LINES = 200


class BoxError(Exception):
    """The build cannot go on; the message is for the app's owner and names no link."""


@dataclass(frozen=True, kw_only=True)
class Job:
    app_id: str
    build_id: str
    kind: str
    preview: bool
    bucket: str  # where its source is (a name: the build's own identity is what reads it)
    toolchain: Path
    chromium: str | None
    compile_cache: Path | None = None
    task: str = "build"  # or handoff.TASK_CHECKS: an app's acceptance checks (box_checks.py)
    runner_id: str = ""  # CodeBuild's id of this run (CODEBUILD_BUILD_ID)
    # The site is served at its origin's root, not under /sites/{key}/ (a Vue page's <base>).
    own_origin: bool = True

    @classmethod
    def from_environ(cls, env: Mapping[str, str]) -> Job:
        missing = [
            n
            for n in (
                "ZEROCODE_APP_ID",
                "ZEROCODE_BUILD_ID",
                "ZEROCODE_KIND",
                handoff.BUCKET_VARIABLE,
            )
            if not env.get(n)
        ]
        if missing:
            raise BoxError(f"the build was started without {', '.join(missing)}")
        if env["ZEROCODE_KIND"] not in KINDS:
            raise BoxError(f"unknown kind of app {env['ZEROCODE_KIND']!r}")
        task = env.get(handoff.TASK_VARIABLE) or "build"
        if task not in ("build", handoff.TASK_CHECKS):
            raise BoxError(f"unknown task {task[:40]!r}")
        return cls(
            app_id=env["ZEROCODE_APP_ID"],
            build_id=env["ZEROCODE_BUILD_ID"],
            kind=env["ZEROCODE_KIND"],
            preview=env.get("ZEROCODE_PREVIEW") == "1",
            bucket=env[handoff.BUCKET_VARIABLE],
            toolchain=Path(env.get("ZEROCODE_TOOLCHAIN") or TOOLCHAIN),
            chromium=env.get("ZEROCODE_CHROMIUM") or shutil.which("chromium"),
            compile_cache=Path(env.get("ZEROCODE_COMPILE_CACHE") or COMPILE_CACHE),
            task=task,
            runner_id=env.get("CODEBUILD_BUILD_ID", ""),
            own_origin=env.get("ZEROCODE_OWN_ORIGIN", "1") != "0",
        )


class Log:
    """What the build says: printed (CloudWatch keeps it) and its tail kept for the archive."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=LOG_LINES)

    def say(self, text: str) -> None:
        for line in text.rstrip().splitlines() or [""]:
            self.lines.append(line)
            print(line, flush=True)

    def took(self, step: str, since: float) -> float:
        """Say how long ``step`` took (the operator's latency budget); now."""
        now = time.monotonic()
        self.say(f"zerocode: {step} took {now - since:.2f} s")
        return now

    def tail(self) -> bytes:
        data = "\n".join(self.lines).encode()
        return data[-handoff.MAX_LOG_BYTES :]


def main(env: Mapping[str, str]) -> int:
    log = Log()
    try:
        job = Job.from_environ(env)
    except BoxError as exc:
        log.say(f"zerocode: {exc}")
        return 2
    try:  # the container's credentials, taken before the environment is scrubbed
        source = OwnSource.from_environment(job.bucket, job.app_id, job.build_id, job.runner_id)
    except Exception as exc:
        log.say(f"zerocode: no AWS client for the source ({type(exc).__name__})")
        return 2
    _scrub(os.environ)
    work = Path(tempfile.mkdtemp(prefix="zerocode-build-"))
    try:
        return _run(job, source, work, log)
    except BoxError as exc:
        log.say(f"zerocode: {exc}")
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _scrub(env: MutableMapping[str, str]) -> None:
    """Nothing this process starts (Node, Playwright's driver, Chromium) inherits anything
    of AWS's: CodeBuild puts its role's endpoint (or keys) in the environment."""
    for name in list(env):
        if name.startswith("AWS_"):
            del env[name]


def _run(job: Job, source: OwnSource, work: Path, log: Log) -> int:
    log.say(f"zerocode: building {job.kind} app {job.app_id}, build {job.build_id}")
    clock = time.monotonic()
    files, output = _fetch(source)
    del source  # its clients hold the run's credentials; nothing needs them from here
    model = files.pop(handoff.DATA_MODEL_IN_SOURCE, None)  # the platform's, for the check
    clock = log.took("fetch", clock)
    out = work / handoff.ARCHIVE_ROOT
    site = out / handoff.SITE_DIR
    out.mkdir()
    if job.task == handoff.TASK_CHECKS:
        built = box_checks.run_checks(
            job.app_id, job.build_id, files, model, work, out, job.chromium, log.say
        )
        clock = log.took("checks", clock)
    else:
        built = _build(job, files, work / "app", site, log)
        clock = log.took("build", clock)
    if built and job.task != handoff.TASK_CHECKS:
        _finish_site(job, files, site)
        _check(job, site, out, log, model)
        clock = log.took("check", clock)
        if not job.preview:  # a deploy's part of its publish report (box_report.py)
            box_report.write_report(
                job.app_id, job.build_id, site, out, job.chromium, model, log.say
            )
            clock = log.took("report", clock)
    (out / handoff.LOG_FILE).write_bytes(log.tail())
    try:
        transfer.post(output, _pack(out))
    except transfer.TransferFailed as exc:
        raise BoxError(f"the output could not be handed back ({exc})") from None
    log.took("hand-back", clock)
    log.say("zerocode: output handed back" + ("" if built else " (the build failed)"))
    return 0 if built else 1


def _fetch(source: OwnSource) -> tuple[dict[str, bytes], dict[str, object]]:
    """The source's files (the zip is deleted at once) and the output's presigned POST."""
    try:
        data = source.fetch(handoff.MAX_SOURCE_BYTES)
    except transfer.TransferFailed as exc:
        raise BoxError(f"the source could not be fetched ({exc})") from None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            files = {
                info.filename: archive.read(info)
                for info in archive.infolist()
                if not info.is_dir()
            }
    except (zipfile.BadZipFile, ValueError) as exc:
        raise BoxError(f"the source is not a zip ({exc})") from None
    for name in files:
        if name.startswith("/") or "\\" in name or ".." in name.split("/"):
            raise BoxError(f"the source holds a name outside the project: {name[:120]!r}")
    try:
        output = json.loads(files.pop(handoff.HANDOFF_FILE))["output"]
        if not isinstance(output, dict) or not isinstance(output.get("url"), str):
            raise TypeError
    except (KeyError, ValueError, TypeError):
        raise BoxError("the source carries no hand-off") from None
    return files, output


def _write_tree(files: Mapping[str, bytes], root: Path) -> None:
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _build(job: Job, files: dict[str, bytes], app: Path, site: Path, log: Log) -> bool:
    """The site in ``site``: Vite's output, or an html app's own files. False if it failed."""
    if job.kind != "vue_project":
        if "index.html" not in files:
            log.say("zerocode: the app has no index.html yet")
            return False
        _write_tree({n: d for n, d in files.items() if not n.startswith(".zerocode/")}, site)
        log.say(f"zerocode: checked and copied {len(files)} file(s)")
        return True
    _write_tree(files, app)
    _use_toolchain(job, app)
    return _vite(app, site, log, cache=job.compile_cache)


def _use_toolchain(job: Job, app: Path) -> None:
    """Link the image's toolchain as the project's node_modules, once the lockfile the
    platform sent is the one the image was made from."""
    sent = app / ".zerocode" / "toolchain" / toolchain.LOCKFILE
    installed = job.toolchain / toolchain.LOCKFILE
    if not installed.is_file() or not (job.toolchain / "node_modules" / "vite").is_dir():
        raise BoxError(f"the build image has no toolchain at {job.toolchain}")
    if not sent.is_file() or sent.read_bytes() != installed.read_bytes():
        raise BoxError(
            "the build image's toolchain is not the one this platform version uses: "
            "deploy the stack again to rebuild the image"
        )
    shutil.rmtree(app / ".zerocode" / "toolchain")
    modules = app / "node_modules"
    if modules.is_symlink() or modules.exists():
        shutil.rmtree(
            modules
        ) if modules.is_dir() and not modules.is_symlink() else modules.unlink()
    modules.symlink_to(job.toolchain / "node_modules", target_is_directory=True)


def _vite(app: Path, site: Path, log: Log, *, cache: Path | None = None) -> bool:
    """``vite build`` by the ``node`` on the path: in the image, the toolchain's Node 22
    (the Dockerfile puts it first), the one a local build runs."""
    home = app.parent / "home"
    home.mkdir()
    env = {  # nothing of the build's own environment: no link, no role, no variable
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "NODE_ENV": "production",
    }
    if cache is not None and cache.is_dir():  # read-only, except when the image is made
        env["NODE_COMPILE_CACHE"] = str(cache)
    try:
        done = subprocess.run(
            ["node", *toolchain.VITE_ARGS],
            cwd=app,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=BUILD_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        log.say(f"zerocode: vite build did not finish within {BUILD_SECONDS} s")
        return False
    if (done.stdout + done.stderr).strip():
        log.say(done.stdout + done.stderr)
    dist = app / "dist"
    if done.returncode != 0:
        log.say(f"zerocode: vite build failed (exit status {done.returncode})")
        return False
    if dist.is_symlink() or not (dist / "index.html").is_file():
        log.say("zerocode: the build finished but dist/index.html is missing")
        return False
    shutil.copytree(dist, site, symlinks=True)  # links stay links: the platform refuses them
    return True


def _finish_site(job: Job, files: Mapping[str, bytes], site: Path) -> None:
    """The platform's part of the site: ``__zerocode/`` is its own (an app's files there are
    dropped) and a preview's pages get the element picker."""
    platform = site / handoff.PLATFORM_DIR.rstrip("/")
    if platform.is_symlink() or platform.is_file():
        platform.unlink()
    elif platform.is_dir():
        shutil.rmtree(platform)
    if job.kind == "vue_project":  # its router and assets hold at every depth (prerender.py)
        with_base(site, own_origin=job.own_origin)
    if not job.preview:
        return
    picker = files.get(handoff.PICKER_IN_SOURCE)
    if picker is None:
        raise BoxError("a preview build's source carries no element picker")
    pages = [site / "index.html"] if job.kind == "vue_project" else sorted(site.rglob("*.html"))
    for page in pages:
        if page.is_file() and not page.is_symlink():
            page.write_bytes(with_picker(page.read_bytes(), relative=True))
    (site / PICKER_FILE).parent.mkdir(parents=True, exist_ok=True)
    (site / PICKER_FILE).write_bytes(picker)


def _check(job: Job, site: Path, out: Path, log: Log, model: bytes | None) -> None:
    if job.chromium is None:
        log.say("zerocode: no Chromium in the image: the page was not checked")
        result = {"checked": False, "problems": [], "blocked": 0, "note": "no Chromium"}
    else:
        # A preview's screenshot is its app's private cover until the app has a deploy's
        # (the platform keeps it apart: zerocode.publishing.preview_covers).
        cover = out / handoff.COVER_FILE
        data = None if model is None else DataOf(job.app_id, job.build_id, model)
        vue = job.kind == "vue_project"
        checked = check_site(
            site, job.chromium, vue=vue, cover=cover, data=data, prerender=vue and not job.preview
        )
        result = checked.as_json()
        said = (
            f"{len(checked.problems)} problem(s)"
            if checked.checked
            else f"not checked: {checked.note}"
        )
        # Which browser judged the page, in every build's log (the image pins it: Dockerfile).
        log.say(f"zerocode: runtime check in {checked.browser or 'no browser'}: {said}")
        for problem in checked.problems:
            log.say(f"  {problem}")
        if vue and not job.preview:  # a site's routes as HTML, for crawlers (issue 44)
            routes = place(site, checked.pages)
            note = f" ({checked.prerender_note})" if checked.prerender_note else ""
            log.say(f"zerocode: prerendered {len(routes)} route(s): {' '.join(routes)}{note}")
    (out / handoff.CHECK_FILE).write_text(json.dumps(result), encoding="utf-8")


def _pack(out: Path) -> bytes:
    """``out/`` as one tar (links are archived as links: the platform refuses them)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        archive.add(out, arcname=handoff.ARCHIVE_ROOT, recursive=True)
    return buffer.getvalue()


def warm_up(toolchain_dir: Path, cache: Path) -> int:
    """When the image is built (``python3 -m zerocode.buildbox.run warm-up``, as the image's
    user): build the platform's own small project once with ``cache`` as Node's compile
    cache, shared by the uids a build may run as (Node names its directory after the uid,
    and the image's is 1000), read-only. Nothing of any app's is in it."""
    log = Log()
    work = Path(tempfile.mkdtemp(prefix="zerocode-warm-up-"))
    try:
        files = toolchain.build_tree(toolchain.WARM_UP_APP)
        sent = f"{toolchain.PLATFORM_DIR}/toolchain/{toolchain.LOCKFILE}"
        files[sent] = (toolchain_dir / toolchain.LOCKFILE).read_bytes()
        job = Job(
            app_id="warm-up",
            build_id="warm-up",
            kind="vue_project",
            preview=False,
            bucket="",
            toolchain=toolchain_dir,
            chromium=None,
            compile_cache=cache,
        )
        cache.mkdir(parents=True, exist_ok=True)
        built = _build(job, files, work / "app", work / "site", log)
        made = built and share_cache(cache, [os.getuid(), 1000])
        log.say(f"zerocode: warm-up build {'done' if built else 'failed'}; cache made: {made}")
        return 0 if built and made else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover - the package's __main__ is the build's entry
    if sys.argv[1:2] == ["warm-up"]:  # once, when the image is built (Dockerfile)
        sys.exit(warm_up(Path(TOOLCHAIN), Path(COMPILE_CACHE)))
    sys.exit(main(os.environ))
