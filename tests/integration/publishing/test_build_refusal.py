"""Without bubblewrap, Vue builds are refused with one clear message; the development
override builds anyway and the banner and /api/health say so, loudly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from zerocode.adapters.local.sandbox import MISSING
from zerocode.bootstrap import wiring
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.entrypoints.server import banner
from zerocode.http.app import create_app
from zerocode.publishing.builds import REFUSED


def admin_headers(p: Platform) -> dict[str, str]:
    """/api/health names the build isolation to admins only."""
    p.accounts.register("health-admin", "a long password")
    p.accounts.make_admin("health-admin")
    token, _ = p.accounts.login("health-admin", "a long password")
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: None if name == "bwrap" else real(name, *a, **k)
    )


def test_without_bubblewrap_vue_previews_fail_naming_the_package(
    no_bwrap: None, tmp_path: Path
) -> None:
    settings = Settings(data_dir=tmp_path, covers=False, dangerously_unsandboxed_builds=False)
    p = wiring.platform(settings)
    assert p.build_isolation.startswith("refused") and "apt-get install bubblewrap" in MISSING
    with TestClient(create_app(p)) as client:
        assert "builds" not in client.get("/api/health").json()  # not for anyone
        health = client.get("/api/health", headers=admin_headers(p)).json()
        assert health["builds"] == p.build_isolation
        client.post("/api/users/register", json={"account": "dev-1", "password": "a long pw"})
        token = client.post(
            "/api/users/login", json={"account": "dev-1", "password": "a long pw"}
        ).json()["token"]
        client.headers["Authorization"] = f"Bearer {token}"
        app = client.post(
            "/api/apps", json={"initPrompt": "A Vue todo app", "codeGenType": "vue_project"}
        ).json()
        with client.stream(
            "POST", f"/api/apps/{app['id']}/chat", json={"message": "A Vue todo app"}
        ) as stream:
            body = "".join(stream.iter_text())
        assert "event: done" in body and '"status":"failed"' in body
        assert "bubblewrap" in body  # the build event's error says what to install
        builds = client.get(f"/api/apps/{app['id']}/builds").json()["builds"]
        assert builds[0]["state"] == "failed" and builds[0]["error"] == REFUSED + MISSING
    assert not (tmp_path / "toolchain").exists()  # nothing was installed or run


def test_the_override_is_loud(no_bwrap: None, tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, covers=False, dangerously_unsandboxed_builds=True)
    p = wiring.platform(settings)
    assert p.build_isolation.startswith("UNSANDBOXED")
    assert "UNSANDBOXED" in banner(settings, "offline", p.build_isolation)
    with TestClient(create_app(p)) as client:
        health = client.get("/api/health", headers=admin_headers(p)).json()
        assert health["builds"].startswith("UNSANDBOXED")


def test_with_bubblewrap_the_banner_says_sandboxed(tmp_path: Path) -> None:
    from tests.conftest import build_sandbox_or_skip

    build_sandbox_or_skip()
    p = wiring.platform(
        Settings(data_dir=tmp_path, covers=False, dangerously_unsandboxed_builds=True)
    )
    assert p.build_isolation.startswith("sandboxed (bubblewrap")  # the override is moot
