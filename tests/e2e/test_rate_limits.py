"""Quotas per user: 429 with Retry-After past the limit, and recovery after waiting."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, signed_in
from tests.pictures import png

QUOTA_WINDOW = 15  # seconds: this server's rate window (ZEROCODE_RATE_WINDOW_SECONDS)


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(
        tmp_path_factory.mktemp("zerocode-quota"),
        env={
            "ZEROCODE_RATE_CHAT": "2",
            "ZEROCODE_RATE_CREATE": "3",
            # Long enough that two turns fit in it on a loaded machine (the suite runs on
            # every core), short enough to wait out.
            "ZEROCODE_RATE_WINDOW_SECONDS": str(QUOTA_WINDOW),
        },
    )
    srv.start()
    yield srv
    srv.stop()


def test_chat_quota_answers_429_with_retry_after_and_recovers(strict_server: Server) -> None:
    """The quota's two turns start back to back, on two apps of the user, and the third
    request follows at once on a third: all three inside one window however slowly the
    machine runs the turns (one after another, a loaded machine once took longer than the
    window for them, and the third request rightly went through)."""
    client = signed_in(strict_server)
    apps = [create(client, f"A page about wrens {i}", "html") for i in range(3)]
    with contextlib.ExitStack() as streams:
        for app in apps[:2]:
            r = streams.enter_context(
                client.stream("POST", f"/api/apps/{app['id']}/chat", json={"message": "go"})
            )
            assert r.status_code == 200, r.read()  # accepted: the quota counted it
        refused = client.post(f"/api/apps/{apps[2]['id']}/chat", json={"message": "again"})
        assert refused.status_code == 429, refused.text
        assert refused.json()["error"]["code"] == "rate_limited"
        wait = int(refused.headers["Retry-After"])
        assert 1 <= wait <= 15
    other = signed_in(strict_server)  # quotas are per user
    theirs = create(other, "A page about larks", "html")
    assert chat(other, theirs["id"], theirs["initPrompt"]).done is not None
    time.sleep(wait + 0.2)
    assert chat(client, apps[2]["id"], apps[2]["initPrompt"]).done is not None


def test_create_quota(strict_server: Server) -> None:
    client = signed_in(strict_server)
    for i in range(3):
        create(client, f"A page about stones {i}", "html")
    refused = client.post("/api/apps", json={"initPrompt": "one more", "codeGenType": "html"})
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    # Invalid requests are refused before they count.
    bad = httpx.post(
        f"{strict_server.api}/api/apps", json={"initPrompt": ""}, headers=dict(client.headers)
    )
    assert bad.status_code == 422


def test_a_flood_of_uploads_is_refused_past_the_quota_and_the_server_answers(
    strict_server: Server,
) -> None:
    """1,000 uploads in well under a minute, four at a time: the user's edit quota (10 per
    window: this server's is 15 s) takes ten per window the flood lasts (each saved, or 409
    while another upload of the app is being saved: one edit of an app at a time), the rest
    are 429 before their bodies are read, and the server answers others meanwhile. A loaded
    machine once took longer than one window for the flood, and the next ten rightly went
    through: the bound is the limiter's (ten in any window), not one window's."""
    client = signed_in(strict_server)
    app = create(client, "A page about kites", "html")
    assert chat(client, app["id"], app["initPrompt"]).done is not None
    url = f"/api/apps/{app['id']}/assets"

    def one(i: int) -> int:
        return client.post(url, files={"file": (f"kite-{i}.png", png(), "image/png")}).status_code

    started = time.monotonic()
    with ThreadPoolExecutor(4) as pool:
        flood = pool.map(one, range(1000))
        health = [httpx.get(f"{strict_server.api}/api/health", timeout=5) for _ in range(5)]
        statuses = list(flood)
    elapsed = time.monotonic() - started
    assert elapsed < 60
    saved, taken = statuses.count(201), statuses.count(201) + statuses.count(409)
    windows = math.ceil(elapsed / QUOTA_WINDOW)  # the windows the flood touched
    assert saved >= 1 and 10 <= taken <= 10 * windows, (set(statuses), taken, elapsed)
    assert statuses.count(429) == 1000 - taken
    assert all(h.status_code == 200 for h in health)
    listed = client.get(url).json()["assets"]
    assert len(listed) == saved and all(a["path"].startswith("assets/kite-") for a in listed)
