"""An in-process API over a local-mode platform on tmp_path (offline model, no covers), and
helpers for its callers: anonymous, users, an admin."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.http.app import create_app

PASSWORD = "correct horse"


@dataclass
class Api:
    platform: Platform
    client: TestClient

    def user(self, prefix: str = "user") -> dict[str, str]:
        """Bearer headers of a new account."""
        account = f"{prefix}-{secrets.token_hex(4)}"
        assert (
            self.client.post(
                "/api/users/register", json={"account": account, "password": PASSWORD}
            ).status_code
            == 201
        )
        login = self.client.post(
            "/api/users/login", json={"account": account, "password": PASSWORD}
        )
        self.client.cookies.clear()  # bearer only: the cookie is tested on its own
        return {"Authorization": f"Bearer {login.json()['token']}"}

    def admin(self) -> dict[str, str]:
        account = f"admin-{secrets.token_hex(4)}"
        self.platform.accounts.register(account, PASSWORD)
        self.platform.accounts.make_admin(account)
        token, _ = self.platform.accounts.login(account, PASSWORD)
        return {"Authorization": f"Bearer {token}"}

    def app(self, headers: dict[str, str], prompt: str = "A page about newts") -> dict[str, Any]:
        """A new single-page app (no build until a turn changes files)."""
        created = self.client.post(
            "/api/apps", headers=headers, json={"initPrompt": prompt, "codeGenType": "html"}
        )
        assert created.status_code == 201, created.text
        return dict(created.json())

    def chat(self, headers: dict[str, str], app_id: str, message: str) -> str:
        with self.client.stream(
            "POST", f"/api/apps/{app_id}/chat", headers=headers, json={"message": message}
        ) as stream:
            assert stream.status_code == 200
            return "".join(stream.iter_text())


def error_code(response: Any) -> str:
    return str(response.json()["error"]["code"])


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, covers=False)


@pytest.fixture
def api(settings: Settings) -> Iterator[Api]:
    platform = wiring.platform(settings)
    with TestClient(create_app(platform)) as client:
        yield Api(platform, client)
