"""GET /api/apps/{id}/download over real HTTP: apps named in any script download under their
exact name (RFC 6266 / 5987), and a Vue app's zip builds on its own with npm."""

from __future__ import annotations

import email.message
import email.utils
import io
import json
import os
import re
import subprocess
import urllib.parse
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import chat, create
from tests.unit.publishing.test_download import unzipped
from zerocode.bootstrap.settings import Settings
from zerocode.publishing import toolchain

# What the platform adds to a Vue app's files in its zip; nothing else of its own goes in.
PLATFORM_FILES = {
    "package.json",
    "package-lock.json",
    "vite.config.js",
    ".zerocode/tsconfig.json",
    "README.md",
}


def download(client: httpx.Client, app_id: str) -> tuple[str, str, dict[str, bytes]]:
    """The ASCII fallback, the exact file name (as Python's email package and urllib read the
    header) and the zip's files under its one top-level folder."""
    response = client.get(f"/api/apps/{app_id}/download")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/zip"
    header = response.headers["content-disposition"]
    msg = email.message.Message()
    msg["Content-Disposition"] = header
    params = msg.get_params(header="content-disposition")
    assert params is not None and params[0] == ("attachment", "")
    (plain,) = [v for k, v in params[1:] if k == "filename" and isinstance(v, str)]
    (extended,) = [v for k, v in params[1:] if isinstance(v, tuple)]
    exact = email.utils.collapse_rfc2231_value(extended)
    encoded = re.search(r"filename\*=UTF-8''([^;\s]+)", header)
    assert encoded is not None and urllib.parse.unquote(encoded.group(1)) == exact
    assert plain.isascii() and plain.endswith(".zip") and plain != ".zip"
    return plain, exact, unzipped(response.content)[1]


def test_a_chinese_prompts_app_downloads_under_the_models_name(client: httpx.Client) -> None:
    """The report's case: an app named from a Chinese prompt answered 500."""
    app = create(client, "做一个番茄钟网页", "html")
    assert chat(client, app["id"], app["initPrompt"]).ended == ("succeeded", 1)
    name = client.get(f"/api/apps/{app['id']}").json()["name"]
    assert not name.isascii(), name  # named in Chinese, as the prompt is
    plain, exact, zf = download(client, app["id"])
    assert exact == f"{name}.zip"
    if not re.search(r"[A-Za-z0-9]", name):
        assert plain == f"{app['id']}.zip"
    assert sorted(zf) == ["README.md", "index.html"]
    assert zf["README.md"].decode().startswith(f"# {name}\n")


@pytest.mark.parametrize(
    ("name", "fallback"),
    [
        ("做一个番茄钟网页", None),
        ("番茄钟 🍅 Pomodoro", "Pomodoro"),
        ("🍅🍅🍅", None),
        ("مؤقت بومودورو", None),  # Arabic, right to left
        ("טיימר עגבניות 25", "25"),  # Hebrew, right to left, and digits
        ('Tea "time"; now', "Tea time now"),
    ],
)
def test_renamed_apps_download_under_their_exact_name(
    client: httpx.Client, name: str, fallback: str | None
) -> None:
    app = create(client, "A page about tomatoes", "multi_file")
    assert chat(client, app["id"], app["initPrompt"]).ended == ("succeeded", 1)
    renamed = client.patch(f"/api/apps/{app['id']}", json={"name": name})
    assert renamed.status_code == 200 and renamed.json()["name"] == name
    plain, exact, zf = download(client, app["id"])
    assert exact == f"{name}.zip"
    assert plain == f"{fallback or app['id']}.zip"
    files = [f["path"] for f in client.get(f"/api/apps/{app['id']}/files").json()["files"]]
    assert sorted(zf) == sorted([*files, "README.md"])


def npm(args: list[str], cwd: Path) -> None:
    """A plain subprocess, as the user would run it on their own machine (no sandbox)."""
    env = {**os.environ, "CI": "1", "NO_COLOR": "1", "npm_config_update_notifier": "false"}
    done = subprocess.run(
        ["npm", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"npm {' '.join(args)}:\n{done.stdout}\n{done.stderr}"


def test_a_vue_apps_zip_builds_with_npm(client: httpx.Client, tmp_path: Path) -> None:
    app = create(client, "A Vue todo app with a home and an about page", "vue_project")
    turn = chat(client, app["id"], app["initPrompt"])
    assert turn.ended == ("succeeded", 1), (turn.errors, turn.builds)
    name = "待办事项 ✅ Todos"
    assert client.patch(f"/api/apps/{app['id']}", json={"name": name}).status_code == 200
    plain, exact, zf = download(client, app["id"])
    assert (plain, exact) == ("Todos.zip", f"{name}.zip")

    files = {f["path"] for f in client.get(f"/api/apps/{app['id']}/files").json()["files"]}
    names = set(zf)
    assert names - files <= PLATFORM_FILES <= names
    assert zf["vite.config.js"] == toolchain.vite_config()
    assert zf["package-lock.json"] == toolchain.manifest()["package-lock.json"]
    package = json.loads(zf["package.json"])
    assert package["scripts"]["build"] == "vite build"
    readme = zf["README.md"].decode()
    assert readme.startswith(f"# {name}\n") and "cd todos\n    npm ci && npm run build" in readme

    response = client.get(f"/api/apps/{app['id']}/download")
    zipfile.ZipFile(io.BytesIO(response.content)).extractall(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["todos"]  # one folder, nothing spilt
    project = tmp_path / "todos"
    # The platform's npm cache (its server filled it installing the toolchain): fast, and
    # the registry only for what it lacks.
    cache = Settings().npm_cache
    npm(["ci", "--prefer-offline", "--no-audit", "--no-fund", "--cache", str(cache)], project)
    npm(["run", "build"], project)
    index = project / "dist" / "index.html"
    assert index.is_file()
    assets = re.findall(r'(?:src|href)="\./(assets/[^"]+)"', index.read_text())
    assert assets and all((project / "dist" / a).is_file() for a in assets)
