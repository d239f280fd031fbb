"""What of an app may leave the platform: the allow-list every export path uses.

An export (the download's zip today; any other later) lands on the builder's own machine,
where their package manager, editor, version manager, direnv, git and CI read files of a
project as configuration or run them on their own: ``.npmrc``'s ``node-options`` runs a file
at ``npm ci``, ``.yarnrc.yml``'s ``yarnPath`` replaces yarn, ``.pnpmfile.cjs`` runs at every
pnpm install, ``bunfig.toml`` preloads a module, ``.vscode/tasks.json`` runs a command when the
folder opens, ``.envrc`` when a shell enters it. A refusal list of such names never ends, so
an export is an allow-list (docs/security.md, "The download: an allow-list"): only what the
platform builds from and publishes, decided by structure:

- no part of the path starts with ``.`` (every dotfile and dot-directory above and all like
  them: ``.idea/``, ``.git*``, ``.husky/``, ``.github/``, ``.devcontainer/``, ``.nvmrc``,
  ``.tool-versions``, ``.exrc``...), and none is ``node_modules``;
- the file is of a kind a web app is made of (:data:`KINDS`: its sources, pages and
  assets), so no ``Makefile``, ``Dockerfile``, ``bunfig.toml``, ``flake.nix`` or workflow;
- its name is not one a tool looks for (:data:`_TOOL_NAMES`: ``*.config.*``, ``gulpfile.*``,
  ``deno.json``... and every build configuration name of :func:`toolchain.config_refusal`);
- a Vue project's root holds no code but ``index.html`` (code goes under ``src/``): the
  root is where tools look for their own configuration files;
- an html or multi_file app is its page files and nothing else.

The tools and hand edits refuse to write what an export would leave out (one rule, so what
the model writes is what the builder gets); files a workspace holds from before, or a
restore puts back, are left out of the export and named in its README.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from zerocode.apps import assets
from zerocode.apps.records import CodeGenType
from zerocode.data.model import DATA_MODEL
from zerocode.errors import InvalidInput
from zerocode.publishing import toolchain


class FileRefused(InvalidInput):
    """A hand edit of a file the app cannot hold (the tools give the model the same reason)."""

    code = "file_refused"


# The kinds of file a web app is made of, by extension (lower case): sources, pages, styles,
# data, documents and assets. Nothing a tool runs by kind (.cjs/.cts, shell, Python, Nix...).
SOURCE_KINDS = frozenset(
    {"vue", "js", "mjs", "jsx", "ts", "mts", "tsx", "css", "json", "html", "htm"}
)
ASSET_KINDS = frozenset(
    {
        *("md", "txt", "csv", "tsv", "xml", "webmanifest", "vtt", "pdf", "wasm"),
        *("svg", "png", "jpg", "jpeg", "gif", "webp", "avif", "ico", "bmp", "apng", "cur"),
        *("woff", "woff2", "ttf", "otf", "eot"),
        *("mp3", "mp4", "webm", "ogg", "oga", "ogv", "wav", "m4a", "flac", "aac", "opus"),
    }
)
KINDS = SOURCE_KINDS | ASSET_KINDS
_KINDS_SHOWN = ", ".join(sorted(KINDS))
# What a Vue project's root may hold besides data and assets: its page, its package.json
# (replaced by the platform's in every build and export) and its data model (data, read by
# the platform alone: zerocode/data/model.py).
VUE_ROOT_CODE = frozenset({"index.html", toolchain.PACKAGE_JSON, DATA_MODEL})
# The page files of an html / multi_file app (engine.codegen.FILES) and its data model: all
# it is made of.
STATIC_FILES: Mapping[CodeGenType, frozenset[str]] = {
    CodeGenType.HTML: frozenset({"index.html", DATA_MODEL}),
    CodeGenType.MULTI_FILE: frozenset({"index.html", "style.css", "script.js", DATA_MODEL}),
}

# Names other tools load or run from a project on their own (editor extensions run ESLint,
# Prettier, Jest, Playwright, Tailwind and UnoCSS configs; VS Code's task detection runs
# gulp, grunt and jake files; Deno and Bun read theirs), at any depth, case-insensitive
# (macOS and Windows file systems are): named even when of an allowed kind.
_TOOL_NAMES = re.compile(
    r".+\.(config|conf)\.[^.]+"
    r"|(gulpfile|gruntfile|jakefile|pnpmfile|bunfig)(\..+)?"
    r"|(biome|deno|nodemon|turbo|nx|project|vercel|now|firebase|renovate|devbox|jsr|bower"
    r"|composer|tslint|dprint|rome|knip|cspell|nest-cli|angular|devcontainer)\.jsonc?"
    r"|.+\.(code-workspace|code-snippets|sublime-project)",
    re.IGNORECASE,
)

DOT = (
    "a name starting with '.' is configuration or state of a tool on the builder's machine "
    "(.npmrc, .yarnrc.yml, .pnpmfile.cjs, .vscode/, .idea/, .envrc, .nvmrc, .git hooks, "
    ".github/, .devcontainer/...), never part of a web app"
)
TOOL = (
    "package managers, editors and other tools load or run a file of this name from a "
    "project on their own (ESLint, Prettier, Jest, gulp, Deno, Bun...): give it another name"
)
PACKAGES = "node_modules/ is installed by the package manager from the lockfile, never shipped"
ROOT_CODE = (
    "a Vue project's code goes under src/ (its root holds only index.html and package.json: "
    "the root is where tools look for their own configuration)"
)


def refusal(kind: CodeGenType, path: str) -> str | None:
    """Why ``path`` (a clean workspace path) of an app of this kind is never exported and
    cannot be written, or None. A Vue project's package.json, vite.config.js and lockfile at
    its root are None: the platform's replace them (the tools check them on their own)."""
    parts = path.split("/")
    name = parts[-1]
    if any(part.startswith(".") for part in parts):
        return DOT
    if any(part.lower() == "node_modules" for part in parts):  # any case: macOS reads it so
        return PACKAGES
    if kind is not CodeGenType.VUE_PROJECT:
        allowed = STATIC_FILES[kind]
        if path in allowed or assets.is_asset_file(kind, path):
            return None
        return (
            f"this app's files are {', '.join(sorted(allowed))} and its uploaded images in "
            f"{assets.folder(kind)}"
        )
    if path == toolchain.PACKAGE_JSON or path in toolchain.PLATFORM_OWNED:
        return None
    vite = toolchain.config_refusal(path)
    if vite is not None:
        return vite
    if _TOOL_NAMES.fullmatch(name):
        return TOOL
    extension = name.rpartition(".")[2].lower() if "." in name else ""
    if extension not in KINDS:
        what = f"'.{extension}' files are" if extension else "files without an extension are"
        return f"{what} not part of a web app (its sources, pages and assets: {_KINDS_SHOWN})"
    if len(parts) == 1 and extension in SOURCE_KINDS and name not in VUE_ROOT_CODE:
        return ROOT_CODE
    return None


@dataclass(frozen=True)
class Export:
    """The app's files an export carries, and those it leaves out with why (said in it)."""

    files: dict[str, bytes]
    left_out: dict[str, str] = field(default_factory=dict)


def select(kind: CodeGenType, files: Mapping[str, bytes]) -> Export:
    """The app's files split by :func:`refusal`: every export path starts here."""
    kept: dict[str, bytes] = {}
    left_out: dict[str, str] = {}
    for path, data in files.items():
        why = refusal(kind, path)
        if why is None:
            kept[path] = data
        else:
            left_out[path] = why
    return Export(kept, left_out)
