from __future__ import annotations

import pytest
from pydantic import ValidationError

from zerocode.bootstrap.settings import API_GATEWAY_BODY, Settings, settings_errors
from zerocode.engine.window_budget import window_minimum
from zerocode.memory.window import MAX_STEP_MESSAGES, WindowPolicy


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
    assert policy.max_messages == 80 and policy.summary
    assert policy.tail_items == (80 + MAX_STEP_MESSAGES) * 2
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


MESSAGE_CHARS = Settings.model_fields["max_message_chars"].default  # 8,000 (issue 26)
IMAGES = Settings.model_fields["chat_images_max"].default  # 4 a message (issue 41)


def test_a_window_budget_below_what_every_window_pins_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    minimum = window_minimum(MESSAGE_CHARS, None, images=IMAGES)
    monkeypatch.setenv("ZEROCODE_WINDOW_MAX_TOKENS", str(minimum.tokens - 1))
    with pytest.raises(ValidationError) as refused:
        Settings()
    [line] = settings_errors(refused.value)
    assert line.startswith(f"ZEROCODE_WINDOW_MAX_TOKENS={minimum.tokens - 1} is below the minimum")
    assert f"{minimum.tokens} tokens" in line and "vue_project" in line
    assert f"the request's images at most ({minimum.images})" in line
    monkeypatch.setenv("ZEROCODE_WINDOW_MAX_TOKENS", str(minimum.tokens))
    assert Settings().window_max_tokens == minimum.tokens
    # Fewer images a message, a smaller minimum; none, the text's alone.
    monkeypatch.setenv("ZEROCODE_CHAT_IMAGES_MAX", "0")
    monkeypatch.setenv(
        "ZEROCODE_WINDOW_MAX_TOKENS", str(window_minimum(MESSAGE_CHARS, None).tokens)
    )
    assert Settings().chat_images_max == 0


def test_the_minimum_grows_with_the_summary_and_the_message_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = window_minimum(MESSAGE_CHARS, None, images=IMAGES).tokens
    monkeypatch.setenv("ZEROCODE_WINDOW_MAX_TOKENS", str(base))
    Settings()
    monkeypatch.setenv("ZEROCODE_WINDOW_SUMMARY", "true")
    with pytest.raises(ValidationError, match="running summary's room"):
        Settings()
    monkeypatch.setenv("ZEROCODE_WINDOW_SUMMARY", "false")
    monkeypatch.setenv("ZEROCODE_MAX_MESSAGE_CHARS", str(MESSAGE_CHARS * 2))
    with pytest.raises(ValidationError, match="ZEROCODE_WINDOW_MAX_TOKENS"):
        Settings()
    monkeypatch.setenv("ZEROCODE_MAX_MESSAGE_CHARS", "200")
    Settings()


def test_settings_errors_name_the_variable_one_line_each(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZEROCODE_WINDOW_MAX_MESSAGES", "2")
    monkeypatch.setenv("ZEROCODE_PORT", "http")
    with pytest.raises(ValidationError) as refused:
        Settings()
    lines = settings_errors(refused.value)
    assert len(lines) == 2 and all("\n" not in line for line in lines)
    assert lines[0].startswith("ZEROCODE_PORT: ") and lines[1].startswith(
        "ZEROCODE_WINDOW_MAX_MESSAGES: "
    )


def test_a_chat_request_with_its_images_fits_api_gateway_on_aws(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = Settings().chat_image_rules()
    assert Settings().max_body_bytes + rules.body_bytes() <= API_GATEWAY_BODY
    monkeypatch.setenv("ZEROCODE_MODE", "aws")
    monkeypatch.setenv("ZEROCODE_CHAT_IMAGES_MAX", "8")
    monkeypatch.setenv("ZEROCODE_WINDOW_MAX_TOKENS", "32000")  # a window that holds 8 images
    with pytest.raises(ValidationError, match="over API Gateway's 10,485,760"):
        Settings()
    monkeypatch.setenv("ZEROCODE_MODE", "local")  # no gateway in front
    assert Settings().chat_images_max == 8


def test_the_offline_model_sees_images_and_an_endpoint_only_when_told(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().chat_image_rules().vision
    monkeypatch.setenv("ZEROCODE_MODEL_BASE_URL", "https://api.deepseek.com/v1")
    monkeypatch.setenv("ZEROCODE_MODEL_CODE", "deepseek-chat")
    refused = Settings().chat_image_rules()
    assert not refused.vision and refused.model == "deepseek-chat"
    monkeypatch.setenv("ZEROCODE_MODEL_VISION", "1")
    assert Settings().chat_image_rules().vision
