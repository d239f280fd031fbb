"""/api/apps in process: create, list (mine and featured), read, rename, delete."""

from __future__ import annotations

from tests.integration.http.conftest import Api, error_code
from zerocode.apps.records import FEATURED_PRIORITY


def test_create_read_rename_list_and_delete(api: Api) -> None:
    owner = api.user()
    app = api.app(owner, "A page about newts")
    assert app["codeGenType"] == "html" and app["name"] and app["deployUrl"] is None
    c = api.client
    assert c.get(f"/api/apps/{app['id']}", headers=owner).json() == app
    renamed = c.patch(f"/api/apps/{app['id']}", headers=owner, json={"name": "  Newts  "})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Newts"
    mine = c.get("/api/apps", headers=owner).json()
    assert [a["id"] for a in mine["apps"]] == [app["id"]] and mine["nextCursor"] is None
    assert c.get("/api/apps?q=newts", headers=owner).json()["apps"][0]["id"] == app["id"]
    assert c.delete(f"/api/apps/{app['id']}", headers=owner).status_code == 204
    assert c.get(f"/api/apps/{app['id']}", headers=owner).status_code == 404
    assert c.get("/api/apps", headers=owner).json()["apps"] == []


def test_the_model_routes_the_mode_when_none_is_given(api: Api) -> None:
    made = api.client.post(
        "/api/apps", headers=api.user(), json={"initPrompt": "A page about herons"}
    )
    assert made.status_code == 201 and made.json()["codeGenType"] in (
        "html",
        "multi_file",
        "vue_project",
    )


def test_refusals(api: Api) -> None:
    c, owner, other = api.client, api.user(), api.user()
    app = api.app(owner)
    assert c.post("/api/apps", json={"initPrompt": "A page"}).status_code == 401
    assert c.get("/api/apps").status_code == 401  # scope=mine needs a caller
    blank = c.post("/api/apps", headers=owner, json={"initPrompt": "   "})
    assert blank.status_code == 422 and error_code(blank) == "validation_error"
    # The fields as data beside the message, for a client to word (docs/api.md).
    assert blank.json()["error"]["fields"] == [{"field": "initPrompt", "type": "string_blank"}]
    empty = c.post("/api/apps", headers=owner, json={"initPrompt": ""})
    assert empty.json()["error"]["fields"] == [
        {"field": "initPrompt", "type": "string_too_short", "limit": 1}
    ]
    mode = c.post("/api/apps", headers=owner, json={"initPrompt": "x", "codeGenType": "php"})
    assert mode.status_code == 422
    for method in ("GET", "PATCH", "DELETE"):  # another user's app does not exist for them
        answer = c.request(
            method,
            f"/api/apps/{app['id']}",
            headers=other,
            json={"name": "Mine"} if method == "PATCH" else None,
        )
        assert answer.status_code == 404 and error_code(answer) == "not_found"
        assert c.request(method, f"/api/apps/{app['id']}").status_code == 401
    assert c.get("/api/apps/not-an-id", headers=owner).status_code == 404
    assert c.patch(f"/api/apps/{app['id']}", headers=owner, json={"name": " "}).status_code == 400
    assert c.get(f"/api/apps/{app['id']}", headers=owner).json()["name"] == app["name"]


def test_featured_apps_are_public_and_cached_until_an_admin_changes_one(api: Api) -> None:
    c, owner, admin = api.client, api.user(), api.admin()
    app = api.app(owner)
    assert c.get("/api/apps?scope=featured").json()["apps"] == []
    stored = api.platform.apps.get(app["id"])
    assert stored is not None
    api.platform.apps.put(stored.renamed("Behind the cache's back"))
    promoted = c.patch(
        f"/api/admin/apps/{app['id']}", headers=admin, json={"priority": FEATURED_PRIORITY}
    )
    assert promoted.status_code == 200
    featured = c.get("/api/apps?scope=featured").json()["apps"]
    assert [a["id"] for a in featured] == [app["id"]]
    api.platform.apps.put(stored.renamed("Changed behind the cache's back"))
    again = c.get("/api/apps?scope=featured").json()["apps"]
    assert again[0]["name"] == featured[0]["name"]  # served from the cache
