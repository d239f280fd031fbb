"""The download's allow-list through the API in process: hand edits cannot write what the
builder's own tools would read or run, and a workspace already holding such files (from
before the rule, or a restore) downloads without them, each named in the README."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from tests.integration.http.conftest import Api
from tests.unit.publishing.test_download import unzipped
from tests.unit.publishing.test_export_rules import STORABLE
from zerocode.apps.workspace import clean_path
from zerocode.publishing import toolchain

VUE_APP = {
    "index.html": b'<div id="app"></div><script type="module" src="/src/main.js"></script>',
    "package.json": b'{"dependencies": {"vue": "3.5.45"}}',
    "src/main.js": b"import { createApp } from 'vue'\nimport App from './App.vue'\n",
    "src/App.vue": b"<template><h1>Newts</h1></template>\n",
    "public/robots.txt": b"User-agent: *\n",
}
PLATFORM = {"package.json", "package-lock.json", "vite.config.js", ".zerocode/tsconfig.json"}


PLANTED = [*STORABLE, "src/telemetry.cjs", "main.js"]


def vue_app(api: Api, owner: dict[str, str]) -> dict[str, Any]:
    created = api.client.post(
        "/api/apps", headers=owner, json={"initPrompt": "A Vue app", "codeGenType": "vue_project"}
    )
    assert created.status_code == 201, created.text
    return dict(created.json())


def test_hand_edits_of_files_the_download_leaves_out_are_400_with_why(api: Api) -> None:
    c, owner = api.client, api.user()
    app = vue_app(api, owner)
    for path, why in [
        (".npmrc", "a name starting with '.'"),
        (".vscode/tasks.json", "a name starting with '.'"),
        (".yarnrc.yml", "a name starting with '.'"),
        ("bunfig.toml", "load or run a file of this name"),
        ("eslint.config.js", "load or run a file of this name"),
        ("src/telemetry.cjs", "'.cjs' files are not part of a web app"),
        ("main.js", "code goes under src/"),
        ("postcss.config.js", "PostCSS"),
        ("vite.config.js", "is the platform's"),
    ]:
        saved = c.put(
            f"/api/apps/{app['id']}/files/{quote(path)}", headers=owner, json={"content": "x"}
        )
        assert saved.status_code == 400, (path, saved.text)
        error = saved.json()["error"]
        assert error["code"] == "file_refused" and why in error["message"], (path, error)
    scripts = json.dumps({"scripts": {"postinstall": "node src/telemetry.cjs"}})
    saved = c.put(
        f"/api/apps/{app['id']}/files/package.json", headers=owner, json={"content": scripts}
    )
    assert saved.status_code == 400 and "scripts are the platform's" in saved.text
    assert api.platform.workspace.list(app["id"]) == []  # nothing was written

    static = api.app(owner)  # an html app is its index.html: a package.json is no page of it
    saved = c.put(
        f"/api/apps/{static['id']}/files/package.json", headers=owner, json={"content": "{}"}
    )
    assert saved.status_code == 400 and saved.json()["error"]["code"] == "file_refused"


def test_a_workspace_holding_them_downloads_without_them(api: Api) -> None:
    c, owner = api.client, api.user()
    app = vue_app(api, owner)
    for path, data in VUE_APP.items():
        api.platform.workspace.write(app["id"], path, data)
    for path in PLANTED:  # as if written before the rule, or put back by a restore
        api.platform.workspace.write(app["id"], path, b"require('fs').writeFileSync('m', '')")
    top, zipped = unzipped(c.get(f"/api/apps/{app['id']}/download", headers=owner).content)
    assert top == app["id"] or top.isascii()
    assert set(zipped) == set(VUE_APP) | PLATFORM | {"README.md"}
    assert zipped["vite.config.js"] == toolchain.vite_config()
    assert set(json.loads(zipped["package.json"])["scripts"]) == {"dev", "build", "preview"}
    readme = zipped["README.md"].decode()
    left_out = readme.split("## Left out", 1)[1]
    assert f"{len(PLANTED)} of the app's files are not in this download" in readme
    assert all(f"- `{clean_path(p)}`\n" in left_out for p in PLANTED)
