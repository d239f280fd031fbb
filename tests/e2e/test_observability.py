"""Structured JSON logs with request, user, app and turn, and EMF metrics per turn."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from tests.e2e.conftest import Server, chat, create


def log_lines(server: Server) -> list[dict[str, Any]]:
    assert server.log is not None
    out = []
    text = server.log.read_text()
    # Whole lines only: the server (shared with other modules) may be writing one right now.
    # Split on "\n" alone: a logged path may hold U+2028 or U+0085, which JSON keeps as
    # they are and str.splitlines() would take for line ends.
    for line in text[: text.rfind("\n") + 1].split("\n"):
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def test_requests_and_turns_are_logged_as_json_with_context(
    client: httpx.Client, server: Server
) -> None:
    app = create(client, "A page about herons", "html")
    response = client.get(f"/api/apps/{app['id']}", headers={"X-Request-Id": "trace-me-42"})
    assert response.headers["x-request-id"] == "trace-me-42"
    assert client.get("/api/health").headers["x-request-id"]  # generated when not given
    chat(client, app["id"], app["initPrompt"])
    me = client.get("/api/users/me").json()
    time.sleep(0.3)  # let the server write its last lines
    lines = log_lines(server)
    access = [entry for entry in lines if entry.get("request_id") == "trace-me-42"]
    assert access and access[-1]["status"] == 200 and access[-1]["user_id"] == me["id"]
    assert access[-1]["path"] == f"/api/apps/{app['id']}" and "duration_ms" in access[-1]
    turns = [
        entry
        for entry in lines
        if entry.get("app_id") == app["id"]
        and "turn" in entry
        and str(entry.get("message", "")).startswith("turn ")
    ]
    assert turns and turns[-1]["status"] == "succeeded" and turns[-1]["turn"] == 1
    assert turns[-1]["tokens_in"] > 0 and turns[-1]["user_id"] == me["id"]
    emf = [entry for entry in lines if "_aws" in entry]
    assert emf, "no metrics line"
    names = {m["Name"] for m in emf[-1]["_aws"]["CloudWatchMetrics"][0]["Metrics"]}
    assert {
        "Turns",
        "TurnDuration",
        "ModelTokensIn",
        "ModelTokensOut",
        "ToolCalls",
        "ToolFailures",
        "Builds",
        "Errors",
    } <= names
    assert emf[-1]["Turns"] == [1.0] or emf[-1]["Turns"] == 1.0
