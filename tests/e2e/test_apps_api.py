"""Apps over HTTP: list with cursor, rename, delete (and everything of the app goes)."""

from __future__ import annotations

import httpx

from tests.e2e.conftest import Server, chat, create


def test_list_pages_newest_first_with_a_cursor(client: httpx.Client) -> None:
    made = [create(client, f"A page about topic {i}", "html")["id"] for i in range(5)]
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 2} | ({"cursor": cursor} if cursor else {})
        page = client.get("/api/apps", params=params).json()
        seen += [a["id"] for a in page["apps"]]
        cursor = page["nextCursor"]
        if cursor is None:
            break
    assert seen[:5] == list(reversed(made))
    assert len(seen) == len(set(seen))
    for bad in ({"limit": 0}, {"limit": 51}, {"cursor": "not-a-cursor"}, {"scope": "everyone"}):
        response = client.get("/api/apps", params=bad)
        assert response.status_code in (400, 422) and response.json()["error"]["message"]


def test_rename_validates_and_persists(client: httpx.Client) -> None:
    app = create(client, "A page about pottery", "html")
    renamed = client.patch(f"/api/apps/{app['id']}", json={"name": "  Clay   Works "})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Clay Works"
    assert client.get(f"/api/apps/{app['id']}").json()["name"] == "Clay Works"
    for bad in ({"name": ""}, {"name": "x" * 61}, {"name": 3}, {}):
        response = client.patch(f"/api/apps/{app['id']}", json=bad)
        assert response.status_code in (400, 422) and response.json()["error"]["code"]


def test_delete_removes_the_app_and_its_data(client: httpx.Client, server: Server) -> None:
    app = create(client, "A page about dunes", "html")
    chat(client, app["id"], app["initPrompt"])
    assert httpx.get(app["previewUrl"]).status_code == 200
    assert client.delete(f"/api/apps/{app['id']}").status_code == 204
    for path in ("", "/history", "/context", "/files", "/download"):
        assert client.get(f"/api/apps/{app['id']}{path}").status_code == 404
    assert httpx.get(app["previewUrl"]).status_code == 404
    assert not (server.data_dir / "workspaces" / app["id"]).exists()
    assert client.delete(f"/api/apps/{app['id']}").status_code == 404


def test_oversized_and_blank_init_prompts_are_refused(client: httpx.Client) -> None:
    for body, status in (
        ({"initPrompt": "x" * 8001}, 400),
        ({"initPrompt": "  "}, 422),
        ({"initPrompt": "ok", "codeGenType": "flash"}, 422),
    ):
        response = client.post("/api/apps", json=body)
        assert response.status_code == status and response.json()["error"]["message"]
