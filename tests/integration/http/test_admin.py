"""/api/admin in process: every app and user for admins, nothing for anyone else."""

from __future__ import annotations

from tests.integration.http.conftest import Api, error_code


def test_admin_lists_changes_and_deletes_other_peoples_apps(api: Api) -> None:
    c, owner, admin = api.client, api.user(), api.admin()
    app = api.app(owner)
    listed = c.get("/api/admin/apps", headers=admin).json()["apps"]
    assert [(a["id"], bool(a["owner"])) for a in listed] == [(app["id"], True)]
    changed = c.patch(
        f"/api/admin/apps/{app['id']}",
        headers=admin,
        json={"name": "Picked", "cover": "https://example.com/c.png", "priority": 7},
    )
    assert changed.status_code == 200
    out = changed.json()
    assert (out["name"], out["cover"], out["priority"]) == (
        "Picked",
        "https://example.com/c.png",
        7,
    )
    cleared = c.patch(f"/api/admin/apps/{app['id']}", headers=admin, json={"cover": ""})
    assert cleared.json()["cover"] is None and cleared.json()["name"] == "Picked"
    assert c.get(f"/api/apps/{app['id']}", headers=owner).json()["priority"] == 7
    assert c.delete(f"/api/admin/apps/{app['id']}", headers=admin).status_code == 204
    assert c.get(f"/api/apps/{app['id']}", headers=owner).status_code == 404


def test_admin_clears_an_apps_history_and_keeps_its_files(api: Api) -> None:
    c, owner, admin = api.client, api.user(), api.admin()
    app = api.app(owner)
    api.chat(owner, app["id"], "A page about newts")
    assert c.get(f"/api/apps/{app['id']}/history", headers=owner).json()["entries"]
    files = c.get(f"/api/apps/{app['id']}/files", headers=owner).json()["files"]
    assert c.delete(f"/api/admin/apps/{app['id']}/history", headers=admin).status_code == 204
    assert c.get(f"/api/apps/{app['id']}/history", headers=owner).json()["entries"] == []
    context = c.get(f"/api/apps/{app['id']}/context", headers=owner).json()
    assert [m["role"] for m in context["messages"]] == ["system"]
    assert c.get(f"/api/apps/{app['id']}/files", headers=owner).json()["files"] == files


def test_admin_lists_users(api: Api) -> None:
    api.user("zed")
    users = api.client.get("/api/admin/users?q=zed", headers=api.admin()).json()["users"]
    assert len(users) == 1 and users[0]["failedLogins"] == 0


def test_refusals(api: Api) -> None:
    c, owner, admin = api.client, api.user(), api.admin()
    app = api.app(owner)
    routes = [
        ("GET", "/api/admin/apps", None),
        ("GET", "/api/admin/users", None),
        ("PATCH", f"/api/admin/apps/{app['id']}", {"priority": 1}),
        ("DELETE", f"/api/admin/apps/{app['id']}/history", None),
        ("DELETE", f"/api/admin/apps/{app['id']}", None),
    ]
    for method, path, body in routes:
        assert c.request(method, path, json=body).status_code == 401
        refused = c.request(method, path, headers=owner, json=body)  # even the app's owner
        assert refused.status_code == 403 and error_code(refused) == "forbidden"
    missing = "/api/admin/apps/aaaaaaaaaaaaaaaaaaaa"
    assert c.patch(missing, headers=admin, json={"priority": 1}).status_code == 404
    assert c.delete(missing, headers=admin).status_code == 404
    too_high = c.patch(f"/api/admin/apps/{app['id']}", headers=admin, json={"priority": 10**6})
    assert too_high.status_code == 422
    unknown = c.patch(f"/api/admin/apps/{app['id']}", headers=admin, json={"owner": "me"})
    assert unknown.status_code == 422
    assert c.get("/api/admin/apps?limit=0", headers=admin).status_code == 422
