"""The local build sweep through the real server (issue 29, point 4): after several turns and
deploys the previews nobody shows are gone from the disk, and the published site, the
rollback target and the preview are still served."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, shown_build, signed_in, wait_for_build
from zerocode.publishing.output_sweep import REMOVED


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A sweep every second that keeps no build for its age alone."""
    srv = Server(tmp_path_factory.mktemp("zerocode-build-sweep"))
    srv.env["ZEROCODE_BUILD_SWEEP_SECONDS"] = "1"
    srv.env["ZEROCODE_BUILD_SWEEP_KEEP_SECONDS"] = "0"
    srv.start()
    yield srv
    srv.stop()


def deploy(client: httpx.Client, app_id: str) -> dict[str, Any]:
    answer = client.post(f"/api/apps/{app_id}/deploy")
    assert answer.status_code == 202, answer.text
    done = wait_for_build(client, app_id, answer.json()["buildId"])
    assert done["state"] == "succeeded", done
    return done


def h1(page: str) -> str:
    return page.split("<h1>", 1)[1].split("</h1>", 1)[0]


def rename(client: httpx.Client, app_id: str, title: str) -> str:
    """A turn that changes the page's heading; the preview build it made."""
    now = h1(client.get(f"/api/apps/{app_id}/files/index.html").text)
    element = {"pagePath": "/", "tag": "h1", "selector": "h1", "text": now}
    element["buildId"] = shown_build(client, app_id)
    turn = chat(client, app_id, f'Rename it to "{title}"', element)
    assert turn.done is not None and turn.done["status"] == "succeeded", turn.errors
    return str(turn.builds[-1]["buildId"])


def test_the_sweep_keeps_what_is_served_or_can_be_rolled_back_and_removes_the_rest(
    server: Server,
) -> None:
    client = signed_in(server)
    app = create(client, "A page for a bakery called Crumbs", "html")
    app_id = app["id"]
    first = chat(client, app_id, app["initPrompt"])
    assert first.ended == ("succeeded", 1), first.errors
    previews = [first.builds[-1]["buildId"], rename(client, app_id, "Crumbs One")]
    rollback_target = deploy(client, app_id)  # serves "Crumbs One"
    previews.append(rename(client, app_id, "Crumbs Two"))
    published = deploy(client, app_id)  # serves "Crumbs Two"
    shown = rename(client, app_id, "Crumbs Three")
    outputs = server.data_dir / "builds" / app_id

    kept = {rollback_target["id"], published["id"], shown}
    deadline = time.monotonic() + 30
    while {p.name for p in outputs.iterdir()} != kept and time.monotonic() < deadline:
        time.sleep(0.2)
    assert {p.name for p in outputs.iterdir()} == kept

    record = client.get(f"/api/apps/{app_id}").json()
    site = httpx.get(record["deployUrl"])
    assert site.status_code == 200 and h1(site.text) == "Crumbs Two"
    preview = httpx.get(record["previewUrl"])
    assert preview.status_code == 200 and h1(preview.text) == "Crumbs Three"
    # A removed build's record says its output is gone; it is listed and read as before.
    for build_id in previews:
        gone = client.get(f"/api/apps/{app_id}/builds/{build_id}")
        assert gone.status_code == 200, gone.text
        assert gone.json()["state"] == "succeeded" and gone.json()["logTail"].endswith(REMOVED)
    listed = client.get(f"/api/apps/{app_id}/builds", params={"purpose": "preview"})
    assert listed.status_code == 200 and len(listed.json()["builds"]) == 4

    back = client.post(f"/api/apps/{app_id}/rollback", json={"buildId": rollback_target["id"]})
    assert back.status_code == 200, back.text
    site = httpx.get(record["deployUrl"])
    assert site.status_code == 200 and h1(site.text) == "Crumbs One"
    time.sleep(1.5)  # a sweep or two later: nothing more went, nothing served is missing
    assert {p.name for p in outputs.iterdir()} == kept
    assert h1(httpx.get(record["previewUrl"]).text) == "Crumbs Three"
    client.close()
