"""No request blocks the event loop: every SQLite statement and workspace file operation
a route makes (in its dependencies, its body, the turn it streams, the deploy it starts)
runs in a worker thread, never on the loop that serves every other request.

The guard wraps the local adapters' choke points (``SqliteDatabase.transaction`` and
``.query``, which every local store uses, and the workspace's file operations) and notes
each call made on a thread that runs an event loop. Every route of the API is called."""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import time
import traceback
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from tests.integration.http.conftest import PASSWORD, Api
from tests.pictures import png
from zerocode.adapters.local.workspace import LocalWorkspace
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.http.deps import CSRF_HEADER
from zerocode.http.sites import create_sites_app

GUARDED: dict[type, tuple[str, ...]] = {
    SqliteDatabase: ("transaction", "query"),
    LocalWorkspace: ("read", "write", "delete", "list", "delete_app"),
}


def _on_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.fixture
def on_loop(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The calls made on an event loop's thread, each with where it came from."""
    seen: list[str] = []

    def guard(cls: type, name: str) -> None:
        original: Callable[..., Any] = getattr(cls, name)

        @functools.wraps(original)
        def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _on_loop():
                stack = "".join(traceback.format_stack(limit=10)[:-1])
                seen.append(f"{cls.__name__}.{name} on the event loop:\n{stack}")
            return original(self, *args, **kwargs)

        monkeypatch.setattr(cls, name, checked)

    for cls, names in GUARDED.items():
        for name in names:
            guard(cls, name)
    return seen


def test_the_guard_sees_a_blocking_call(api: Api, on_loop: list[str]) -> None:
    """The check can fail: a store call made from a coroutine is noted."""

    async def blocking() -> None:
        api.platform.workspace.list("app-whatever")

    asyncio.run(blocking())
    assert len(on_loop) == 1 and "LocalWorkspace.list" in on_loop[0]


def _deployed(api: Api, headers: dict[str, str], base: str, build_id: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        build = api.client.get(f"{base}/builds/{build_id}", headers=headers).json()
        # Done once the record says so and the app names it: the site pointer flips before
        # the record reads succeeded, and a request reads the app before the build.
        assert build["state"] != "failed", build
        if build["state"] == "succeeded" and build["published"]:
            return
        time.sleep(0.05)
    raise AssertionError("the deploy did not finish")


def test_no_route_blocks_the_event_loop(api: Api, on_loop: list[str]) -> None:
    c, called = api.client, set()

    def call(method: str, route: str, path: str, expect: int, **kwargs: Any) -> Any:
        response = c.request(method, path, **kwargs)
        assert response.status_code == expect, (method, path, response.text)
        called.add((method, route))
        return response

    account = "loop-user"
    call(
        "POST",
        "/api/users/register",
        "/api/users/register",
        201,
        json={"account": account, "password": PASSWORD},
    )
    token = call(
        "POST",
        "/api/users/login",
        "/api/users/login",
        200,
        json={"account": account, "password": PASSWORD},
    ).json()["token"]
    # The session cookie the login set authenticates these two (and needs the CSRF header).
    call("GET", "/api/users/me", "/api/users/me", 200)
    call("GET", "/api/health", "/api/health", 200)
    c.cookies.clear()
    me = {"Authorization": f"Bearer {token}"}
    admin = api.admin()

    a, ap = "/api/apps", "/api/apps/{app_id}"
    routed = call("POST", a, a, 201, headers=me, json={"initPrompt": "A page about newts"})
    app = call(
        "POST",
        a,
        a,
        201,
        headers=me,
        json={"initPrompt": "A page about owls", "codeGenType": "html"},
    ).json()
    base = f"/api/apps/{app['id']}"
    call("GET", a, a, 200, headers=me)
    call("GET", a, f"{a}?scope=featured", 200)
    call("GET", ap, base, 200, headers=me)
    call("PATCH", ap, base, 200, headers=me, json={"name": "Owls"})
    first_page = api.chat(me, app["id"], "Make the page")
    heading = api.platform.workspace.read(app["id"], "index.html").decode()
    heading = heading.split("<h1>", 1)[1].split("</h1>", 1)[0]
    shown = c.get(f"{base}/preview", headers=me).json()["buildId"]
    element = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": heading, "buildId": shown}
    with c.stream(
        "POST",
        f"{base}/chat",
        headers=me,
        json={
            "message": 'Rename it to "Owl Hall"',
            "element": element,
            "images": [f"data:image/png;base64,{base64.b64encode(png()).decode()}"],
        },
    ) as turn:
        renamed = "".join(turn.iter_text())
        assert turn.status_code == 200 and "event: done" in renamed
    assert "event: done" in first_page
    called.add(("POST", f"{ap}/chat"))
    number = renamed.split("id: ", 1)[1].split(":", 1)[0]  # a checks note took a turn too
    call("GET", f"{ap}/turns/current", f"{base}/turns/current", 204, headers=me)
    replay = call(
        "GET", f"{ap}/turns/{{turn}}/events", f"{base}/turns/{number}/events", 200, headers=me
    )
    assert replay.text.startswith(f"id: {number}:1\n") and "event: done" in replay.text
    call("POST", f"{ap}/turns/{{turn}}/cancel", f"{base}/turns/{number}/cancel", 409, headers=me)
    spent = call("GET", f"{ap}/usage", f"{base}/usage", 200, headers=me).json()
    assert spent["total"]["requests"] >= 1
    mine = call("GET", "/api/users/me/usage", "/api/users/me/usage", 200, headers=me).json()
    assert mine["total"]["requests"] >= spent["total"]["requests"]
    ck = f"{ap}/checks"
    suite = call("GET", ck, f"{base}/checks", 200, headers=me).json()
    first_check = next(c["id"] for c in suite["checks"] if c["status"] != "retired")
    call(
        "GET",
        f"{ck}/{{check_id}}/runs/{{run}}/screenshot",
        f"{base}/checks/{first_check}/runs/1/screenshot",
        404,  # the checks were not run here (no browser): nothing to show
        headers=me,
    )
    call(
        "POST",
        f"{ck}/{{check_id}}/retire",
        f"{base}/checks/{first_check}/retire",
        200,
        headers=me,
        json={"reason": "no longer wanted"},
    )
    assert call("GET", f"{ap}/preview", f"{base}/preview", 200, headers=me).json()["upToDate"]
    call("POST", f"{ck}/run", f"{base}/checks/run", 200, headers=me)
    upd = f"{base}/checks/{first_check}/update"
    call("POST", f"{ck}/{{check_id}}/update", upd, 409, headers=me)  # retired above
    api.platform.workspace.write(app["id"], "index.html", b"<h1>Changed by hand</h1>")
    rebuilt = call("POST", f"{ap}/preview", f"{base}/preview", 200, headers=me).json()
    assert rebuilt["upToDate"] and rebuilt["build"]["state"] == "succeeded"
    # A preview cover (no browser here: the one a browser would have taken, recorded).
    covers = api.platform.publishing.preview_covers
    assert covers is not None
    covers.store.put(app["id"], rebuilt["build"]["id"], b"\x89PNG\r\n\x1a\nnot drawn")
    assert covers.record(app["id"], rebuilt["build"]["id"])
    call("GET", f"{ap}/cover", f"{base}/cover", 200, headers=me)
    entries = call("GET", f"{ap}/history", f"{base}/history", 200, headers=me).json()["entries"]
    (sha,) = [i["sha256"] for e in entries for i in e.get("images") or ()]
    call("GET", f"{ap}/images/{{sha256}}", f"{base}/images/{sha}", 200, headers=me)
    call("GET", f"{ap}/context", f"{base}/context", 200, headers=me)
    call("GET", f"{ap}/files", f"{base}/files", 200, headers=me)
    call("GET", f"{ap}/files/{{path}}", f"{base}/files/index.html", 200, headers=me)
    call(
        "PUT",
        f"{ap}/files/{{path}}",
        f"{base}/files/index.html",
        200,
        headers=me,
        json={"content": "<h1>Edited by hand</h1>"},
    )
    shown = c.get(f"{base}/preview", headers=me).json()["buildId"]  # the save rebuilt it
    call(
        "POST",
        f"{ap}/edits/text",
        f"{base}/edits/text",
        200,
        headers=me,
        json={
            "element": {"tag": "h1", "text": "Edited by hand", "buildId": shown},
            "newText": "Edited in place",
        },
    )
    logo = {"file": ("logo.png", png(), "image/png")}
    call("POST", f"{ap}/assets", f"{base}/assets", 201, headers=me, files=logo)
    call("GET", f"{ap}/assets", f"{base}/assets", 200, headers=me)
    call("GET", f"{ap}/assets/{{name}}", f"{base}/assets/logo.png", 200, headers=me)
    shown = c.get(f"{base}/preview", headers=me).json()["buildId"]  # the upload rebuilt it
    picked = json.dumps({"tag": "img", "src": "assets/logo.png", "buildId": shown})
    call(
        "POST",
        f"{ap}/edits/image",
        f"{base}/edits/image",
        200,
        headers=me,
        files={"file": ("new.png", png((8, 8)), "image/png")},
        data={"element": picked},
    )
    call("GET", f"{ap}/download", f"{base}/download", 200, headers=me)
    call("GET", f"{ap}/versions", f"{base}/versions", 200, headers=me)
    call("GET", f"{ap}/versions/{{version_id}}/diff", f"{base}/versions/v2/diff", 200, headers=me)
    call("GET", f"{ap}/code/{{path}}", f"{base}/code/index.html?version=v1", 200, headers=me)
    call(
        "POST",
        f"{ap}/versions/{{version_id}}/restore",
        f"{base}/versions/v1/restore",
        200,
        headers=me,
    )
    _data_routes(api, call, me, app["id"])
    first = call("POST", f"{ap}/deploy", f"{base}/deploy", 202, headers=me).json()["buildId"]
    _deployed(api, me, base, first)
    api.platform.workspace.write(app["id"], "index.html", b"<h1>Two</h1>")
    second = call("POST", f"{ap}/deploy", f"{base}/deploy", 202, headers=me).json()["buildId"]
    _deployed(api, me, base, second)
    call("GET", f"{ap}/builds", f"{base}/builds", 200, headers=me)
    call("GET", f"{ap}/builds/{{build_id}}", f"{base}/builds/{first}", 200, headers=me)
    report = f"{ap}/deploys/{{build_id}}/report"
    call("GET", report, f"{base}/deploys/{first}/report", 200, headers=me)
    call("POST", f"{ap}/rollback", f"{base}/rollback", 200, headers=me, json={"buildId": first})
    _site_visits(api, call, me, base)

    call("GET", "/api/admin/apps", "/api/admin/apps", 200, headers=admin)
    call("GET", "/api/admin/users", "/api/admin/users", 200, headers=admin)
    # An account's own token budget, and the platform's totals (issue 43).
    user_id = c.get("/api/users/me", headers=me).json()["id"]
    ub, budget = "/api/admin/users/{user_id}/budget", f"/api/admin/users/{user_id}/budget"
    own = {"tokensPerDay": None, "tokensPerMonth": 10**9}
    assert call("PUT", ub, budget, 200, headers=admin, json=own).json()["override"] == own
    assert call("GET", ub, budget, 200, headers=admin).json()["effective"] == own
    call("DELETE", ub, budget, 204, headers=admin)
    totals = call("GET", "/api/admin/usage", "/api/admin/usage", 200, headers=admin).json()
    assert totals["total"]["requests"] >= mine["total"]["requests"] >= 1
    call(
        "PATCH",
        "/api/admin/apps/{app_id}",
        f"/api/admin/apps/{app['id']}",
        200,
        headers=admin,
        json={"priority": 5},
    )
    call(
        "DELETE",
        "/api/admin/apps/{app_id}/history",
        f"/api/admin/apps/{app['id']}/history",
        204,
        headers=admin,
    )
    other = routed.json()["id"]
    call("DELETE", "/api/admin/apps/{app_id}", f"/api/admin/apps/{other}", 204, headers=admin)
    call("DELETE", ap, base, 204, headers=me)
    c.cookies.set("zc_session", token)
    call("POST", "/api/users/logout", "/api/users/logout", 204, headers={CSRF_HEADER: "1"})

    paths = c.app.openapi()["paths"]  # type: ignore[attr-defined]
    every = {(m.upper(), path) for path, ops in paths.items() for m in ops}
    assert every - called == set(), "routes this test does not call"
    assert on_loop == [], "\n\n".join(on_loop)


def _site_visits(api: Api, call: Callable[..., Any], me: dict[str, str], base: str) -> None:
    """The published site visited through the sites server (its page views noted on its
    loop, counted in a worker thread), and the owner's analytics (issue 44)."""
    site = httpx.URL(api.client.get(base, headers=me).json()["deployUrl"])
    browser = {"Host": f"{site.host}:{site.port}", "User-Agent": "Mozilla/5.0 Firefox/128.0"}
    with TestClient(create_sites_app(api.platform)) as sites:
        for _ in range(3):
            assert sites.get("/", headers=browser).status_code == 200
        visits = api.platform.visits
        assert visits is not None
        sites.portal.call(visits.settled)  # type: ignore[union-attr]
    ap = "/api/apps/{app_id}"
    seen = call("GET", f"{ap}/analytics", f"{base}/analytics?days=7", 200, headers=me).json()
    assert seen["total"] == {"views": 3, "visitors": 1, "botViews": 0}


def _data_routes(api: Api, call: Callable[..., Any], me: dict[str, str], app_id: str) -> None:
    """The app's data, as its builder sees it (routes/data.py): a data model, a preview."""
    ap, base = "/api/apps/{app_id}/data", f"/api/apps/{app_id}/data"
    model = (
        b'{"collections": {"entries": {"fields": {"m": {"type": "text"}}, "rules": {"list": '
        b'"public", "read": "public", "create": "public", "update": "public", "delete": '
        b'"public"}, "seed": [{"m": "hi"}]}}}'
    )
    api.platform.workspace.write(app_id, "zerocode.data.json", model)
    call("POST", "/api/apps/{app_id}/preview", f"/api/apps/{app_id}/preview", 200, headers=me)
    backend = api.platform.backend
    assert backend is not None
    body = {"username": "ada", "password": "a long password"}
    _, user = backend.end_users.sign_up(app_id, "preview", body, None)
    call("GET", f"{ap}/{{space}}", f"{base}/preview", 200, headers=me)
    call("GET", f"{ap}/{{space}}/users", f"{base}/preview/users", 200, headers=me)
    users = f"{base}/preview/users/{user.id}"
    call("DELETE", f"{ap}/{{space}}/users/{{user_id}}", users, 204, headers=me)
    call("GET", f"{ap}/{{space}}/{{collection}}", f"{base}/preview/entries", 200, headers=me)
    export = f"{base}/preview/entries/export"
    call("GET", f"{ap}/{{space}}/{{collection}}/export", export, 200, headers=me)
    made = call(
        "POST",
        f"{ap}/{{space}}/{{collection}}",
        f"{base}/preview/entries",
        201,
        headers=me,
        json={"m": "by hand"},
    ).json()
    one = f"{base}/preview/entries/{made['id']}"
    call(
        "PATCH",
        f"{ap}/{{space}}/{{collection}}/{{record_id}}",
        one,
        200,
        headers=me,
        json={"m": "changed"},
    )
    call("DELETE", f"{ap}/{{space}}/{{collection}}/{{record_id}}", one, 204, headers=me)
    call("DELETE", f"{ap}/preview", f"{base}/preview", 200, headers=me)
