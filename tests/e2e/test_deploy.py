"""Deploy, publish, break, roll back: the local server over HTTP, real npm + Vite builds."""

from __future__ import annotations

import os
import re
import shutil
import threading
import time
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, wait_for_build


def deploy(client: httpx.Client, app_id: str) -> dict[str, Any]:
    answer = client.post(f"/api/apps/{app_id}/deploy")
    assert answer.status_code == 202, answer.text
    assert answer.json()["state"] == "queued"
    return wait_for_build(client, app_id, answer.json()["buildId"])


def bundle(url: str) -> str:
    """The published page and every script it loads, as visitors get them."""
    page = httpx.get(url)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    scripts = re.findall(r'src="\./?([^"]+\.js)"', page.text)
    assert scripts, page.text
    texts = [page.text]
    for script in scripts:
        asset = httpx.get(url + script)
        assert asset.status_code == 200, script
        assert "javascript" in asset.headers["content-type"]
        texts.append(asset.text)
    return "\n".join(texts)


def test_a_vue_app_is_published_kept_through_a_broken_build_and_rolled_back(
    server: Server, client: httpx.Client
) -> None:
    app = create(client, "A Vue todo app with an about page", "vue_project")
    first_turn = chat(client, app["id"], app["initPrompt"])
    assert first_turn.ended == ("succeeded", 1), first_turn.errors
    preview_id = first_turn.builds[-1]["buildId"]
    previews = client.get(f"/api/apps/{app['id']}/builds", params={"purpose": "preview"})
    assert [b["id"] for b in previews.json()["builds"]] == [preview_id]  # the same Builder

    first = deploy(client, app["id"])
    assert first["state"] == "succeeded" and first["purpose"] == "deploy", first
    record = client.get(f"/api/apps/{app['id']}").json()
    assert record["deployBuildId"] == first["id"] and record["deployedAt"]
    url = record["deployUrl"]
    assert re.fullmatch(rf"http://[a-z0-9]{{12}}\.localhost:{server.sites_port}/", url)
    site = bundle(url)
    assert (
        "createWebHistory()" in client.get(f"/api/apps/{app['id']}/files/src/router/index.js").text
    )
    deep = httpx.get(url + "about")  # a deep link gets its page (tests/e2e/test_prerender.py)
    assert deep.status_code == 200 and "/assets/index-" in deep.text
    key = url.split("//")[1].split(".")[0]  # the old path URL, on the API's site: nothing
    assert httpx.get(f"http://127.0.0.1:{server.sites_port}/sites/{key}/").status_code == 404

    changed = chat(client, app["id"], 'Change the title to "Published Todos"')
    assert changed.done is not None and changed.done["status"] == "succeeded", changed.errors
    second = deploy(client, app["id"])
    assert second["state"] == "succeeded" and second["id"] > first["id"]
    assert "Published Todos" in bundle(url) and "Published Todos" not in site
    record = client.get(f"/api/apps/{app['id']}").json()
    assert record["deployUrl"] == url  # the key is stable per app

    broken = chat(client, app["id"], "[[broken-vue]] Make the home page fancier")
    assert broken.done is not None and broken.done["status"] == "failed"
    third = deploy(client, app["id"])
    assert third["state"] == "failed" and third["error"] and third["logTail"]
    record = client.get(f"/api/apps/{app['id']}").json()
    assert record["deployBuildId"] == second["id"]  # visitors still get the last good one
    assert "Published Todos" in bundle(url)

    back = client.post(f"/api/apps/{app['id']}/rollback", json={"buildId": first["id"]})
    assert back.status_code == 200 and back.json()["deployBuildId"] == first["id"]
    assert "Published Todos" not in bundle(url)
    listed = client.get(f"/api/apps/{app['id']}/builds", params={"purpose": "deploy"}).json()
    assert [(b["id"], b["state"], b["published"]) for b in listed["builds"]] == [
        (third["id"], "failed", False),
        (second["id"], "succeeded", False),
        (first["id"], "succeeded", True),
    ]

    for bad, status in (
        (third["id"], 400),
        (preview_id, 400),
        ("b0000000000000000000", 404),
        ("nonsense", 400),
    ):
        answer = client.post(f"/api/apps/{app['id']}/rollback", json={"buildId": bad})
        assert answer.status_code == status, (bad, answer.text)


def test_two_concurrent_deploys_give_two_ordered_builds_and_one_final_pointer(
    client: httpx.Client,
) -> None:
    app = create(client, "A page about herons", "html")
    chat(client, app["id"], app["initPrompt"])
    ids: list[str] = []
    barrier = threading.Barrier(2)

    def ask() -> None:
        barrier.wait()
        ids.append(client.post(f"/api/apps/{app['id']}/deploy").json()["buildId"])

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    builds = sorted((wait_for_build(client, app["id"], i) for i in ids), key=lambda b: b["id"])
    assert len({b["id"] for b in builds}) == 2
    assert all(b["state"] == "succeeded" for b in builds)
    assert builds[1]["startedAt"] >= builds[0]["finishedAt"]  # serialized, in order
    record = client.get(f"/api/apps/{app['id']}").json()
    assert record["deployBuildId"] == builds[1]["id"]
    assert "herons" in httpx.get(record["deployUrl"]).text.lower()


def test_deploying_nothing_and_deleting_a_published_app(
    server: Server, client: httpx.Client
) -> None:
    empty = create(client, "A page about nothing yet", "html")
    answer = client.post(f"/api/apps/{empty['id']}/deploy")
    assert answer.status_code == 409 and "nothing to deploy" in answer.json()["error"]["message"]

    app = create(client, "A page about kingfishers", "html")
    chat(client, app["id"], app["initPrompt"])
    assert deploy(client, app["id"])["state"] == "succeeded"
    record = client.get(f"/api/apps/{app['id']}").json()
    preview = record["previewUrl"]
    site, shown = httpx.get(record["deployUrl"]), httpx.get(preview)
    assert site.status_code == 200 and shown.status_code == 200
    # The console's element picker is in the preview, never in the published site.
    assert "__zerocode/picker.js" in shown.text and "__zerocode" not in site.text
    assert client.delete(f"/api/apps/{app['id']}").status_code == 204
    assert httpx.get(record["deployUrl"]).status_code == 404
    assert httpx.get(preview).status_code == 404
    assert not (server.data_dir / "builds" / app["id"]).exists()
    assert not (server.data_dir / "build-work" / app["id"]).exists()


def chromium_or_skip() -> None:
    if shutil.which("chromium") is None:
        if os.environ.get("ZEROCODE_REQUIRE_CHROMIUM"):
            raise RuntimeError("ZEROCODE_REQUIRE_CHROMIUM is set but chromium is not installed")
        pytest.skip("chromium is not installed")


def test_a_published_app_gets_a_cover_screenshot(client: httpx.Client) -> None:
    chromium_or_skip()
    app = create(client, "A page about puffins", "html")
    chat(client, app["id"], app["initPrompt"])
    build = deploy(client, app["id"])
    deadline = time.monotonic() + 60
    record = client.get(f"/api/apps/{app['id']}").json()
    while record["cover"] is None and time.monotonic() < deadline:
        time.sleep(0.2)
        record = client.get(f"/api/apps/{app['id']}").json()
    assert record["cover"] and record["cover"].endswith(f"/{build['id']}.png")
    image = httpx.get(record["cover"])
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert image.content.startswith(b"\x89PNG\r\n\x1a\n") and len(image.content) > 2000
