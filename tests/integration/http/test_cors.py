"""CORS: only the configured console origins may call the API from a browser."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.http.app import create_app

CONSOLE = "https://d111111abcdef8.cloudfront.net"


def preflight(client: TestClient, origin: str) -> dict[str, str]:
    answer = client.options(
        "/api/apps",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization,content-type,x-zerocode-request",
        },
    )
    return {k.lower(): v for k, v in answer.headers.items()}


def test_the_console_origin_is_allowed_with_credentials_and_others_are_not(tmp_path: Path) -> None:
    p = wiring.platform(Settings(data_dir=tmp_path, cors_origins=f"{CONSOLE}/, ", covers=False))
    with TestClient(create_app(p)) as client:
        allowed = preflight(client, CONSOLE)
        assert allowed["access-control-allow-origin"] == CONSOLE
        assert allowed["access-control-allow-credentials"] == "true"
        assert "x-zerocode-request" in allowed["access-control-allow-headers"].lower()
        assert "access-control-allow-origin" not in preflight(client, "https://evil.example")
        health = client.get("/api/health", headers={"Origin": CONSOLE})
        assert health.headers["access-control-allow-origin"] == CONSOLE


def test_locally_no_origin_is_allowed(tmp_path: Path) -> None:
    p = wiring.platform(Settings(data_dir=tmp_path, covers=False))
    with TestClient(create_app(p)) as client:
        assert "access-control-allow-origin" not in preflight(client, CONSOLE)
