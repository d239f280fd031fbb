"""ToolBox over a real LocalWorkspace: the rules hold on disk, links included."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from zerocode.adapters.local.workspace import LocalWorkspace
from zerocode.apps.workspace import WorkspaceLimits
from zerocode.engine.tools import ToolBox, ToolOutcome
from zerocode.memory.messages import ToolCall

APP = "app1"
APP_VUE = "<template>\n  <h1>Hello</h1>\n</template>\n"


@pytest.fixture
def ws(tmp_path: Path) -> LocalWorkspace:
    ws = LocalWorkspace(tmp_path / "ws", WorkspaceLimits(max_file_bytes=1000, max_files=5))
    ws.write(APP, "package.json", b'{"name": "app"}')
    ws.write(APP, "index.html", b"<div id=app></div>")
    ws.write(APP, "src/main.js", b"import App from './App.vue'")
    ws.write(APP, "src/App.vue", APP_VUE.encode())
    return ws


@pytest.fixture
def box(ws: LocalWorkspace) -> ToolBox:
    return ToolBox(ws, APP, max_calls=20)


_count = iter(range(10**6))


def run(box: ToolBox, name: str, args: Any = None, raw: str | None = None) -> ToolOutcome:
    text = raw if raw is not None else json.dumps(args or {})
    return box.run(ToolCall(f"c{next(_count)}", name, text))


def test_a_session_of_edits_lands_on_disk(box: ToolBox, ws: LocalWorkspace) -> None:
    listing = run(box, "read_dir").result.content
    assert "src/App.vue (40 bytes)" in listing.splitlines()
    assert run(box, "read_file", {"path": "src/App.vue"}).result.content == APP_VUE
    modified = run(
        box,
        "modify_file",
        {"path": "src/App.vue", "old": "<h1>Hello</h1>", "new": "<h1>Hello</h1>\n  <Nav />"},
    )
    assert modified.changed and modified.summary == "modified src/App.vue (+10 −0 chars)"
    created = run(
        box,
        "write_file",
        {"path": "src/components/Nav.vue", "content": "<template><nav/></template>"},
    )
    assert created.changed and created.summary.startswith("created src/components/Nav.vue")
    app_dir = ws.path(APP)
    assert "<Nav />" in (app_dir / "src/App.vue").read_text()
    assert (app_dir / "src/components/Nav.vue").read_text() == "<template><nav/></template>"
    assert run(box, "delete_file", {"path": "src/components/Nav.vue"}).changed
    assert not (app_dir / "src/components/Nav.vue").exists()
    assert run(box, "exit").exit


def test_modify_rules_on_disk(box: ToolBox, ws: LocalWorkspace) -> None:
    ws.write(APP, "src/a.css", b"a{}\na{}\n")
    absent = run(box, "modify_file", {"path": "src/App.vue", "old": "<h2>", "new": "x"})
    assert absent.summary == "old text not found in src/App.vue" and not absent.result.ok
    twice = run(box, "modify_file", {"path": "src/a.css", "old": "a{}", "new": "b{}"})
    assert twice.summary == "old text occurs 2 times in src/a.css; include more context"
    empty = run(box, "modify_file", {"path": "src/a.css", "old": "", "new": "b{}"})
    assert not empty.result.ok
    assert ws.read(APP, "src/a.css") == b"a{}\na{}\n"
    assert ws.read(APP, "src/App.vue") == APP_VUE.encode()


def test_protected_files_survive(box: ToolBox, ws: LocalWorkspace) -> None:
    for path in ("package.json", "vite.config.js", "index.html", "src/main.js"):
        outcome = run(box, "delete_file", {"path": path})
        assert not outcome.result.ok and "protected" in outcome.summary
    assert ws.read(APP, "package.json") == b'{"name": "app"}'


def test_workspace_limits_are_failed_results(box: ToolBox) -> None:
    big = run(box, "write_file", {"path": "big.txt", "content": "x" * 1001})
    assert not big.result.ok and "1001 bytes" in big.summary
    assert run(box, "write_file", {"path": "a.txt", "content": "5th file"}).changed
    full = run(box, "write_file", {"path": "b.txt", "content": "6th file"})
    assert not full.result.ok and "5 files" in full.summary
    grow = run(box, "modify_file", {"path": "src/App.vue", "old": "Hello", "new": "y" * 1000})
    assert not grow.result.ok and not grow.changed


def test_links_out_of_the_app_are_failed_results(
    box: ToolBox, ws: LocalWorkspace, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("secret")
    (ws.path(APP) / "leak.txt").symlink_to(secret)
    (ws.path(APP) / "out").symlink_to(tmp_path, target_is_directory=True)
    outcomes = [
        run(box, "read_file", {"path": "leak.txt"}),
        run(box, "write_file", {"path": "leak.txt", "content": "x"}),
        run(box, "modify_file", {"path": "leak.txt", "old": "secret", "new": "x"}),
        run(box, "delete_file", {"path": "leak.txt"}),
        run(box, "read_file", {"path": "out/secret.txt"}),
        run(box, "write_file", {"path": "out/planted.txt", "content": "x"}),
    ]
    for outcome in outcomes:
        assert not outcome.result.ok and not outcome.changed
        assert "link" in outcome.summary
    assert secret.read_text() == "secret" and not (tmp_path / "planted.txt").exists()


def test_malformed_and_unknown_calls_change_nothing(box: ToolBox, ws: LocalWorkspace) -> None:
    before = ws.list(APP)
    for name, raw in (
        ("write_file", '{"path": "x.txt"'),
        ("write_file", '{"path": "x.txt"}'),
        ("rm", '{"path": "src/App.vue"}'),
        ("write_file", "[]"),
        ("write_file", '{"path": "x.txt", "content": 5}'),
    ):
        outcome = run(box, name, raw=raw)
        assert not outcome.result.ok and not outcome.changed
    assert ws.list(APP) == before


def test_call_limit_stops_writes(ws: LocalWorkspace) -> None:
    box = ToolBox(ws, APP, max_calls=2)
    run(box, "read_dir")
    run(box, "read_dir")
    outcome = run(box, "write_file", {"path": "late.txt", "content": "x"})
    assert outcome.summary == "tool call limit of 2 per turn reached; call exit"
    assert not (ws.path(APP) / "late.txt").exists()
    assert run(box, "exit").exit
