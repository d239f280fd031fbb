"""Nothing the app wrote runs, or is read as configuration, while it is built; and nothing
outside the project ends up in what it builds (docs/security.md). Real Vite, in the real
sandbox, through LocalBuilder; the hostile files are put straight into the source snapshot,
past the tools' refusals, as a workspace written before them (or restored) would hold them.

Every build tool of the toolchain was read for the files it looks for in a project
(toolchain.config_refusal lists them). Each JavaScript-capable one here prints a marker and
leaves a marker file in dist/ when the process exits, if it is ever loaded; each JSON or rc
one would fail the build or change its output if it were read (a tsconfig.json extending a
missing file, .env values that import.meta.env would inline, a PostCSS rc naming a plugin
that prints the marker, an invalid browserslist query). The build must succeed without any.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.integration.publishing.test_vue_template_builds import created_files
from zerocode.apps.records import CodeGenType
from zerocode.apps.workspace import Snapshot
from zerocode.publishing import toolchain
from zerocode.publishing.builds import BuildJob, BuildOutcome, new_build_id

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")

MARK = "ZC_HOSTILE_RAN"
SECRET = "ZC_SECRET_7f3a"

_ESM = """import {{ mkdirSync, writeFileSync }} from 'node:fs'
console.log('{mark} {name}')
process.on('exit', () => {{
  try {{ mkdirSync('dist', {{ recursive: true }}); writeFileSync('dist/{file}', '{name}') }}
  catch {{}}
}})
export default {{}}
"""
_CJS = """const {{ mkdirSync, writeFileSync }} = require('node:fs')
console.log('{mark} {name}')
process.on('exit', () => {{
  try {{ mkdirSync('dist', {{ recursive: true }}); writeFileSync('dist/{file}', '{name}') }}
  catch {{}}
}})
module.exports = {{}}
"""
PLUGIN = "src/zc-hostile-plugin.cjs"  # an ordinary source file: runs only if a config names it
_PLUGIN_TAIL = (
    "module.exports = () => ({ postcssPlugin: 'zc-hostile' })\nmodule.exports.postcss = true\n"
)
_RC_JSON = json.dumps({"plugins": {"./src/zc-hostile-plugin.cjs": {}}})
_RC_YAML = "plugins:\n  ./src/zc-hostile-plugin.cjs: {}\n"
_BABEL_JSON = json.dumps({"plugins": ["./src/zc-hostile-plugin.cjs"]})
_TSCONFIG = json.dumps(
    {
        "extends": "./zc-missing-base.json",
        "compilerOptions": {"experimentalDecorators": True, "jsx": "preserve"},
    }
)
_ENV_FILES = (".env", ".env.local", ".env.production", ".env.production.local")


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _code(name: str) -> str:
    cjs = name.endswith((".cjs", ".cts"))
    return (_CJS if cjs else _ESM).format(mark=MARK, name=name, file=f"zc-ran-{_slug(name)}")


def hostile_config_files(where: str = "") -> dict[str, str]:
    """A hostile copy of every build configuration file, under ``where``."""
    js = [
        *(f"vite.config.{e}" for e in ("js", "mjs", "ts", "cjs", "mts", "cts")),
        *(f"vitest.config.{e}" for e in ("js", "ts", "mjs")),
        *(f"postcss.config.{e}" for e in ("js", "cjs", "mjs", "ts", "cts", "mts")),
        *(f".postcssrc.{e}" for e in ("js", "cjs", "mjs", "ts", "cts", "mts")),
        *(f"tailwind.config.{e}" for e in ("js", "cjs", "mjs", "ts")),
        *(f"babel.config.{e}" for e in ("js", "cjs", "mjs")),
        ".babelrc.js",
    ]
    files = {where + name: _code(name) for name in js}
    files.update(
        {
            where + ".postcssrc": _RC_JSON,
            where + ".postcssrc.json": _RC_JSON,
            where + ".postcssrc.yaml": _RC_YAML,
            where + ".postcssrc.yml": _RC_YAML,
            where + ".config/postcssrc.json": _RC_JSON,
            where + ".babelrc": _BABEL_JSON,
            where + ".babelrc.json": _BABEL_JSON,
            where + "babel.config.json": _BABEL_JSON,
            where + "tsconfig.json": _TSCONFIG,
            where + "tsconfig.app.json": _TSCONFIG,
            where + "jsconfig.json": _TSCONFIG,
            where + ".browserslistrc": "this is not a browserslist query !!!\n",
            where + "browserslist": "this is not a browserslist query !!!\n",
            where + "pnpm-workspace.yaml": "packages:\n  - 'nowhere/*'\n",
            where + "lerna.json": "{}",
            where + "deno.json": json.dumps({"workspace": ["./nowhere"]}),
            where + "src/node_modules/vue-router/package.json": json.dumps(
                {"name": "vue-router", "version": "4.5.1", "main": "index.js"}
            ),
            where + "src/node_modules/vue-router/index.js": _code("node_modules/vue-router")
            + "export const createRouter = () => ({}), createWebHashHistory = () => ({})\n",
        }
    )
    for i, name in enumerate(_ENV_FILES):
        files[where + name] = f"VITE_ZC_{i}={SECRET}-{i}\nNODE_ENV=development\n"
    package = {"postcss": json.loads(_RC_JSON), "browserslist": ["not a query !!!"]}
    if where:  # a nested package.json (the root one is the app's, below)
        files[where + "package.json"] = json.dumps({"name": "zc-nested", **package})
    return files


def hostile_project(where: str = "") -> dict[str, bytes]:
    """The offline model's Vue project with every hostile file; its sources use TypeScript,
    CSS and import.meta.env, so each tool that might look for a config has a reason to."""
    files = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
    package = json.loads(files["package.json"])
    package["postcss"] = json.loads(_RC_JSON)
    package["browserslist"] = ["not a query !!!"]
    files["package.json"] = json.dumps(package).encode()
    env = ", ".join(f"import.meta.env.VITE_ZC_{i}" for i in range(len(_ENV_FILES)))
    files["src/main.js"] += (
        "\nimport './zc.css'\nimport { typed } from './zc-typed.ts'\n"
        f"console.log('zc-env', typed, [{env}], import.meta.env.MODE)\n"
    ).encode()
    files["src/zc-typed.ts"] = b"export const typed: number = 41 + 1\n"
    files["src/zc.css"] = b".zc-css { color: rebeccapurple; display: flex }\n"
    plugin = _CJS.format(mark=MARK, name=PLUGIN, file="zc-ran-plugin").replace(
        "module.exports = {}", ""
    )
    files[PLUGIN] = (plugin + _PLUGIN_TAIL).encode()
    files.update({p: c.encode() for p, c in hostile_config_files(where).items()})
    return files


def build(builder: object, files: dict[str, bytes]) -> BuildOutcome:
    job = BuildJob(
        app_id="app1",
        build_id=new_build_id(),
        kind=CodeGenType.VUE_PROJECT,
        source=Snapshot.of(files),
    )
    outcome: BuildOutcome = asyncio.run(builder.build(job))  # type: ignore[attr-defined]
    return outcome


def output(outcome: BuildOutcome) -> dict[str, bytes]:
    root = Path(outcome.output or "")
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def assert_inert(outcome: BuildOutcome) -> None:
    assert outcome.ok, outcome.log_tail
    assert MARK not in outcome.log_tail
    site = output(outcome)
    assert not [name for name in site if "zc-ran" in name], sorted(site)
    bundle = b"".join(site.values())
    assert SECRET.encode() not in bundle  # no .env value was inlined
    assert b"zc-env" in bundle and b"42" in bundle  # the TypeScript source was built
    assert b"rebeccapurple" in bundle or b"#639" in bundle  # and the CSS


@pytest.mark.parametrize("where", ["", "src/"], ids=["root", "src"])
def test_build_configuration_in_the_project_never_runs_or_counts(
    local_builder: object, where: str
) -> None:
    assert_inert(build(local_builder, hostile_project(where)))


def test_the_build_config_alone_keeps_them_inert(
    local_builder: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: were build_tree to let every hostile file through, the platform's
    vite.config.js still declares all Vite would look them up for (inline PostCSS, no envDir,
    the platform's tsconfig)."""
    monkeypatch.setattr(toolchain, "config_refusal", lambda path: None)
    files = hostile_project()
    nested = {p: files.pop(p) for p in list(files) if "/node_modules/" in p}  # below
    assert "postcss.config.js" in toolchain.build_tree(files)
    assert_inert(build(local_builder, files))
    # A node_modules of the app's would shadow the toolchain's packages (src/router/index.js
    # imports vue-router): the config refuses it.
    outcome = build(local_builder, {**files, **nested})
    assert not outcome.ok and outcome.error and outcome.error.startswith("zerocode: ")
    assert "src/node_modules/vue-router/index.js, a node_modules directory" in outcome.error
    assert MARK not in outcome.log_tail


# --- Files outside the project, read by Vite itself rather than imported -----------------

UP = "../" * 24  # from anywhere (the box's /build, or a host directory), up to /
HOST_FILE = "/usr/lib/os-release"  # in the box too: /usr is mounted read-only


def _forms(secret: bytes) -> list[bytes]:
    """``secret`` as it would appear in a bundle: raw, URL-encoded, base64 at any offset."""
    forms = [secret, quote(secret).encode()]
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + secret)
        forms.append(encoded[-(-8 * shift // 6) : -4])
    return forms


def _secrets() -> list[bytes]:
    found = [b"HOME=/tmp", b"PATH=/usr"]  # the box's own /proc/self/environ
    host = Path(HOST_FILE)
    if host.is_file():
        found.append(host.read_bytes()[:24])
    return [form for secret in found for form in _forms(secret)]


def _css(rule: str) -> dict[str, bytes]:
    return {"src/zc.css": rule.encode()}


VECTORS: dict[str, dict[str, bytes]] = {
    "new URL, relative": {
        "src/main.js": f"console.log(new URL('{UP}usr/lib/os-release', import.meta.url))".encode()
    },
    "new URL, absolute": {
        "src/main.js": f"console.log(new URL('{HOST_FILE}', import.meta.url))".encode()
    },
    "new URL, /proc/self/environ": {
        "src/main.js": b"console.log(new URL('/proc/self/environ', import.meta.url))"
    },
    "new URL, ?inline": {
        "src/main.js": (
            f"console.log(new URL('{UP}usr/lib/os-release?inline', import.meta.url))".encode()
        )
    },
    "index.html img src, relative": {"index.html": f'<img src="{UP}usr/lib/os-release">'.encode()},
    "index.html link icon, relative": {
        "index.html": f'<link rel="icon" href="{UP}usr/lib/os-release">'.encode()
    },
    "index.html script src": {
        "index.html": f'<script type="module" src="{UP}usr/lib/os-release"></script>'.encode()
    },
    "index.html stylesheet, relative": {
        "index.html": f'<link rel="stylesheet" href="{UP}usr/lib/os-release">'.encode()
    },
    "CSS url(), relative": _css(f".x {{ background: url({UP}usr/lib/os-release) }}"),
    "CSS url(), absolute": _css(f".x {{ background: url({HOST_FILE}) }}"),
    "CSS url(), /proc/self/environ": _css(".x { background: url(/proc/self/environ) }"),
    "CSS @import, relative": _css(f"@import '{UP}usr/lib/os-release';\n.x {{ color: red }}"),
    "CSS @import, absolute": _css(f"@import '{HOST_FILE}';\n.x {{ color: red }}"),
    "a worker's import": {
        "src/main.js": b"import W from './zc-worker.js?worker'\nnew W()",
        "src/zc-worker.js": f"import '{UP}usr/lib/os-release?raw'\npostMessage(1)\n".encode(),
    },
    "a worker's JS import": {
        "src/main.js": b"new Worker(new URL('./zc-worker.js', import.meta.url), {type: 'module'})",
        "src/zc-worker.js": b"import '/proc/self/cwd/../../usr/lib/os-release'\npostMessage(1)\n",
    },
    "SFC style src": {
        "src/App.vue": f'<style src="{HOST_FILE}"></style>'.encode(),
    },
}


def project_with(extra: dict[str, bytes]) -> dict[str, bytes]:
    """The offline model's project with ``extra`` added: index.html's in its <head>/<body>,
    src/main.js's and src/App.vue's at their end, src/zc.css imported by main.js."""
    files = {p: c.encode() for p, c in created_files("A Vue todo list").items()}
    for path, data in extra.items():
        if path == "index.html":
            tag = b"</head>" if data.startswith(b"<link") else b"</body>"
            files[path] = files[path].replace(tag, data + tag, 1)
        elif path in ("src/main.js", "src/App.vue"):
            files[path] += b"\n" + data + b"\n"
        else:
            files[path] = data
            if path.endswith(".css"):
                files["src/main.js"] += f"\nimport './{path.removeprefix('src/')}'\n".encode()
    return files


@pytest.mark.parametrize("vector", list(VECTORS))
def test_files_outside_the_project_fail_the_build(local_builder: object, vector: str) -> None:
    outcome = build(local_builder, project_with(VECTORS[vector]))
    assert not outcome.ok and outcome.output is None, outcome.log_tail
    assert outcome.error and outcome.error.startswith("zerocode: "), (
        outcome.error,
        outcome.log_tail,
    )
    assert "outside the project" in outcome.error
    assert not [form for form in _secrets() if form in outcome.log_tail.encode()]


def test_root_relative_urls_in_index_html_stay_in_the_project(local_builder: object) -> None:
    """Vite reads an absolute src/href of index.html from the project root (or public/), never
    from the host: /usr/lib/os-release and /proc/self/environ stay URLs of the site."""
    tags = (
        f'<img src="{HOST_FILE}"><img src="/proc/self/environ">'
        f'<link rel="stylesheet" href="{HOST_FILE}"><link rel="icon" href="/proc/self/environ">'
    )
    outcome = build(local_builder, project_with({"index.html": tags.encode()}))
    assert outcome.ok, outcome.log_tail
    site = output(outcome)
    assert not [form for form in _secrets() if form in b"".join(site.values())]
    assert f'src="{HOST_FILE}"'.encode() in site["index.html"]
    assert b'href="/proc/self/environ"' in site["index.html"]


PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP4z8DwHwAFAAIBpdnAtQAAAABJRU5ErkJggg=="
)


def test_project_files_keep_working(local_builder: object) -> None:
    """new URL() of a project file, an icon from public/, CSS url() of a project image, an
    <img> of one in index.html, inlined (small) or emitted (large) alike."""
    big = PNG + b"\0" * 8000
    extra = {
        "src/main.js": b"console.log(new URL('./assets/small.png', import.meta.url).href,"
        b" new URL('./assets/big.png', import.meta.url).href)",
        "src/zc.css": b".a { background: url(./assets/small.png) }\n"
        b".b { background: url(./assets/big.png) }\n.c { background: url(/favicon.ico) }\n",
        "index.html": b'<link rel="icon" href="/favicon.ico">',
    }
    files = project_with(extra)
    files["index.html"] = files["index.html"].replace(
        b"</body>", b'<img src="./src/assets/big.png"></body>', 1
    )
    files.update(
        {"src/assets/small.png": PNG, "src/assets/big.png": big, "public/favicon.ico": PNG}
    )
    outcome = build(local_builder, files)
    assert outcome.ok, outcome.log_tail
    site = output(outcome)
    assert site["favicon.ico"] == PNG
    emitted = [name for name in site if name.startswith("assets/big-") and name.endswith(".png")]
    assert emitted and site[emitted[0]] == big
    assert b'href="./favicon.ico"' in site["index.html"]
    assert f'src="./{emitted[0]}"'.encode() in site["index.html"]
    assert base64.b64encode(PNG)[:40] in b"".join(site.values())  # the small one, inlined
