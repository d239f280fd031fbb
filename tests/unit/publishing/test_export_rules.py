"""The export's allow-list (publishing/export_rules.py): what the builder's own tools read or
run never leaves the platform, for every app kind, under any name, case or depth."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import PathRefused, clean_path
from zerocode.publishing.export_rules import DOT, KINDS, ROOT_CODE, TOOL, refusal, select

KINDS_OF_APP = list(CodeGenType)
VUE = CodeGenType.VUE_PROJECT

# Files a tool of the builder's machine reads as configuration or runs on its own: package
# managers, editors, version managers, direnv, git hooks, dev containers, CI, task runners.
HOSTILE = [
    # npm, yarn, pnpm, bun, deno, corepack
    ".npmrc", ".yarnrc", ".yarnrc.yml", ".yarn/releases/yarn-evil.cjs", ".pnp.cjs",
    ".pnp.loader.mjs", ".pnpmfile.cjs", ".pnpmfile.mjs", "pnpmfile.cjs", "pnpm-workspace.yaml",
    "bunfig.toml", "bun.lockb", "bun.lock", "deno.json", "deno.jsonc", "yarn.lock",
    "npm-shrinkwrap.json", ".npmignore", "lerna.json", "nx.json", "turbo.json",
    # editors
    ".vscode/tasks.json", ".vscode/settings.json", ".vscode/extensions.json", ".idea/workspace.xml",
    ".idea/runConfigurations/x.xml", "app.code-workspace", "x.sublime-project", ".exrc", ".vimrc",
    ".nvimrc", ".nvim.lua", ".lvimrc", ".dir-locals.el", "Session.vim", ".editorconfig",
    ".zed/settings.json", ".fleet/run.json", ".helix/config.toml",
    # linters and formatters editor extensions run
    "eslint.config.js", "eslint.config.mjs", "eslint.config.ts", ".eslintrc.js", ".eslintrc.cjs",
    "prettier.config.js", ".prettierrc", ".prettierrc.cjs", "stylelint.config.mjs",
    ".stylelintrc.js", "biome.json", "biome.jsonc", "jest.config.js", "vitest.config.ts",
    "vitest.workspace.ts", "playwright.config.ts", "cypress.config.js", "karma.conf.js",
    "tailwind.config.js", "uno.config.ts", "postcss.config.cjs", "svelte.config.js",
    "babel.config.json", ".babelrc", "tsconfig.json", "jsconfig.json", "tsconfig.app.json",
    # task runners (VS Code's task detection), build files of other ecosystems
    "gulpfile.js", "Gulpfile.mjs", "gruntfile.js", "Gruntfile.cjs", "jakefile.js", "Makefile",
    "GNUmakefile", "justfile", "Taskfile.yml", "Rakefile", "Dockerfile", "Containerfile",
    "docker-compose.yml", "compose.yaml", "Procfile", "Vagrantfile", "build.gradle",
    # version managers, direnv, nix
    ".nvmrc", ".node-version", ".tool-versions", ".mise.toml", "mise.toml", ".python-version",
    ".envrc", ".env", ".env.local", "flake.nix", "shell.nix", "devbox.json", ".prototools",
    # git, hooks, dev containers, CI
    ".gitattributes", ".gitignore", ".gitmodules", ".husky/pre-commit", ".githooks/pre-push",
    ".git-hooks/post-checkout", "lefthook.yml", ".pre-commit-config.yaml",
    ".devcontainer/devcontainer.json", ".devcontainer.json", ".github/workflows/ci.yml",
    ".gitlab-ci.yml", ".circleci/config.yml", ".travis.yml", "Jenkinsfile",
    "azure-pipelines.yml", "bitbucket-pipelines.yml", "netlify.toml", "vercel.json",
    # scripts of any kind a shell or Node runs, and other binaries
    "install.sh", "setup.py", "run.ps1", "x.bat", "x.cmd", "x.exe", "x.cjs", "x.cts", "x.node",
    "x.py", "x.sh", "x.zsh", "x.fish", "x.desktop", "x.lnk", "x.url", "LICENSE",
    # Windows drops trailing dots and spaces, and reads ':' as a stream
    "package.json.", "bunfig.toml ", "x.js:stream", "x.js::$DATA",
    # the platform's own directory, and packages of the app's own
    ".zerocode/tsconfig.json", "node_modules/vue/index.js",
]  # fmt: skip


def storable(path: str) -> bool:
    """Whether a workspace can hold ``path`` at all (clean_path refuses .git/, node_modules/
    at the root...): what a write or a planted file can be named."""
    try:
        clean_path(path)
    except PathRefused:
        return False
    return True


STORABLE = [p for p in HOSTILE if storable(p)]
# What a Vue app is made of: every one is kept.
VUE_SOURCES = [
    "index.html", "package.json", "README.md", "favicon.ico", "logo.png", "notes.txt",
    "src/main.js", "src/App.vue", "src/router/index.js", "src/views/HomeView.vue",
    "src/components/Nav.vue", "src/main.ts", "src/env.d.ts", "src/style.css",
    "src/data/items.json", "src/assets/logo.svg", "src/assets/font.woff2", "src/worker.mjs",
    "public/favicon.ico", "public/robots.txt", "public/sw.js", "public/manifest.webmanifest",
    "public/video.mp4", "notes/ok.txt", "src/config.js", "src/app-config.js",
]  # fmt: skip


def placements(name: str) -> list[str]:
    """The name at the root, in the source folders and deep inside them."""
    return [name, f"src/{name}", f"public/{name}", f"src/components/deep/{name}"]


@pytest.mark.parametrize("kind", KINDS_OF_APP)
@pytest.mark.parametrize("name", HOSTILE)
def test_no_tool_file_leaves_under_any_placement_or_case(kind: CodeGenType, name: str) -> None:
    for path in placements(name):
        for variant in {path, path.upper(), path.lower(), path.title()}:
            assert refusal(kind, variant) is not None, (kind, variant)


def test_what_a_vue_app_is_made_of_is_kept() -> None:
    kept = select(VUE, dict.fromkeys(VUE_SOURCES, b"x"))
    assert (set(kept.files), kept.left_out) == (set(VUE_SOURCES), {})


def test_the_platforms_files_of_a_vue_app_are_replaced_not_listed() -> None:
    """Its vite.config.js and lockfile are in every export, as the platform's own."""
    for path in ("package.json", "vite.config.js", "package-lock.json"):
        assert refusal(VUE, path) is None


@pytest.mark.parametrize(
    ("kind", "pages"),
    [
        (CodeGenType.HTML, {"index.html"}),
        (CodeGenType.MULTI_FILE, {"index.html", "style.css", "script.js"}),
    ],
)
def test_a_static_app_is_its_page_files(kind: CodeGenType, pages: set[str]) -> None:
    files = dict.fromkeys([*pages, *VUE_SOURCES, *HOSTILE], b"x")
    export = select(kind, files)
    assert set(export.files) == pages
    assert set(export.left_out) == set(files) - pages
    assert refusal(kind, "package.json") is not None  # no scripts to run at `npm install`


def test_each_class_has_its_reason() -> None:
    assert refusal(VUE, ".npmrc") == refusal(VUE, "src/.vscode/tasks.json") == DOT
    assert refusal(VUE, "eslint.config.js") == refusal(VUE, "src/gulpfile.js") == TOOL
    assert refusal(VUE, "main.js") == refusal(VUE, "data.json") == ROOT_CODE
    assert "'.cjs' files are not part of a web app" in str(refusal(VUE, "src/telemetry.cjs"))
    assert "without an extension" in str(refusal(VUE, "Makefile"))
    assert "this app's files are index.html" in str(refusal(CodeGenType.HTML, "a.html"))
    assert "PostCSS" in str(refusal(VUE, "postcss.config.js"))  # the build's own reason


_PART = st.text(alphabet=st.sampled_from("abcXYZ09._-"), min_size=1, max_size=12).filter(
    lambda p: p not in (".", "..")
)


@given(st.lists(_PART, min_size=1, max_size=4), st.sampled_from(KINDS_OF_APP))
def test_whatever_is_kept_is_a_web_file_outside_any_tools_reach(
    parts: list[str], kind: CodeGenType
) -> None:
    """Over arbitrary paths: what is kept has no dot part, no node_modules, an allowed
    kind, is no tool's name, and holds code at a Vue root only as index.html or package.json;
    the builder's package manager and editor find nothing of theirs."""
    path = "/".join(parts)
    try:
        path = clean_path(path)
    except Exception:
        return
    if refusal(kind, path) is not None:
        return
    names = path.lower().split("/")
    assert not any(p.startswith(".") for p in names) and "node_modules" not in names
    assert "." in names[-1] and names[-1].rpartition(".")[2] in KINDS
    assert ".config." not in names[-1] and not names[-1].startswith(("gulpfile", "pnpmfile"))
    if kind is VUE and len(names) == 1:
        assert names[0].rpartition(".")[2] not in {"js", "mjs", "ts", "json", "vue", "css"} or (
            names[0] in {"index.html", "package.json"}
        )
