"""Shared fixtures: one parametrised fixture per port, so each contract runs on every adapter."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REDIS_URL = os.environ.get("ZEROCODE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


def redis_client_or_skip() -> Any:
    """A real Redis client; skip when Redis is absent unless ZEROCODE_REQUIRE_REDIS is set."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_timeout=2)
    try:
        client.ping()
    except redis.RedisError as exc:
        if os.environ.get("ZEROCODE_REQUIRE_REDIS"):
            raise RuntimeError(f"ZEROCODE_REQUIRE_REDIS is set but Redis at {REDIS_URL} "
                               f"does not answer: {exc}") from exc
        pytest.skip(f"no Redis at {REDIS_URL}")
    return client


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Any]:
    from zerocode.adapters.sqlite import SqliteDatabase

    db = SqliteDatabase(tmp_path / "zc.sqlite3")
    yield db
    db.close()


@pytest.fixture
def aws() -> Iterator[None]:
    """moto's in-process AWS with fake credentials; nothing leaves the machine."""
    from moto import mock_aws

    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_SESSION_TOKEN": "testing"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    from zerocode import wiring

    wiring._client.cache_clear()  # clients made under another mock must not be reused
    try:
        with mock_aws():
            yield
        wiring._client.cache_clear()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture(params=["sqlite", "dynamodb"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    from tests.integration.backends import dynamodb_backend, sqlite_backend

    if request.param == "sqlite":
        yield sqlite_backend(tmp_path)
    else:
        request.getfixturevalue("aws")
        yield dynamodb_backend()
