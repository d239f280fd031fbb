"""The app's files read once for a suite of checks (issue 40, point 3): every check of one
suite loads the same preview, so each file of its origin is fetched on the platform's side
once and later requests for it are answered from memory for the suite's life.

Only what cannot differ between two loads is kept: a GET of the app's own origin answered
200 with no cookie set, within :data:`MOST_BYTES` in all, and never the app's data API
(``/_api/``, whose answers change with every write). Anything else (a redirect, an error, a
POST, a cookie, the data API) is fetched each time, as before. The memory belongs to one suite of
one app (one origin, one build): it is never shared with another app and ends with the
suite. What reaches a page is what the platform-side fetch gave, confinement unchanged
(:class:`.chromium.Confinement` decides what may be fetched at all).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from playwright.async_api import APIResponse

DATA_API = "/_api/"  # the app's data and users (http/app_api.py): never kept
MOST_BYTES = 20_000_000  # a suite's memory of files; past it, files are fetched each time


@dataclass(frozen=True)
class Served:
    """One file as fetched: what ``route.fulfill`` is given."""

    status: int
    headers: dict[str, str]
    body: bytes


class ServedFiles:
    """One suite's memory of its app's files (see the module)."""

    def __init__(self, most: int = MOST_BYTES) -> None:
        self.most = most
        self.size = 0
        self.fetched = 0  # files fetched on the platform's side (tests, the benchmark)
        self._files: dict[str, asyncio.Future[Served | None]] = {}

    async def get(
        self, method: str, target: str, fetch: Callable[[], Awaitable[APIResponse | None]]
    ) -> Served | APIResponse | None:
        """``target`` from memory, else ``fetch()``ed (once, when concurrent requests ask for
        the same file) and kept if it may be; an APIResponse when it is not kept."""
        if method != "GET" or urlsplit(target).path.startswith(DATA_API):
            self.fetched += 1
            return await fetch()
        found = self._files.get(target)
        if found is not None:
            served = await asyncio.shield(found)
            if served is not None:
                return served
            self.fetched += 1
            return await fetch()
        future: asyncio.Future[Served | None] = asyncio.get_running_loop().create_future()
        self._files[target] = future
        try:
            self.fetched += 1
            response = await fetch()
            served = await self._keep(response)
        except BaseException:
            del self._files[target]  # the next request fetches it again
            future.set_result(None)
            raise
        future.set_result(served)
        if served is None:
            del self._files[target]
            return response
        return served

    async def _keep(self, response: APIResponse | None) -> Served | None:
        if response is None or response.status != 200:
            return None
        headers = response.headers
        if "set-cookie" in {name.lower() for name in headers}:
            return None
        body = await response.body()
        if self.size + len(body) > self.most:
            return None
        self.size += len(body)
        return Served(response.status, dict(headers), body)
