"""Prompts up to 8,000 characters (issue 26): one that long creates an app and runs a turn,
the model gets it whole; one past the limit is refused with a clear 400 that says the limit
and the length, and nothing is created or started."""

from __future__ import annotations

import httpx

from tests.e2e.conftest import chat, create

LIMIT = 8_000


def long_text(n: int) -> str:
    """Prose of exactly ``n`` characters, ending in a letter (the API strips whitespace)."""
    words = "A page about herons that fish at dawn in the shallow reeds of the river. "
    text = (words * (n // len(words) + 1))[: n - 1]
    return text + "s"


def test_an_8000_character_prompt_works_and_9000_gets_a_clear_400(client: httpx.Client) -> None:
    prompt = long_text(LIMIT)
    assert len(prompt) == LIMIT
    app = create(client, prompt, "html")
    assert app["initPrompt"] == prompt
    turn = chat(client, app["id"], prompt)
    assert turn.ended == ("succeeded", 1), turn.errors
    sent = [
        m["content"]
        for m in client.get(f"/api/apps/{app['id']}/context").json()["messages"]
        if m["role"] == "user"
    ]
    assert prompt in sent[0]  # the model gets it whole

    too_long = long_text(9_000)
    refused = client.post("/api/apps", json={"initPrompt": too_long, "codeGenType": "html"})
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "invalid_input"
    assert error["message"] == "initPrompt is longer than 8000 characters (9000)"
    said = client.post(f"/api/apps/{app['id']}/chat", json={"message": too_long})
    assert said.status_code == 400
    assert said.json()["error"]["message"] == "message is longer than 8000 characters (9000)"
    assert client.get(f"/api/apps/{app['id']}/turns/current").status_code == 204
    history = client.get(f"/api/apps/{app['id']}/history").json()["entries"]
    assert all(too_long not in e["content"] for e in history)
