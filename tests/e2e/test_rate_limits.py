"""Quotas per user: 429 with Retry-After past the limit, and recovery after waiting."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.conftest import Server, chat, create, signed_in


@pytest.fixture(scope="module")
def strict_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = Server(
        tmp_path_factory.mktemp("zerocode-quota"),
        env={
            "ZEROCODE_RATE_CHAT": "2",
            "ZEROCODE_RATE_CREATE": "3",
            # Long enough that two turns fit in it on a loaded machine (the suite runs on
            # every core), short enough to wait out.
            "ZEROCODE_RATE_WINDOW_SECONDS": "15",
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
