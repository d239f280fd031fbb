"""The tools refuse what no build or download may carry: the app's own build configuration,
dependencies outside the allow-list, and every file the builder's own tools would read or
run (publishing/export_rules.py); each a failed result that says why."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.engine.tools_support import APP, MemoryWorkspace, call, failed
from tests.unit.publishing.test_export_rules import STORABLE
from zerocode.apps.workspace import clean_path
from zerocode.engine.tools import ToolBox

# -- the build configuration is the platform's (docs/security.md) --------------------------


def package(**fields: Any) -> str:
    base: dict[str, Any] = {
        "name": "x",
        "private": True,
        "type": "module",
        "scripts": {"dev": "vite", "build": "vite build"},
        "dependencies": {"vue": "3.5.45"},
        "devDependencies": {"vite": "8.3.8"},
    }
    base.update(fields)
    return json.dumps(base)


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (package(scripts={"postinstall": "cat /proc/self/environ"}), "scripts are the platform's"),
        (package(scripts={"build": "vite build && curl evil"}), "scripts are the platform's"),
        (
            package(dependencies={"vue": "3.5.45", "left-pad": "1.3.0"}),
            "left-pad is not an allowed dependency",
        ),
        (package(dependencies={"vue": "^3.4.0"}), "pinned version '3.5.45'"),
        (package(devDependencies={"esbuild": "0.25.0"}), "esbuild is not an allowed"),
        (package(optionalDependencies={"x": "1"}), "optionalDependencies is not supported"),
        (package(overrides={"vue": "1"}), "overrides is not supported"),
        ("{not json", "not valid JSON"),
    ],
)
def test_package_json_outside_the_allow_list_is_a_failed_result(
    box: ToolBox, ws: MemoryWorkspace, content: str, why: str
) -> None:
    before = ws.files[(APP, "package.json")]
    assert why in failed(box.run(call("write_file", {"path": "package.json", "content": content})))
    assert ws.files[(APP, "package.json")] == before  # nothing written


def test_allowed_dependencies_are_accepted_and_modify_file_is_checked_too(
    box: ToolBox, ws: MemoryWorkspace
) -> None:
    content = package(dependencies={"vue": "3.5.45", "pinia": "3.0.4", "dayjs": "1.11.23"})
    assert box.run(call("write_file", {"path": "package.json", "content": content})).changed
    result = failed(
        box.run(
            call(
                "modify_file",
                {"path": "package.json", "old": '"dayjs": "1.11.23"', "new": '"axios": "1.7.0"'},
            )
        )
    )
    assert "axios is not an allowed dependency" in result and "pinia 3.0.4" in result
    assert b"axios" not in ws.files[(APP, "package.json")]


@pytest.mark.parametrize("path", ["vite.config.js", "package-lock.json"])
def test_the_platforms_build_files_cannot_be_written(
    box: ToolBox, ws: MemoryWorkspace, path: str
) -> None:
    result = failed(
        box.run(
            call(
                "write_file",
                {"path": path, "content": "import {execSync} from 'child_process'; execSync('id')"},
            )
        )
    )
    assert "is the platform's and cannot be written" in result
    assert (APP, path) not in ws.files


HOSTILE_CONFIG = "module.exports = { plugins: [require('child_process').execSync('id')] }"


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        ("postcss.config.js", "plain CSS"),
        ("src/postcss.config.cjs", "plain CSS"),
        (".postcssrc.json", "plain CSS"),
        ("tailwind.config.js", "no Tailwind"),
        ("babel.config.js", "no Babel"),
        (".babelrc", "no Babel"),
        ("tsconfig.json", "without a tsconfig.json"),
        ("src/jsconfig.json", "without a tsconfig.json"),
        (".env", "src/config.js"),
        (".env.production.local", "src/config.js"),
        (".browserslistrc", "browsers"),
        ("vite.config.ts", "platform's vite.config.js"),
        ("vitest.config.js", "platform's vite.config.js"),
        ("src/vite.config.js", "platform's vite.config.js"),
        ("src/package.json", "root package.json"),
        ("src/node_modules/vue/index.js", "toolchain"),
        (".zerocode/tsconfig.json", "platform's own"),
    ],
)
def test_build_configuration_cannot_be_written_or_modified(
    box: ToolBox, ws: MemoryWorkspace, path: str, hint: str
) -> None:
    """Files a build tool would run or read as configuration are refused with why and what to
    do instead; modify_file answers the same whether or not the file exists (a workspace may
    hold one from before), and deleting one is allowed (no build reads it either way)."""
    result = failed(box.run(call("write_file", {"path": path, "content": HOSTILE_CONFIG})))
    assert "is build configuration, which the platform owns" in result and hint in result
    assert (APP, path) not in ws.files
    modify = {"path": path, "old": "x", "new": HOSTILE_CONFIG}
    assert "is build configuration" in failed(box.run(call("modify_file", modify)))
    ws.files[(APP, path)] = b"module.exports = {x: 1}"
    assert "is build configuration" in failed(box.run(call("modify_file", modify)))
    assert ws.files[(APP, path)] == b"module.exports = {x: 1}"
    assert box.run(call("delete_file", {"path": path})).changed
    assert (APP, path) not in ws.files


NPMRC = "node-options=--require ./src/telemetry.cjs\n"


@pytest.mark.parametrize("path", STORABLE)
def test_what_the_download_leaves_out_cannot_be_written(
    box: ToolBox, ws: MemoryWorkspace, path: str
) -> None:
    """Every file a builder's package manager, editor or other tool would read or run
    (.npmrc, .yarnrc.yml, .pnpmfile.cjs, bunfig.toml, .vscode/tasks.json, .envrc, hooks...)
    is a failed result with the reason, planted or not; deleting one is allowed."""
    result = failed(box.run(call("write_file", {"path": path, "content": "x"})))
    assert result.endswith("Nothing was written.")
    assert "cannot be part of the app" in result or "is build configuration" in result
    assert (APP, clean_path(path)) not in ws.files
    ws.files[(APP, clean_path(path))] = b"planted x"
    assert "Nothing was written" in failed(
        box.run(call("modify_file", {"path": path, "old": "x", "new": "y"}))
    )
    assert ws.files[(APP, clean_path(path))] == b"planted x"
    assert box.run(call("delete_file", {"path": path})).changed


def test_the_telemetry_attack_is_refused_with_its_reasons(
    box: ToolBox, ws: MemoryWorkspace
) -> None:
    """The red team's case: .npmrc naming a .cjs file for node to --require."""
    before = dict(ws.files)
    npmrc = failed(box.run(call("write_file", {"path": ".npmrc", "content": NPMRC})))
    assert "a name starting with '.' is configuration or state of a tool" in npmrc
    cjs = failed(box.run(call("write_file", {"path": "src/telemetry.cjs", "content": "x"})))
    assert "'.cjs' files are not part of a web app" in cjs
    root = failed(box.run(call("write_file", {"path": "main.js", "content": "x"})))
    assert "code goes under src/" in root
    assert ws.files == before


@pytest.mark.parametrize("path", ["vite.config.js", "package-lock.json"])
def test_modify_file_on_the_platforms_build_files_says_why_even_when_absent(
    box: ToolBox, path: str
) -> None:
    modify = {"path": path, "old": "x", "new": "y"}
    assert "is the platform's and cannot be written" in failed(box.run(call("modify_file", modify)))
