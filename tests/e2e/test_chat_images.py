"""Images in a chat message through the real server (issue 41): a pasted screenshot builds a
page in its palette; the transcript keeps a reference and digest, never the bytes; the
window a restore rebuilds after the cache is lost (Redis flushed, the server restarted) is
the same, byte for byte; bad images are refused before a turn starts."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator

import httpx
import pytest
import redis
from PIL import Image, ImageDraw

from tests.conftest import REDIS_URL, redis_client_or_skip
from tests.e2e.conftest import Server, chat, create, parse_sse, signed_in
from tests.e2e.test_versions import preview_page
from tests.pictures import HOSTILE_SVG, bomb, long_gif, png


def screenshot() -> bytes:
    """A 16:9 "screenshot": a warm page, an orange bar, a green block."""
    im = Image.new("RGB", (1280, 720), (250, 240, 230))
    draw = ImageDraw.Draw(im)
    draw.rectangle((0, 0, 1280, 120), fill=(230, 80, 20))
    draw.rectangle((100, 300, 600, 500), fill=(20, 120, 90))
    out = io.BytesIO()
    im.save(out, "PNG")
    return out.getvalue()


def data_url(data: bytes, kind: str = "image/png") -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server whose window cache is this machine's Redis, to flush."""
    redis_client_or_skip()
    srv = Server(tmp_path_factory.mktemp("zerocode-images"))
    srv.env = {**srv.env, "ZEROCODE_REDIS_URL": REDIS_URL}
    srv.start()
    yield srv
    srv.stop()


def context_text(client: httpx.Client, app_id: str) -> str:
    got = client.get(f"/api/apps/{app_id}/context")
    assert got.status_code == 200, got.text
    return json.dumps(got.json()["messages"], sort_keys=True)


def test_a_pasted_screenshot_builds_a_page_in_its_palette_and_survives_a_cache_loss(
    client: httpx.Client, server: Server
) -> None:
    app = create(client, "A landing page like this screenshot", "html")
    shot = data_url(screenshot())
    with client.stream(
        "POST",
        f"/api/apps/{app['id']}/chat",
        json={"message": "A landing page like this screenshot", "images": [shot]},
    ) as response:
        assert response.status_code == 200, response.read()
        turn = parse_sse(response.iter_lines())
    assert turn.ended == ("succeeded", 1), turn.errors
    page = preview_page(server, client, app["id"])
    assert "#ce430c" in page and "#3b5bdb" not in page  # the picture's accent, not the default
    said = "".join(turn.text)
    assert "palette of your picture" in said and "16:9" in said

    # The history shows the image by reference; the API gives it back to its owner.
    (entry,) = [
        e
        for e in client.get(f"/api/apps/{app['id']}/history").json()["entries"]
        if e["role"] == "user"
    ]
    (image,) = entry["images"]
    assert (image["type"], image["width"], image["height"]) == ("image/png", 1280, 720)
    kept = client.get(f"/api/apps/{app['id']}/images/{image['sha256']}")
    assert kept.status_code == 200 and kept.headers["content-type"] == "image/png"
    assert "sandbox" in kept.headers["content-security-policy"]
    assert (
        signed_in(server).get(f"/api/apps/{app['id']}/images/{image['sha256']}").status_code == 404
    )

    # The window names the image by reference and digest: no bytes in it.
    before = context_text(client, app["id"])
    messages = json.loads(before)
    asked = next(m for m in messages if m["role"] == "user" and isinstance(m["content"], list))
    text, part = asked["content"]
    assert text["type"] == "text" and "like this screenshot" in text["text"]
    ref = part["image_url"]["url"]
    assert ref.startswith(f"zerocode-image:{image['sha256']}?type=image/png&w=1280&h=720")
    assert "base64" not in before

    # The cache lost (flushed), the process gone (restarted): the same window, exactly.
    redis.Redis.from_url(REDIS_URL).flushdb()
    assert context_text(client, app["id"]) == before
    server.restart()
    assert context_text(client, app["id"]) == before
    # And the next turn is answered over it: the model is sent the image again.
    again = chat(client, app["id"], 'Change the title to "Warm"')
    assert again.ended is not None and again.ended[0] == "succeeded", again.errors

    # Deleting the app deletes its images (M8).
    kept_dir = server.data_dir / "message-images" / app["id"]
    assert (kept_dir / image["sha256"]).is_file()
    assert client.delete(f"/api/apps/{app['id']}").status_code == 204
    assert not kept_dir.exists()


@pytest.mark.parametrize(
    ("images", "status", "code"),
    [
        ([data_url(HOSTILE_SVG, "image/svg+xml")], 415, "unsupported_image_type"),
        (["https://example.com/cat.png"], 400, "invalid_input"),
        (["data:image/png;base64,@@@"], 400, "invalid_input"),
        ([data_url(bomb())], 413, "image_too_large"),
        ([data_url(long_gif(3), "image/gif")], 400, "image_refused"),
        ([data_url(png())] * 5, 413, "too_many_images"),
        ([data_url(png() + b"\0" * 1_700_000)], 413, "payload_too_large"),
    ],
)
def test_bad_images_are_refused_before_a_turn_starts(
    client: httpx.Client, images: list[str], status: int, code: str
) -> None:
    app = create(client, "A page about kites", "html")
    got = client.post(
        f"/api/apps/{app['id']}/chat", json={"message": "Like this", "images": images}
    )
    assert got.status_code == status, got.text
    assert got.json()["error"]["code"] == code, got.text
    history = client.get(f"/api/apps/{app['id']}/history").json()["entries"]
    assert history == []  # no turn, nothing claimed


def test_a_body_past_the_chat_limit_is_refused_naming_it(client: httpx.Client) -> None:
    app = create(client, "A page about owls", "html")
    huge = [data_url(b"\0" * 1_572_864)] * 4 + ["x" * 2_000_000]
    got = client.post(f"/api/apps/{app['id']}/chat", json={"message": "hi", "images": huge})
    assert got.status_code == 413, got.text
    assert "the request body is larger than" in got.json()["error"]["message"]
