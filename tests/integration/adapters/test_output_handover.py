"""A build's output leaves the box as data: in-box adversaries against the hand-over.

The toolchain here is a stand-in whose ``vite.js`` is the attacker: as if the model's code ran
in the box (through a toolchain bug, or a config file a gap let load), it shapes ``dist/`` to
make the host publish what it should not. Once, ``dist`` replaced by a link to another user's
workspace published that workspace on the attacker's site. Whatever it does, the host only
unpacks the archive ``tar`` wrote in a second box, by strict rules, and the build fails
saying why.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.conftest import build_sandbox_or_skip
from zerocode.adapters.local.builder import LocalBuilder
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.publishing.builds import BuildJob, BuildOutcome, new_build_id

SECRET = "victim-secret-41c9"
INDEX = b'<!DOCTYPE html><div id="app"></div><script type="module" src="/src/main.js"></script>'


class HostileToolchain:
    """A ToolchainStore stand-in: node_modules whose vite.js is the given script."""

    def __init__(self, root: Path, script: str) -> None:
        self.modules = root / "node_modules"
        (self.modules / "vite" / "bin").mkdir(parents=True)
        (self.modules / "vite" / "bin" / "vite.js").write_text(script)
        for path in (self.modules, *self.modules.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        root.chmod(0o755)
        self.compile_cache = root / "compile-cache"  # none: the script is not Vite

    async def ensure(self) -> tuple[Path | None, list[str]]:
        return self.modules, []

    async def make_compile_cache(self, warm: object, uids: object) -> tuple[bool, list[str]]:
        return False, []


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Another user's private workspace on the same machine."""
    ws = tmp_path / "data" / "workspaces" / "victim"
    (ws / "src").mkdir(parents=True)
    (ws / "index.html").write_text(f"<h1>{SECRET}</h1>")
    (ws / "src" / "secret.txt").write_text(SECRET)
    return ws


def hostile_build(tmp_path: Path, script: str) -> tuple[BuildOutcome, Path]:
    box = build_sandbox_or_skip()
    data = tmp_path / "data"
    builder = LocalBuilder(data, box, HostileToolchain(tmp_path / "tc", script))  # type: ignore[arg-type]
    files = {"index.html": INDEX, "src/main.js": b"console.log(1)\n"}
    job = BuildJob(
        app_id="attacker",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(files),
    )
    return asyncio.run(builder.build(job)), data / "builds"


def published(builds: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in builds.rglob("*") if p.is_file())


PROLOGUE = "const fs = require('fs'), path = require('path');\n"


def test_an_honest_output_is_handed_over_whole(tmp_path: Path) -> None:
    outcome, _ = hostile_build(
        tmp_path,
        PROLOGUE + "fs.mkdirSync('dist/assets/deep', {recursive: true});"
        "fs.writeFileSync('dist/index.html', '<h1>ok</h1>');"
        "fs.writeFileSync('dist/assets/deep/a.js', 'x'.repeat(100000));",
    )
    assert outcome.ok, outcome.log_tail
    out = Path(outcome.output or "")
    assert (out / "index.html").read_text() == "<h1>ok</h1>"
    assert (out / "assets" / "deep" / "a.js").stat().st_size == 100000


@pytest.mark.parametrize(
    ("script", "said"),
    [
        # dist itself a link: to the victim, by absolute and by relative path
        ("fs.symlinkSync(VICTIM, 'dist')", "not a directory"),
        ("fs.symlinkSync('../../../workspaces/victim', 'dist')", "not a directory"),
        # a link inside dist, to a file and to a directory
        (
            "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
            "fs.symlinkSync(VICTIM + '/src/secret.txt', 'dist/leak.txt')",
            "link",
        ),
        (
            "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
            "fs.symlinkSync(VICTIM, 'dist/ws')",
            "link",
        ),
        # a hard link, a FIFO
        (
            "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
            "fs.linkSync('dist/index.html', 'dist/again.html')",
            "link",
        ),
        (
            "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
            "require('child_process').execFileSync('mkfifo', ['dist/pipe'])",
            "neither a regular file nor a directory",
        ),
        # names: bidi control, a newline
        (
            "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
            "fs.writeFileSync('dist/gpj.\\u202eexe.js', 'x')",
            "invisible",
        ),
        (
            "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
            "fs.writeFileSync('dist/a\\nb', 'x')",
            "control",
        ),
        # too many files, too many bytes
        (
            "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
            "for (let i = 0; i < 5100; i++) fs.writeFileSync('dist/f' + i, '')",
            "more than 5000 files",
        ),
        (
            "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
            "for (let i = 0; i < 3; i++) fs.writeFileSync('dist/big' + i, Buffer.alloc(40 << 20))",
            "larger than 100 MiB",
        ),
        # no dist at all
        ("fs.mkdirSync('elsewhere')", "no dist/"),
    ],
    ids=[
        "dist-link-absolute",
        "dist-link-relative",
        "file-link",
        "dir-link",
        "hard-link",
        "fifo",
        "bidi-name",
        "newline-name",
        "file-count",
        "byte-count",
        "no-dist",
    ],
)
def test_a_hostile_output_is_refused_and_nothing_is_published(
    tmp_path: Path, victim: Path, script: str, said: str
) -> None:
    outcome, builds = hostile_build(
        tmp_path, PROLOGUE + script.replace("VICTIM", repr(str(victim)))
    )
    assert not outcome.ok, outcome.log_tail
    assert said in (outcome.error or ""), outcome.error
    assert outcome.error and outcome.error.startswith("the project did not build")
    assert SECRET not in published(builds) and SECRET not in outcome.log_tail
    assert not builds.exists() or not [p for p in builds.rglob("*") if p.is_file()]
    assert (victim / "src" / "secret.txt").read_text() == SECRET  # nothing was changed there


def test_what_the_build_left_running_cannot_change_the_handed_over_output(tmp_path: Path) -> None:
    """A process the build left behind would swap dist for a link while the host copies it:
    it dies with the build's box, before the archive is made in a box of its own."""
    outcome, _ = hostile_build(
        tmp_path,
        PROLOGUE + "fs.mkdirSync('dist'); fs.writeFileSync('dist/index.html', 'ok');"
        "const { spawn } = require('child_process');"
        "spawn('sh', ['-c', 'sleep 0.5; while true; do rm -rf dist; ln -sfn /proc/self dist; "
        "mkdir -p dist2; done'], {detached: true, stdio: 'ignore'}).unref();",
    )
    assert outcome.ok, outcome.log_tail
    out = Path(outcome.output or "")
    assert sorted(p.name for p in out.iterdir()) == ["index.html"]
