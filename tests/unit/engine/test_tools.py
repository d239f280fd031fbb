"""ToolBox rules over a tiny in-memory Workspace: every model mistake is a readable failure."""

from __future__ import annotations

import json

import pytest

from tests.unit.engine.tools_support import APP, MemoryWorkspace, call, failed, ok
from zerocode.engine.tools import TOOL_DEFINITIONS, ToolBox
from zerocode.errors import Conflict


def test_definitions_are_openai_function_tools() -> None:
    names = [t["function"]["name"] for t in TOOL_DEFINITIONS]
    assert names == [
        "read_dir",
        "read_file",
        "write_file",
        "modify_file",
        "delete_file",
        "list_assets",
        "exit",
    ]
    for tool in TOOL_DEFINITIONS:
        assert tool["type"] == "function"
        params = tool["function"]["parameters"]
        assert params["type"] == "object"
        assert set(params["required"]) <= set(params["properties"])
        assert tool["function"]["description"]
    modify = TOOL_DEFINITIONS[3]["function"]
    assert modify["parameters"]["required"] == ["path", "old", "new"]
    assert "exactly" in modify["description"] and "once" in modify["description"]
    json.dumps(TOOL_DEFINITIONS)


def test_result_answers_the_call(box: ToolBox) -> None:
    c = call("read_file", {"path": "src/App.vue"})
    outcome = box.run(c)
    assert (outcome.result.tool_call_id, outcome.result.name) == (c.id, "read_file")


def test_read_dir_lists_with_sizes(box: ToolBox, ws: MemoryWorkspace) -> None:
    ws.files[(APP, "src/components/Hero.vue")] = b"12345"
    ws.files[("other", "secret.txt")] = b"x"
    outcome = box.run(call("read_dir"))
    assert ok(outcome).splitlines() == [
        "package.json (2 bytes)",
        "src/App.vue (36 bytes)",
        "src/components/Hero.vue (5 bytes)",
    ]
    assert outcome.summary == "listed the project (3 files)" and not outcome.changed
    assert outcome.path is None
    assert (
        ok(box.run(call("read_dir", {"path": "src/components"})))
        == "src/components/Hero.vue (5 bytes)"
    )
    assert ok(box.run(call("read_dir", {"path": "."}))).count("\n") == 2
    assert "no directory src/x" in failed(box.run(call("read_dir", {"path": "src/x"})))
    assert "absolute" in failed(box.run(call("read_dir", {"path": "/"})))


def test_read_dir_of_an_empty_project(ws: MemoryWorkspace) -> None:
    ws.files.clear()
    assert ok(ToolBox(ws, APP).run(call("read_dir", raw=""))) == "the project has no files yet"


def test_read_file(box: ToolBox, ws: MemoryWorkspace) -> None:
    outcome = box.run(call("read_file", {"path": "./src/App.vue"}))
    assert ok(outcome) == "<template><h1>Hello</h1></template>\n"
    assert outcome.path == "src/App.vue" and outcome.summary == "read src/App.vue (36 bytes)"
    assert "src/nope.vue does not exist" in failed(
        box.run(call("read_file", {"path": "src/nope.vue"}))
    )
    ws.files[(APP, "logo.png")] = b"\x89PNG\r\n\x1a\n\xff\xfe"
    assert "not a UTF-8 text file" in failed(box.run(call("read_file", {"path": "logo.png"})))


def test_read_file_text_that_looks_like_an_error_stays_ok(
    box: ToolBox, ws: MemoryWorkspace
) -> None:
    ws.files[(APP, "notes.txt")] = b"ERROR: not really"
    assert box.run(call("read_file", {"path": "notes.txt"})).result.ok


def test_write_file_creates_and_replaces(box: ToolBox, ws: MemoryWorkspace) -> None:
    created = box.run(call("write_file", {"path": "src/components/Nav.vue", "content": "é"}))
    assert ok(created) == "created src/components/Nav.vue (2 bytes)"
    assert created.changed and created.summary == "created src/components/Nav.vue (2 bytes)"
    assert ws.files[(APP, "src/components/Nav.vue")] == "é".encode()
    replaced = box.run(call("write_file", {"path": "src/App.vue", "content": "<template/>"}))
    assert replaced.changed and replaced.summary == "replaced src/App.vue (11 bytes)"
    same = box.run(call("write_file", {"path": "src/App.vue", "content": "<template/>"}))
    assert ok(same) and not same.changed and same.summary == "src/App.vue unchanged"


def test_write_file_empty_content_is_allowed(box: ToolBox, ws: MemoryWorkspace) -> None:
    assert box.run(call("write_file", {"path": "src/empty.css", "content": ""})).changed
    assert ws.files[(APP, "src/empty.css")] == b""


def test_write_file_too_big_is_a_failed_result(box: ToolBox) -> None:
    outcome = box.run(call("write_file", {"path": "big.txt", "content": "x" * 1001}))
    assert "too big" in failed(outcome)
    assert outcome.path == "big.txt"


def test_modify_file(box: ToolBox, ws: MemoryWorkspace) -> None:
    outcome = box.run(
        call(
            "modify_file",
            {"path": "src/App.vue", "old": "<h1>Hello</h1>", "new": "<h1>Hello, world</h1>"},
        )
    )
    assert outcome.changed and outcome.path == "src/App.vue"
    assert outcome.summary == "modified src/App.vue (+7 −0 chars)" == ok(outcome)
    assert ws.files[(APP, "src/App.vue")] == b"<template><h1>Hello, world</h1></template>\n"


def test_modify_file_summary_counts_the_real_change(box: ToolBox) -> None:
    outcome = box.run(
        call("modify_file", {"path": "src/App.vue", "old": "Hello", "new": "Goodbye"})
    )
    assert outcome.summary == "modified src/App.vue (+7 −5 chars)"
    outcome = box.run(
        call(
            "modify_file",
            {"path": "src/App.vue", "old": "<h1>Goodbye</h1>", "new": "<h1>Goodnight</h1>"},
        )
    )
    assert outcome.summary == "modified src/App.vue (+5 −3 chars)"


def test_modify_file_old_text_absent(box: ToolBox, ws: MemoryWorkspace) -> None:
    before = dict(ws.files)
    outcome = box.run(call("modify_file", {"path": "src/App.vue", "old": "<h2>", "new": "x"}))
    assert failed(outcome) == "ERROR: old text not found in src/App.vue"
    assert outcome.summary == "old text not found in src/App.vue"
    assert ws.files == before


def test_modify_file_old_text_ambiguous(box: ToolBox, ws: MemoryWorkspace) -> None:
    ws.files[(APP, "src/a.js")] = b"let x = 1;\nlet x = 1;\nlet x = 1;\n"
    outcome = box.run(
        call("modify_file", {"path": "src/a.js", "old": "let x = 1;", "new": "let y = 2;"})
    )
    assert failed(outcome) == "ERROR: old text occurs 3 times in src/a.js; include more context"
    assert ws.files[(APP, "src/a.js")] == b"let x = 1;\nlet x = 1;\nlet x = 1;\n"


def test_modify_file_empty_old_text(box: ToolBox) -> None:
    outcome = box.run(call("modify_file", {"path": "src/App.vue", "old": "", "new": "x"}))
    assert "old text is empty" in failed(outcome)


def test_modify_file_same_text_changes_nothing(box: ToolBox) -> None:
    outcome = box.run(call("modify_file", {"path": "src/App.vue", "old": "Hello", "new": "Hello"}))
    assert ok(outcome) and not outcome.changed


def test_modify_file_missing_or_binary(box: ToolBox, ws: MemoryWorkspace) -> None:
    assert "does not exist" in failed(
        box.run(call("modify_file", {"path": "src/x.js", "old": "a", "new": "b"}))
    )
    ws.files[(APP, "img.png")] = b"\xff\xd8\xff"
    assert "UTF-8" in failed(
        box.run(call("modify_file", {"path": "img.png", "old": "a", "new": "b"}))
    )


def test_delete_file(box: ToolBox, ws: MemoryWorkspace) -> None:
    outcome = box.run(call("delete_file", {"path": "src/App.vue"}))
    assert ok(outcome) == "deleted src/App.vue" and outcome.changed
    assert (APP, "src/App.vue") not in ws.files
    assert "does not exist" in failed(box.run(call("delete_file", {"path": "src/App.vue"})))


@pytest.mark.parametrize(
    "path", ["package.json", "./package.json", "vite.config.js", "index.html", "src/main.js"]
)
def test_delete_protected_file(box: ToolBox, ws: MemoryWorkspace, path: str) -> None:
    outcome = box.run(call("delete_file", {"path": path}))
    assert "protected" in failed(outcome)
    assert (APP, "package.json") in ws.files


def test_custom_protected_set(ws: MemoryWorkspace) -> None:
    box = ToolBox(ws, APP, protected=frozenset({"src/App.vue"}))
    assert "protected" in failed(box.run(call("delete_file", {"path": "src/App.vue"})))
    assert box.run(call("delete_file", {"path": "package.json"})).changed


def test_exit(box: ToolBox) -> None:
    outcome = box.run(call("exit"))
    assert ok(outcome) == "exit" and outcome.exit and not outcome.changed
    assert box.run(call("exit", raw="not json")).exit  # the intent is clear either way


def test_unknown_tool_names_the_known_tools(box: ToolBox) -> None:
    text = failed(box.run(call("run_shell", {"cmd": "rm -rf /"})))
    assert "unknown tool 'run_shell'" in text
    for name in ("read_dir", "read_file", "write_file", "modify_file", "delete_file", "exit"):
        assert name in text


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("{not json", "must be a JSON object"),
        ('["src/App.vue"]', "must be a JSON object"),
        ('"src/App.vue"', "must be a JSON object"),
        ("null", "must be a JSON object"),
        ("{}", "needs 'path'"),
        ('{"path": 3}', "'path' must be a string, got int"),
        ('{"path": null}', "'path' must be a string, got NoneType"),
        ('{"path": ["a"]}', "'path' must be a string, got list"),
    ],
)
def test_malformed_arguments(box: ToolBox, raw: str, expected: str) -> None:
    assert expected in failed(box.run(call("read_file", raw=raw)))


def test_missing_fields_are_all_named(box: ToolBox) -> None:
    text = failed(box.run(call("modify_file", {"path": "src/App.vue"})))
    assert "needs 'old', 'new'" in text


def test_huge_malformed_arguments_are_clipped(box: ToolBox) -> None:
    outcome = box.run(call("write_file", raw="{" + "x" * 10_000))
    assert len(outcome.result.content) < 200


@pytest.mark.parametrize(
    "path",
    ["/etc/passwd", "../x", "a/../../x", "C:\\x", "node_modules/x", "dist/x", ".git/config", ""],
)
def test_refused_paths_are_failed_results(box: ToolBox, path: str) -> None:
    for name, extra in (
        ("read_file", {}),
        ("write_file", {"content": "x"}),
        ("modify_file", {"old": "a", "new": "b"}),
        ("delete_file", {}),
    ):
        outcome = box.run(call(name, {"path": path, **extra}))
        failed(outcome)
    assert box.calls == 4


def test_refused_path_keeps_a_one_line_display_path(box: ToolBox) -> None:
    outcome = box.run(call("read_file", {"path": "../a\nb"}))
    failed(outcome)
    assert outcome.path is not None and "\n" not in outcome.path
    assert "\n" not in outcome.summary


def test_call_limit_per_turn(ws: MemoryWorkspace) -> None:
    box = ToolBox(ws, APP, max_calls=3)
    for _ in range(3):
        ok(box.run(call("read_dir")))
    for name in ("read_dir", "write_file", "nope"):
        text = failed(box.run(call(name, {"path": "a.txt", "content": "x"})))
        assert text == "ERROR: tool call limit of 3 per turn reached; call exit"
    assert (APP, "a.txt") not in ws.files
    assert box.run(call("exit")).exit  # stopping is always allowed


def test_failed_and_unknown_calls_count_towards_the_limit(ws: MemoryWorkspace) -> None:
    box = ToolBox(ws, APP, max_calls=2)
    failed(box.run(call("nope")))
    failed(box.run(call("read_file", raw="{")))
    assert "limit of 2" in failed(box.run(call("read_dir")))


def test_a_new_toolbox_starts_a_new_count(ws: MemoryWorkspace) -> None:
    first = ToolBox(ws, APP, max_calls=1)
    ok(first.run(call("read_dir")))
    failed(first.run(call("read_dir")))
    ok(ToolBox(ws, APP, max_calls=1).run(call("read_dir")))


def test_conflicting_writer_is_a_failed_result(box: ToolBox, ws: MemoryWorkspace) -> None:
    ws.fail_writes_with = Conflict("file src/App.vue was changed by another writer")
    outcome = box.run(call("write_file", {"path": "src/App.vue", "content": "x"}))
    assert "another writer" in failed(outcome)


def test_storage_outage_raises(box: ToolBox, ws: MemoryWorkspace) -> None:
    ws.fail_writes_with = OSError("disk on fire")
    with pytest.raises(OSError, match="disk on fire"):
        box.run(call("write_file", {"path": "src/App.vue", "content": "x"}))


def test_invalid_app_id_is_refused_not_raised(ws: MemoryWorkspace) -> None:
    outcome = ToolBox(ws, "../other").run(call("read_file", {"path": "a.txt"}))
    assert "app id" in failed(outcome)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("src/.zc-tmp-1a2b3c", "reserves for its temporary files"),
        (".zc-tmp-x/App.vue", "reserves for its temporary files"),
        ("src/App\u202e.vue", "bidirectional control characters (U+202E)"),
        ("src/\u2066x.js", "bidirectional control characters (U+2066)"),
        ("src/App\u200b.vue", "invisible or non-printing characters (U+200B)"),
        ("src/\ufeffmain.js", "invisible or non-printing characters (U+FEFF)"),
    ],
)
def test_reserved_and_invisible_names_are_failed_results(
    box: ToolBox, ws: MemoryWorkspace, path: str, why: str
) -> None:
    before = dict(ws.files)
    for name, args in [
        ("write_file", {"path": path, "content": "x"}),
        ("modify_file", {"path": path, "old": "x", "new": "y"}),
        ("delete_file", {"path": path}),
        ("read_file", {"path": path}),
    ]:
        outcome = box.run(call(name, args))
        assert why in failed(outcome)
        assert outcome.path and outcome.path.isprintable()  # shown escaped, never reordered
        assert outcome.summary.isprintable()
    assert ws.files == before
