"""Featured apps (public, cached), search by name, and the admin pages over HTTP."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, create, signed_in
from tests.e2e.test_accounts import make_admin
from tests.pictures import png


@pytest.fixture(scope="module")
def server(own_server: Server) -> Server:
    """A server of this module's own: the featured apps are global, and other modules
    feature apps of their own."""
    return own_server


def admin_client(server: Server, account: str) -> httpx.Client:
    make_admin(server, account)
    token = httpx.post(
        f"{server.api}/api/users/login", json={"account": account, "password": "correct horse"}
    ).json()["token"]
    return httpx.Client(
        base_url=server.api, timeout=120, headers={"Authorization": f"Bearer {token}"}
    )


def featured(server: Server, **params: Any) -> dict[str, Any]:
    response = httpx.get(f"{server.api}/api/apps", params={"scope": "featured", **params})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_admin_features_apps_and_anyone_sees_them(server: Server) -> None:
    owner = signed_in(server)
    admin = admin_client(server, "feature-admin")
    apps = [create(owner, f"A page about orchids {i}", "html") for i in range(3)]
    for app, priority in zip(apps, (99, 150, 10), strict=True):
        response = admin.patch(f"/api/admin/apps/{app['id']}", json={"priority": priority})
        assert response.status_code == 200 and response.json()["priority"] == priority
    shown = [a["id"] for a in featured(server)["apps"]]
    assert shown[:2] == [apps[1]["id"], apps[0]["id"]] and apps[2]["id"] not in shown
    pages = featured(server, limit=1)
    assert len(pages["apps"]) == 1 and pages["nextCursor"]
    cover = admin.patch(
        f"/api/admin/apps/{apps[0]['id']}",
        json={"name": "Orchid House", "cover": "https://img.example/c.png"},
    )
    assert cover.json()["name"] == "Orchid House" and cover.json()["owner"]
    assert owner.get(f"/api/apps/{apps[0]['id']}").json()["cover"] == "https://img.example/c.png"
    for bad in ({"priority": -1}, {"priority": "high"}, {"name": ""}, {"owner": "me"}):
        assert admin.patch(f"/api/admin/apps/{apps[0]['id']}", json=bad).status_code in (400, 422)


def test_search_my_apps_and_all_apps_by_name(server: Server) -> None:
    owner, other = signed_in(server), signed_in(server)
    mine = create(owner, "A page about tulips", "html")
    owner.patch(f"/api/apps/{mine['id']}", json={"name": "Tulip Garden"})
    create(owner, "A page about cacti", "html")
    create(other, "A page about tulips too", "html")
    found = owner.get("/api/apps", params={"q": "tulip"}).json()["apps"]
    assert [a["id"] for a in found] == [mine["id"]]
    admin = admin_client(server, "search-admin")
    everyone = admin.get("/api/admin/apps", params={"q": "TULIP", "limit": 50}).json()["apps"]
    assert mine["id"] in [a["id"] for a in everyone] and len(everyone) >= 2
    users = admin.get("/api/admin/users", params={"q": "search-admin"}).json()["users"]
    assert [u["account"] for u in users] == ["search-admin"] and users[0]["role"] == "admin"


def test_admin_clears_history_and_deletes_any_app(server: Server) -> None:
    owner = signed_in(server)
    admin = admin_client(server, "cleanup-admin")
    app = create(owner, "A page about lilies", "html")
    pasted = "data:image/png;base64," + base64.b64encode(png()).decode()
    body = {"message": app["initPrompt"], "images": [pasted]}
    with owner.stream("POST", f"/api/apps/{app['id']}/chat", json=body) as r:
        assert r.status_code == 200, r.read()
        r.read()
    images = server.data_dir / "message-images" / app["id"]
    assert any(images.iterdir())
    assert admin.delete(f"/api/admin/apps/{app['id']}/history").status_code == 204
    assert not images.exists()  # the conversation's images go with it
    assert owner.get(f"/api/apps/{app['id']}/history").json()["entries"] == []
    context = owner.get(f"/api/apps/{app['id']}/context").json()
    assert [m["role"] for m in context["messages"]] == ["system"]
    assert owner.get(f"/api/apps/{app['id']}/files").json()["files"]  # the files stay
    assert admin.delete(f"/api/admin/apps/{app['id']}").status_code == 204
    assert owner.get(f"/api/apps/{app['id']}").status_code == 404
