"""Images and OpenAI-compatible providers through the real server (issue 41, point 4): a
provider told to see images gets each as OpenAI's documented image part (a data URL of the
kept image, after the text); one that does not is never sent one: the request is refused
before its turn starts, saying which model and what to do."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Server, create, signed_in
from tests.e2e.replay_model import ReplayModel, fixture_stream
from tests.e2e.test_providers import html_app, talk
from tests.pictures import png


def start(tmp: pytest.TempPathFactory, model: ReplayModel, **env: str) -> Server:
    srv = Server(tmp.mktemp("zerocode-provider-images"))
    srv.env.update(
        {
            "ZEROCODE_MODEL_BASE_URL": model.base_url,
            "ZEROCODE_MODEL_API_KEY": "sk-replay-images",
            "ZEROCODE_MODEL_VUE": "agent",
            "ZEROCODE_MODEL_CODE": "coder",
            "ZEROCODE_MODEL_ROUTING": "router",
            "ZEROCODE_REPAIR_ROUNDS": "0",
            "ZEROCODE_RUNTIME_CHECK": "false",
            "ZEROCODE_COVERS": "false",
            **env,
        }
    )
    srv.start()
    return srv


Servers = tuple[ReplayModel, Server, Server]


@pytest.fixture(scope="module")
def replay(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ReplayModel, Server, Server]]:
    with ReplayModel() as model:
        seeing = start(tmp_path_factory, model, ZEROCODE_MODEL_VISION="1")
        blind = start(tmp_path_factory, model)  # an endpoint is not assumed to see images
        try:
            yield model, seeing, blind
        finally:
            seeing.stop()
            blind.stop()


SHOT = png((300, 200), (10, 20, 200))
URL = f"data:image/png;base64,{base64.b64encode(SHOT).decode()}"


def test_a_seeing_provider_gets_openais_image_part(
    replay: Servers,
) -> None:
    model, seeing, _ = replay
    client = signed_in(seeing)
    app_id = html_app(client)
    model.reset(fixture_stream("no_done_sentinel.sse"))
    with client.stream(
        "POST", f"/api/apps/{app_id}/chat", json={"message": "Like this", "images": [URL]}
    ) as r:
        assert r.status_code == 200, r.read()
        r.read()
    (sent,) = model.generations
    asked = sent.body["messages"][-1]
    assert asked["role"] == "user" and isinstance(asked["content"], list)
    text, image = asked["content"]
    assert text == {"type": "text", "text": "Like this"}
    assert image["type"] == "image_url" and set(image) == {"type", "image_url"}
    url = image["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    kept = base64.b64decode(url.split(",", 1)[1])
    # The image as kept (re-encoded, its digest the transcript's), not the bytes sent.
    context = client.get(f"/api/apps/{app_id}/context").json()["messages"]
    ref = next(m for m in context if isinstance(m["content"], list))["content"][1]
    assert ref["image_url"]["url"].startswith(f"zerocode-image:{hashlib.sha256(kept).hexdigest()}")
    # The next turn sends it again (the newest images stay in the window).
    model.reset(fixture_stream("no_done_sentinel.sse"))
    assert talk(client, app_id, "And now?").status == "succeeded"
    again = model.generations[0].body["messages"]
    assert any(isinstance(m["content"], list) for m in again if m["role"] == "user")


def test_a_provider_without_vision_is_refused_up_front(
    replay: Servers,
) -> None:
    model, _, blind = replay
    client = signed_in(blind)
    app = create(client, "A page for a bakery", "html")
    model.reset()
    got = client.post(f"/api/apps/{app['id']}/chat", json={"message": "Like this", "images": [URL]})
    assert got.status_code == 400, got.text
    error = got.json()["error"]
    assert error["code"] == "images_not_supported" and "coder" in error["message"]
    assert "ZEROCODE_MODEL_VISION" in error["message"]
    assert model.generations == []  # nothing was sent to the model
    assert client.get(f"/api/apps/{app['id']}/history").json()["entries"] == []
    # Words alone still work with it.
    model.reset(fixture_stream("no_done_sentinel.sse"))
    assert talk(client, app["id"], "A page for a bakery").status == "succeeded"
