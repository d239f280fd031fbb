"""Create → generate → preview, in each mode, over real HTTP against `zerocode serve`."""

from __future__ import annotations

import re

import httpx

from tests.e2e.conftest import Server, chat, create
from tests.e2e.test_admin import admin_client


def test_health_says_which_model_answers_to_admins(server: Server, client: httpx.Client) -> None:
    anyone = client.get("/api/health").json()
    assert anyone["status"] == "ok" and anyone["offlineModel"] is True
    assert "model" not in anyone and "builds" not in anyone
    with admin_client(server, "health-admin") as admin:
        health = admin.get("/api/health").json()
    assert health["status"] == "ok" and "offline scripted model" in health["model"]
    assert health["builds"]


def test_openapi_lists_the_endpoints(client: httpx.Client) -> None:
    paths = client.get("/api/openapi.json").json()["paths"]
    for path in (
        "/api/apps",
        "/api/apps/{app_id}",
        "/api/apps/{app_id}/chat",
        "/api/apps/{app_id}/history",
        "/api/apps/{app_id}/context",
        "/api/apps/{app_id}/files",
        "/api/apps/{app_id}/download",
        "/api/health",
    ):
        assert path in paths


def test_html_app_is_generated_saved_and_previewed(client: httpx.Client) -> None:
    app = create(client, "A page about tea ceremonies", "html")
    assert app["codeGenType"] == "html" and app["name"]
    turn = chat(client, app["id"], app["initPrompt"])
    assert turn.ended == ("succeeded", 1)
    assert turn.order[-1] == "done" and "```html" in turn.text
    assert [t["path"] for t in turn.results] == ["index.html"]
    files = client.get(f"/api/apps/{app['id']}/files").json()["files"]
    assert [f["path"] for f in files] == ["index.html"]
    preview = httpx.get(app["previewUrl"])
    assert preview.status_code == 200 and "<h1" in preview.text
    assert re.fullmatch(r"http://p-[a-z0-9]{26}\.localhost:\d+/", app["previewUrl"])  # its own


def test_multi_file_app_serves_all_three_files(client: httpx.Client) -> None:
    app = create(client, "A countdown timer with separate css", "multi_file")
    turn = chat(client, app["id"], app["initPrompt"])
    assert turn.done is not None and turn.done["status"] == "succeeded"
    paths = sorted(f["path"] for f in client.get(f"/api/apps/{app['id']}/files").json()["files"])
    assert paths == ["index.html", "script.js", "style.css"]
    for name in ("", "style.css", "script.js"):
        assert httpx.get(app["previewUrl"] + name).status_code == 200


def test_mode_is_routed_by_the_model_when_absent(client: httpx.Client) -> None:
    app = create(client, "A Vue single-page app with a router and an about page")
    assert app["codeGenType"] == "vue_project"
    plain = create(client, "A birthday card page")
    assert plain["codeGenType"] == "html"


def test_vue_app_is_written_through_tools_and_built(client: httpx.Client, server: Server) -> None:
    app = create(client, "A Vue todo app with a home and an about page", "vue_project")
    turn = chat(client, app["id"], app["initPrompt"])
    assert turn.ended == ("succeeded", 1), (turn.errors, turn.builds)
    writes = [t for t in turn.results if t["name"] == "write_file"]
    assert len(writes) >= 6 and all(t["ok"] for t in writes)
    assert [b["status"] for b in turn.builds] == ["running", "succeeded"]
    page = httpx.get(app["previewUrl"])
    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)="\./(assets/[^"]+)"', page.text)
    assert assets and all(httpx.get(app["previewUrl"] + a).status_code == 200 for a in assets)
    history = client.get(f"/api/apps/{app['id']}/history").json()["entries"]
    assert [e["role"] for e in history] == ["ai", "user"]
    assert "write_file" in history[0]["content"] and history[0]["status"] == "ok"
    download = client.get(f"/api/apps/{app['id']}/download")
    assert download.status_code == 200 and download.content[:2] == b"PK"


def test_no_get_starts_a_turn(client: httpx.Client) -> None:
    """Chat is POST only: a link, an image or a hidden frame can never start a turn."""
    app = create(client, "A page about comets", "html")
    element = '{"pagePath": "/", "tag": "h1", "text": "x"}'
    answer = client.get(
        f"/api/apps/{app['id']}/chat", params={"message": app["initPrompt"], "element": element}
    )
    assert answer.status_code == 405 and answer.headers["allow"] == "POST"
    assert client.get(f"/api/apps/{app['id']}/history").json()["entries"] == []
