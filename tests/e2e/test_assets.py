"""The builder's images through the real server (issue 41): an upload re-encoded into the
app's assets folder, a version, told to the model, served by the preview and the site, in
the zip and the versions' diff, placed by the model when asked; a picked image replaced by
an upload; hostile files refused or neutralised, and nothing written outside the folder."""

from __future__ import annotations

import io
import json
import re
import zipfile
from typing import Any

import httpx

from tests.e2e.conftest import Server, chat, create, shown_build
from tests.e2e.test_deploy import deploy
from tests.e2e.test_versions import last_message, preview_page, versions_of
from tests.pictures import (
    HOSTILE_SVG,
    POLYGLOT_TAIL,
    bomb,
    jpeg_with_gps,
    long_gif,
    pixel,
    png,
    polyglot,
)


def upload(
    client: httpx.Client, app_id: str, name: str, data: bytes, kind: str = "image/png"
) -> httpx.Response:
    return client.post(f"/api/apps/{app_id}/assets", files={"file": (name, data, kind)})


def site_get(server: Server, url: str, path: str) -> httpx.Response:
    """A file of a preview or site as a visitor's browser gets it (by its Host name)."""
    host = httpx.URL(url).netloc.decode()
    return httpx.get(f"http://127.0.0.1:{server.sites_port}{path}", headers={"Host": host})


def html_app(client: httpx.Client, prompt: str) -> dict[str, Any]:
    app = create(client, prompt, "html")
    assert chat(client, app["id"], app["initPrompt"]).ended == ("succeeded", 1)
    return app


def test_an_uploaded_logo_is_a_version_told_placed_served_published_and_zipped(
    client: httpx.Client, server: Server
) -> None:
    app = html_app(client, "A page for a bakery called Crumbs")
    app_id = app["id"]
    sent = polyglot()  # a PNG with a page after its end
    got = upload(client, app_id, "My Logo.PNG", sent)
    assert got.status_code == 201, got.text
    body = got.json()
    asset = body["asset"]
    assert asset == {
        "path": "assets/my-logo.png",
        "url": "assets/my-logo.png",
        "type": "image/png",
        "width": 64,
        "height": 32,
        "bytes": asset["bytes"],
    }
    assert body["replaced"] is False and body["changed"] == ["assets/my-logo.png"]
    assert body["version"]["id"] == "v2" and body["version"]["kind"] == "edit"
    assert body["build"]["state"] == "succeeded"
    kept = client.get(f"/api/apps/{app_id}/assets/my-logo.png")
    assert kept.status_code == 200 and kept.headers["content-type"] == "image/png"
    assert "sandbox" in kept.headers["content-security-policy"]
    assert POLYGLOT_TAIL not in kept.content and pixel(kept.content) == (200, 30, 40)
    listed = client.get(f"/api/apps/{app_id}/assets").json()
    assert [a["path"] for a in listed["assets"]] == ["assets/my-logo.png"]
    assert listed["folder"] == "assets/" and listed["maxBytes"] == 5 * 1024 * 1024

    # The model is told what the image is and how a page refers to it (M9).
    told = last_message(client, app_id)["content"]
    assert told.startswith("[zerocode: the user uploaded assets/my-logo.png (image/png, 64×32 px")
    assert "now version v2" in told and 'shows it as <img src="assets/my-logo.png" ...>' in told

    # The preview serves it as an image, typed by the platform, never sniffed as a page.
    preview_url = client.get(f"/api/apps/{app_id}").json()["previewUrl"]
    served = site_get(server, preview_url, "/assets/my-logo.png")
    assert served.status_code == 200 and served.headers["content-type"] == "image/png"
    assert served.headers["x-content-type-options"] == "nosniff"
    assert served.content == kept.content

    # "Use my logo" places it in the page (the offline model reads the upload note).
    turn = chat(client, app_id, "Use my logo in the header")
    assert turn.ended is not None and turn.ended[0] == "succeeded", turn.errors
    page = preview_page(server, client, app_id)
    assert '<img src="assets/my-logo.png" alt="My Logo" width="96" height="48"' in page

    as_then = client.get(f"/api/apps/{app_id}/assets/my-logo.png", params={"version": "v2"})
    assert as_then.status_code == 200 and as_then.content == kept.content
    before = client.get(f"/api/apps/{app_id}/assets/my-logo.png", params={"version": "v1"})
    assert before.status_code == 404 and "in version v1" in before.text
    diff = client.get(f"/api/apps/{app_id}/versions/v2/diff").json()
    (added,) = diff["files"]
    assert (added["path"], added["status"]) == ("assets/my-logo.png", "added")
    assert added["binary"] is True

    zipped = zipfile.ZipFile(io.BytesIO(client.get(f"/api/apps/{app_id}/download").content))
    (top,) = {name.split("/")[0] for name in zipped.namelist()}
    assert zipped.read(f"{top}/assets/my-logo.png") == kept.content

    record = deploy(client, app_id)
    assert record["state"] == "succeeded", record
    site = client.get(f"/api/apps/{app_id}").json()["deployUrl"]
    live = httpx.get(site + "assets/my-logo.png")
    assert live.status_code == 200 and live.content == kept.content
    assert 'src="assets/my-logo.png"' in httpx.get(site).text


def test_metadata_is_stripped_and_the_real_type_names_the_file(client: httpx.Client) -> None:
    app = html_app(client, "A page for a photographer")
    got = upload(client, app["id"], "../../etc/holiday.png", jpeg_with_gps(), "image/png")
    assert got.status_code == 201, got.text
    asset = got.json()["asset"]
    # The content is a JPEG: named .jpg, whatever the name and the declared type said; the
    # path keeps only the file's own name; turned upright as its EXIF said, the EXIF gone.
    assert asset["path"] == "assets/holiday.jpg" and asset["type"] == "image/jpeg"
    assert (asset["width"], asset["height"]) == (200, 300)
    kept = client.get(f"/api/apps/{app['id']}/assets/holiday.jpg").content
    assert b"Exif" not in kept and b"taken at home" not in kept
    paths = [f["path"] for f in client.get(f"/api/apps/{app['id']}/files").json()["files"]]
    assert paths == ["assets/holiday.jpg", "index.html"]


def test_hostile_files_are_refused_with_clear_errors_and_nothing_is_kept(
    client: httpx.Client, server: Server
) -> None:
    app = html_app(client, "A page for a florist")
    app_id = app["id"]
    before = client.get(f"/api/apps/{app_id}/files").json()
    for name, data, status, code in [
        ("logo.svg", HOSTILE_SVG, 415, "unsupported_image_type"),
        ("logo.png", HOSTILE_SVG, 415, "unsupported_image_type"),  # the name is not the type
        ("page.png", b"<html><script>alert(1)</script></html>", 415, "unsupported_image_type"),
        ("bomb.png", bomb(), 413, "image_too_large"),
        ("huge.png", png((5000, 10)), 413, "image_too_large"),
        ("long.gif", long_gif(), 400, "image_refused"),
        ("cut.png", png()[:60], 400, "image_refused"),
        ("big.png", png() + b"\0" * (6 * 1024 * 1024), 413, "payload_too_large"),
    ]:
        got = upload(client, app_id, name, data)
        assert got.status_code == status, (name, got.text)
        assert got.json()["error"]["code"] == code, (name, got.text)
    not_a_form = client.post(f"/api/apps/{app_id}/assets", content=png())
    assert not_a_form.status_code == 415, not_a_form.text
    no_file = client.post(f"/api/apps/{app_id}/assets", files={"other": ("a.png", png())})
    assert no_file.status_code == 400 and "'file'" in no_file.text
    # The folder is the uploads' alone: a hand edit cannot write there.
    planted = client.put(f"/api/apps/{app_id}/files/assets/x.png", json={"content": "<html>"})
    assert planted.status_code == 400 and planted.json()["error"]["code"] == "file_refused"
    assert client.get(f"/api/apps/{app_id}/files").json() == before
    assert len(versions_of(client, app_id)) == 1
    assert client.get("/api/health").status_code == 200


def test_a_picked_image_is_replaced_by_an_upload_without_a_turn(
    client: httpx.Client, server: Server
) -> None:
    app = html_app(client, "A page for a tea house")
    app_id = app["id"]
    assert upload(client, app_id, "logo.png", png((40, 40), (0, 0, 255))).status_code == 201
    assert chat(client, app_id, "Put my logo at the top").ended is not None
    assert 'src="assets/logo.png"' in preview_page(server, client, app_id)
    element = {"tag": "img", "src": "assets/logo.png", "pagePath": "/", "text": ""}
    element["buildId"] = shown_build(client, app_id)
    got = client.post(
        f"/api/apps/{app_id}/edits/image",
        files={"file": ("new.jpg", jpeg_with_gps((40, 40)), "image/jpeg")},
        data={"element": json.dumps(element)},
    )
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["replaced"] is True and body["asset"]["path"] == "assets/logo.png"
    assert body["asset"]["type"] == "image/png"  # the asset keeps its name and type
    preview_url = client.get(f"/api/apps/{app_id}").json()["previewUrl"]
    served = site_get(server, preview_url, "/assets/logo.png").content
    assert pixel(served)[1] > 150  # green now, not blue
    told = last_message(client, app_id)["content"]
    assert told.startswith("[zerocode: the user replaced assets/logo.png")

    # An image that is not an upload cannot be replaced in place: it says so.
    element["buildId"] = shown_build(client, app_id)
    element["src"] = "https://example.com/cat.png"
    other = client.post(
        f"/api/apps/{app_id}/edits/image",
        files={"file": ("new.png", png(), "image/png")},
        data={"element": json.dumps(element)},
    )
    assert other.status_code == 422 and other.json()["error"]["code"] == "image_not_an_asset"


def test_a_vue_apps_upload_lands_in_public_assets_and_its_build_serves_it(
    client: httpx.Client, server: Server
) -> None:
    app = create(client, "A Vue todo app", "vue_project")
    assert chat(client, app["id"], app["initPrompt"]).ended is not None
    got = upload(client, app["id"], "logo.webp", png((30, 20), (0, 128, 0)))
    assert got.status_code == 201, got.text
    body = got.json()
    # The content is a PNG: named .png; Vite copies public/ into the build as it is.
    assert body["asset"]["path"] == "public/assets/logo.png"
    assert body["asset"]["url"] == "assets/logo.png" and body["build"]["state"] == "succeeded"
    preview_url = client.get(f"/api/apps/{app['id']}").json()["previewUrl"]
    served = site_get(server, preview_url, "/assets/logo.png")
    assert served.status_code == 200 and served.headers["content-type"] == "image/png"
    assert pixel(served.content) == (0, 128, 0)
    told = last_message(client, app["id"])["content"]
    assert told.startswith("[zerocode: the user uploaded public/assets/logo.png (image/png")
    assert "never write or delete them" in told
    # "Use my logo": the model lists the uploads, reads the home view, places the image.
    turn = chat(client, app["id"], "Use my logo in the header")
    assert turn.ended is not None and turn.ended[0] == "succeeded", (turn.done, turn.builds)
    names = [t["name"] for t in turn.tools if t["phase"] == "call"]
    assert names[:3] == ["list_assets", "read_file", "modify_file"], names
    view = client.get(f"/api/apps/{app['id']}/files/src/views/HomeView.vue").text
    assert '<img :src="\'assets/logo.png\'" alt="Logo" width="72" height="48" class="logo">' in view
    built = site_get(server, preview_url, "/").text
    assert "assets/logo.png" not in built  # the page is the app's script: the URL is in it
    scripts = re.findall(r'src="\./?([^"]+\.js)"', built)
    bundle = "".join(site_get(server, preview_url, "/" + s).text for s in scripts)
    assert "assets/logo.png" in bundle  # a string the browser loads, not a bundled module
    # The code editor cannot write there either.
    planted = client.put(
        f"/api/apps/{app['id']}/files/public/assets/logo.png", json={"content": "<svg/>"}
    )
    assert planted.status_code == 400 and planted.json()["error"]["code"] == "file_refused"
