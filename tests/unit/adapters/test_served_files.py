"""A suite's memory of its app's files (adapters/local/served_files.py): a file is fetched
once for the suite; the data API, a POST, a cookie or an error are fetched every time."""

from __future__ import annotations

import asyncio
from typing import Any

from zerocode.adapters.local.served_files import Served, ServedFiles

ORIGIN = "http://p-abcdefgh.localhost:8001"


class Answer:
    """What route.fetch gives, as far as ServedFiles reads it."""

    def __init__(
        self, body: bytes, status: int = 200, headers: dict[str, str] | None = None
    ) -> None:
        self.status, self.headers, self._body = status, headers or {}, body

    async def body(self) -> bytes:
        return self._body


def fetched_times(method: str, path: str, answer: Answer, times: int = 3) -> int:
    files, calls = ServedFiles(), []

    async def fetch() -> Any:
        calls.append(path)
        return answer

    async def run() -> None:
        for _ in range(times):
            got = await files.get(method, ORIGIN + path, fetch)
            assert got is not None
            body = got.body if isinstance(got, Served) else await got.body()
            assert body == answer._body

    asyncio.run(run())
    return len(calls)


def test_a_file_is_fetched_once_for_the_suite() -> None:
    assert fetched_times("GET", "/assets/index.js", Answer(b"js")) == 1


def test_the_data_api_is_fetched_every_time() -> None:
    page = Answer(b'{"records": []}', headers={"cache-control": "no-store"})
    assert fetched_times("GET", "/_api/data/entries?sort=-createdAt", page) == 3
    assert fetched_times("GET", "/_api/auth/me", Answer(b'{"user": null}')) == 3


def test_a_post_a_cookie_or_an_error_is_fetched_every_time() -> None:
    assert fetched_times("POST", "/form", Answer(b"ok")) == 3
    assert fetched_times("GET", "/x", Answer(b"ok", headers={"set-cookie": "a=b"})) == 3
    assert fetched_times("GET", "/missing", Answer(b"no", status=404)) == 3
