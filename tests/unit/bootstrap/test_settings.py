from __future__ import annotations

import pytest
from pydantic import ValidationError

from zerocode.bootstrap.settings import Settings
from zerocode.memory.window import WindowPolicy


def test_defaults_are_local_and_match_the_default_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("ZEROCODE_MODE", "ZEROCODE_REDIS_URL", "ZEROCODE_WINDOW_MAX_MESSAGES"):
        monkeypatch.delenv(key, raising=False)
    settings = Settings()
    assert settings.mode == "local" and settings.redis_url is None
    assert settings.window_policy() == WindowPolicy()
    assert settings.sqlite_path.name == "zerocode.sqlite3"


def test_environment_configures_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEROCODE_MODE", "aws")
    monkeypatch.setenv("ZEROCODE_REDIS_URL", "rediss://cache.abc.use1.cache.amazonaws.com:6379")
    monkeypatch.setenv("ZEROCODE_TRANSCRIPT_TABLE", "prod-transcript")
    monkeypatch.setenv("ZEROCODE_WINDOW_MAX_MESSAGES", "80")
    monkeypatch.setenv("ZEROCODE_WINDOW_SUMMARY", "true")
    monkeypatch.setenv("ZEROCODE_RETENTION_DAYS", "0")
    settings = Settings()
    assert settings.mode == "aws" and settings.transcript_table == "prod-transcript"
    assert settings.redis_url is not None and settings.redis_url.startswith("rediss://")
    policy = settings.window_policy()
    assert policy.max_messages == 80 and policy.summary and policy.tail_items == 160
    assert settings.retention_days == 0


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("ZEROCODE_MODE", "cloud"),
        ("ZEROCODE_WINDOW_MAX_MESSAGES", "2"),
        ("ZEROCODE_RETENTION_DAYS", "-1"),
    ],
)
def test_bad_settings_are_refused(monkeypatch: pytest.MonkeyPatch, key: str, value: str) -> None:
    monkeypatch.setenv(key, value)
    with pytest.raises(ValidationError):
        Settings()
