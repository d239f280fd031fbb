"""An app's download: the project as the platform builds it, zipped, and the header naming it.

Only what :func:`zerocode.publishing.export_rules.select` allows of the app's files goes in
(the export's allow-list: nothing the builder's package manager, editor or other tools read as
configuration or run on their own); what it leaves out is named, with why, in the README. A
Vue app's zip is then the build tree (:func:`zerocode.publishing.toolchain.build_tree`, the
function every build uses) with the platform's package.json, vite.config.js and TypeScript
settings, plus the platform's lockfile and npm scripts, so ``npm ci && npm run build`` builds
it anywhere as the platform does. An html or multi_file app's zip is its page files. Each has
a short README.md (``BUILDING.md`` when the app has a README.md of its own). Nothing else of
the platform's goes in. Every entry is under one top-level folder named after the app
(:func:`folder`), so unzipping never spills files into the current directory. The archive
is deterministic: sorted entries, fixed times and modes.

The file name travels in ``Content-Disposition`` as RFC 6266 says (:func:`content_disposition`):
an ASCII ``filename`` fallback and the exact name, UTF-8 and percent-encoded, in
``filename*`` (RFC 8187, which replaced RFC 5987).
"""

from __future__ import annotations

import io
import json
import re
import unicodedata
import urllib.parse
import zipfile
from collections.abc import Mapping

from zerocode.apps.guards import BIDI_CONTROLS
from zerocode.apps.records import App, CodeGenType
from zerocode.publishing import export_rules, toolchain

README, README_ASIDE = "README.md", "BUILDING.md"
# Every entry's time: the earliest a zip can hold, so the same files make the same bytes.
_EPOCH = (1980, 1, 1, 0, 0, 0)
_FILE_MODE = 0o100644 << 16  # a regular file, rw-r--r--
# The longest name a header carries (app names are at most 60 characters; this bounds what
# any caller could pass), and the longest ASCII fallback.
MAX_NAME_CHARS = 200
MAX_FALLBACK_CHARS = 80
# What the ASCII fallback keeps: letters, digits, spaces and a few marks no user agent or
# header parser reads as syntax (no quote, backslash, semicolon, equals sign, percent, slash
# or comma).
_FALLBACK_DROP = re.compile(r"[^A-Za-z0-9 ._()\-+!&'~@#$^\[\]{}]+")
# The zip's top-level folder: lower-case ASCII letters and digits joined by "-", bounded.
MAX_FOLDER_CHARS = 60
_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def project(app: App, files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The files of the downloaded project, by path: what :func:`archive` zips."""
    export = export_rules.select(app.code_gen_type, files)
    if app.code_gen_type is CodeGenType.VUE_PROJECT:
        tree = toolchain.build_tree(export.files)
        package = json.loads(tree[toolchain.PACKAGE_JSON])
        package["scripts"] = dict(toolchain.PLATFORM_SCRIPTS)  # `npm run build` is vite build
        tree[toolchain.PACKAGE_JSON] = (json.dumps(package, indent=2) + "\n").encode()
        tree[toolchain.LOCKFILE] = toolchain.manifest()[toolchain.LOCKFILE]
    else:
        tree = dict(export.files)
    tree[README_ASIDE if README in tree else README] = readme(app, export.left_out).encode()
    return tree


def folder(app: App) -> str:
    """The zip's one top-level folder: the app's name as a safe ASCII slug ("Café Todos" is
    ``cafe-todos``), or the app id when nothing of the name is ASCII. A slug, not the exact
    name: it becomes a directory on any file system and in any shell without quoting."""
    folded = unicodedata.normalize("NFKD", _printable(app.name)).encode("ascii", "ignore")
    slug = _SLUG_DROP.sub("-", folded.decode("ascii").lower()).strip("-")
    slug = slug[:MAX_FOLDER_CHARS].rstrip("-")
    return slug if any(c.isalnum() for c in slug) else app.id


def archive(app: App, files: Mapping[str, bytes]) -> bytes:
    """The downloaded project as a zip, under :func:`folder` (the same files make the same
    bytes)."""
    top = folder(app)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, data in sorted(project(app, files).items()):
            info = zipfile.ZipInfo(f"{top}/{path}", date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, so the mode below is read as one
            info.external_attr = _FILE_MODE
            zf.writestr(info, data)
    return buffer.getvalue()


def readme(app: App, left_out: Mapping[str, str] | None = None) -> str:
    """How to build or open the project, and which of the app's files were left out, why."""
    return _how(app, folder(app)) + _left_out(left_out or {})


def _left_out(left_out: Mapping[str, str]) -> str:
    """The app's files the export's allow-list left out, grouped by reason (nothing is
    dropped without saying so)."""
    if not left_out:
        return ""
    by_reason: dict[str, list[str]] = {}
    for path, why in sorted(left_out.items()):
        by_reason.setdefault(why, []).append(path)
    text = (
        "\n## Left out\n\n"
        f"{len(left_out)} of the app's files are not in this download: only what the platform\n"
        "builds from and publishes is, never a file your package manager, editor or other\n"
        "tools would read as configuration or run on their own.\n"
    )
    for why, paths in by_reason.items():
        text += f"\n{why[:1].upper()}{why[1:]}:\n\n" + "".join(f"- `{p}`\n" for p in paths)
    return text


def _how(app: App, top: str) -> str:
    name = _printable(app.name) or app.id
    if app.code_gen_type is CodeGenType.VUE_PROJECT:
        return (
            f"# {name}\n\n"
            "A Vue 3 + Vite project made with zerocode, as the platform builds it: the app's\n"
            "sources with the platform's package.json, package-lock.json, vite.config.js and\n"
            ".zerocode/tsconfig.json (build configuration of the app's own is left out).\n"
            f"Unzipped, it is the folder `{top}/`.\n\n"
            "## Build\n\n"
            "With Node.js 20.19 or newer and npm:\n\n"
            f"    cd {top}\n"
            "    npm ci && npm run build\n\n"
            "`npm run build` lists the files it wrote: `dist/` is then the static site, for\n"
            "any static host (its paths are relative, so any folder works).\n\n"
            "## Edit\n\n"
            "    npm run dev\n\n"
            "serves the project while you edit and prints its address (e.g.\n"
            "http://localhost:5173/); the page reloads as you save.\n"
        )
    what = "a single HTML file" if app.code_gen_type is CodeGenType.HTML else "HTML, CSS and JS"
    return (
        f"# {name}\n\n"
        f"A static web page made with zerocode ({what}); there is nothing to build.\n"
        f"Unzipped, it is the folder `{top}/`.\n\n"
        "Open `index.html` in a browser, or serve the folder with any static web server,\n"
        f"e.g. `cd {top} && python3 -m http.server 8000` and then http://localhost:8000/.\n"
    )


def content_disposition(name: str, default: str, extension: str = ".zip") -> str:
    """``attachment`` with the file ``name + extension`` (RFC 6266): ``filename`` is an ASCII
    fallback (``default``, e.g. the app id, when nothing of the name is ASCII) and
    ``filename*`` the name itself, UTF-8 and percent-encoded. The value is plain ASCII with
    no quote, backslash, semicolon or line break of the name's, whatever the name holds."""
    exact = _printable(name)[:MAX_NAME_CHARS].strip() or default
    fallback = ascii_fallback(exact) or ascii_fallback(default) or "download"
    encoded = urllib.parse.quote(exact + extension, safe="")
    return f"attachment; filename=\"{fallback}{extension}\"; filename*=UTF-8''{encoded}"


def ascii_fallback(name: str) -> str:
    """The name's ASCII letters, digits and harmless marks (accents dropped, ``é`` as
    ``e``), or "" when it has no letter or digit left."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    kept = " ".join(_FALLBACK_DROP.sub(" ", folded).split())[:MAX_FALLBACK_CHARS]
    kept = kept.strip(" .")  # no hidden file, no trailing dot
    return kept if any(c.isalnum() for c in kept) else ""


def _printable(name: str) -> str:
    """The name without what no file name should hold: control characters, lone surrogates
    and bidi controls (which could show "exe.txt" for "txt.exe"); spaces collapsed."""
    kept = (
        " " if unicodedata.category(c) == "Cc" else c
        for c in name
        if unicodedata.category(c) != "Cs" and c not in BIDI_CONTROLS
    )
    return " ".join("".join(kept).split())
