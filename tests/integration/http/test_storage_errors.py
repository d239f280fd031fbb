"""Storage that refuses a write answers 503 ``storage_unavailable`` (issue 29), with
Retry-After when it passes by itself, a message a user can act on, and nothing stored; a
bug still answers 500 ``internal``. The app store is made to refuse as each store would."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.integration.http.conftest import Api, error_code
from zerocode.adapters.sqlite.apps import SqliteAppStore
from zerocode.bootstrap import wiring
from zerocode.bootstrap.settings import Settings
from zerocode.http.app import create_app


@pytest.fixture
def api(settings: Settings) -> Iterator[Api]:
    """The API as a client sees it: a handled error is its response, not a raise."""
    platform = wiring.platform(settings)
    with TestClient(create_app(platform), raise_server_exceptions=False) as client:
        yield Api(platform, client)


class ClientError(Exception):
    def __init__(self, code: str, status: int) -> None:
        super().__init__(code)
        self.response = {
            "Error": {"Code": code},
            "ResponseMetadata": {"HTTPStatusCode": status},
        }


def full_sqlite() -> sqlite3.Error:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = 13
    return exc


@pytest.mark.parametrize(
    ("failure", "retry_after", "says"),
    [
        (OSError(errno.ENOSPC, "No space left on device"), None, "storage is full"),
        (full_sqlite(), None, "storage is full"),
        (OSError(errno.EROFS, "Read-only file system"), None, "read-only"),
        (ClientError("ProvisionedThroughputExceededException", 400), "5", "busy"),
        (ClientError("InternalError", 500), "10", "not answering"),
    ],
)
def test_a_refused_write_is_503_storage_unavailable_and_stores_nothing(
    api: Api,
    monkeypatch: pytest.MonkeyPatch,
    failure: Exception,
    retry_after: str | None,
    says: str,
) -> None:
    user = api.user()
    before = api.client.get("/api/apps/mine", headers=user).json()

    def refuse(*_: Any, **__: Any) -> None:
        raise failure

    monkeypatch.setattr(SqliteAppStore, "put", refuse)
    created = api.client.post("/api/apps", headers=user, json={"initPrompt": "A page"})
    assert created.status_code == 503, created.text
    assert error_code(created) == "storage_unavailable"
    message = created.json()["error"]["message"]
    assert says in message and "what was saved before is kept" in message
    assert "Errno" not in message and "/" not in message.replace("freed", "")  # no paths
    assert created.headers.get("Retry-After") == retry_after
    monkeypatch.undo()
    assert api.client.get("/api/apps/mine", headers=user).json() == before


def test_a_bug_is_still_a_500(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    user = api.user()

    def broken(*_: Any, **__: Any) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(SqliteAppStore, "put", broken)
    created = api.client.post("/api/apps", headers=user, json={"initPrompt": "A page"})
    assert created.status_code == 500 and error_code(created) == "internal"
