"""Lambda@Edge origin-request router: a public key → its build, from the pointer table.

The sites distribution's viewer-request CloudFront Function (``infra/functions/
site_router.js``) checks the request (host or path, traversal) and resolves what it can
from its KeyValueStore, the hot set: a hit is rewritten at once to the immutable
``/builds/{appId}/{buildId}/…``. A key the store does not hold is rewritten to
``/_edge/{site|preview}/{key}/{path}`` (``path`` already resolved to a file: a directory's
``index.html``, an SPA route's ``index.html``) and reaches this function only when
CloudFront's cache misses. Here the key is looked up in the DynamoDB pointer table (the
source of truth, ``zerocode.adapters.dynamodb.pointers``) through an in-memory cache that
lives as long as the execution environment:

- a hit younger than ``ttl_seconds`` answers without a read;
- an absent key is remembered for ``negative_ttl_seconds`` (a new site appears within it);
- at most ``max_entries`` keys are held, least recently used evicted first;
- if the table cannot be read, an expired entry is served rather than an error (stale if
  error); with nothing to serve the answer is a 503 that CloudFront does not cache.

So a publish or a rollback (one write of the pointer's item) is visible here within
``ttl_seconds``, and to visitors within that plus CloudFront's own cache time for
``/_edge/`` objects (docs/operations.md, "Routing a million sites").

Lambda@Edge has no environment variables and no layers: the function is this one file and
``config.json`` beside it, written at synth (``infra/zerocode_infra/hosting.py``). It uses
the standard library and boto3 (in the Lambda runtime) only.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote

# An SPA route as the viewer sends it (no file's path: "_api/" is refused there), and what a
# prerendered deploy serves for a route it has no page for (issue 44; site_router.js).
ROUTE_MARK = "_api/route/"
SHELL = ".shell.html"
ROUTES_MOST = 10_000  # builds' route lists held (they never change: no expiry)
EDGE_PREFIX = "/_edge/"
BUILDS_PREFIX = "/builds/"
NAMESPACES = {"site": "site:", "preview": "preview:"}
_EDGE = re.compile(r"^/_edge/(site|preview)/([A-Za-z0-9_-]{8,64})/(.*)$")
_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SEGMENT_BAD = {"", ".", ".."}
NEGATIVE_MAX_AGE = 10  # what CloudFront may keep a 404 for


class ItemReader(Protocol):
    """What the router needs of a DynamoDB client: boto3's ``get_item``, or a stand-in."""

    def get_item(self, **kwargs: Any) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Config:
    table: str
    region: str
    ttl_seconds: float = 30.0
    negative_ttl_seconds: float = 10.0
    max_entries: int = 100_000
    # Regions holding a replica of the table (a global table); the function reads the one
    # of the region it runs in (Lambda@Edge runs in the regional edge cache's region), else
    # the table's own region.
    replicas: tuple[str, ...] = ()

    def read_region(self, running_in: str | None) -> str:
        return running_in if running_in and running_in in self.replicas else self.region

    @classmethod
    def load(cls, path: Path) -> Config:
        raw = json.loads(path.read_text())
        return cls(
            table=str(raw["table"]),
            region=str(raw["region"]),
            ttl_seconds=float(raw.get("ttl_seconds", cls.ttl_seconds)),
            negative_ttl_seconds=float(raw.get("negative_ttl_seconds", cls.negative_ttl_seconds)),
            max_entries=int(raw.get("max_entries", cls.max_entries)),
            replicas=tuple(str(r) for r in raw.get("replicas", ())),
        )


Target = tuple[str, str]  # (appId, buildId)


class TtlCache:
    """A bounded LRU of pointer → target (None: known absent), each entry with its expiry.
    Expired entries stay until evicted, so a failing table can be answered from them."""

    def __init__(self, max_entries: int, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[str, tuple[float, Target | None]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, pointer: str) -> tuple[bool, Target | None, bool]:
        """(found, target, fresh)."""
        entry = self._entries.get(pointer)
        if entry is None:
            return False, None, False
        self._entries.move_to_end(pointer)
        expires, target = entry
        return True, target, self.clock() < expires

    def put(self, pointer: str, target: Target | None, ttl: float) -> None:
        self._entries[pointer] = (self.clock() + ttl, target)
        self._entries.move_to_end(pointer)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


class StoreUnavailable(Exception):
    """The pointer table could not be read and nothing cached can stand in."""


class PointerLookup:
    """pointer → target through the cache, reading the table only on a miss or expiry."""

    def __init__(
        self,
        reader: ItemReader,
        table: str,
        cache: TtlCache,
        *,
        ttl_seconds: float,
        negative_ttl_seconds: float,
    ) -> None:
        self.reader = reader
        self.table = table
        self.cache = cache
        self.ttl = ttl_seconds
        self.negative_ttl = negative_ttl_seconds
        self.reads = 0  # table reads made (what DynamoDB bills)
        self.routes: OrderedDict[str, frozenset[str] | None] = OrderedDict()

    def target(self, pointer: str) -> Target | None:
        found, cached, fresh = self.cache.get(pointer)
        if found and fresh:
            return cached
        try:
            target = self._read(pointer)
        except Exception as exc:  # throttled, unreachable, timed out
            if found:
                return cached  # stale if error
            raise StoreUnavailable(pointer) from exc
        self.cache.put(pointer, target, self.ttl if target else self.negative_ttl)
        return target

    def _read(self, pointer: str) -> Target | None:
        self.reads += 1
        answer = self.reader.get_item(
            TableName=self.table,
            Key={"pointer": {"S": pointer}},
            ProjectionExpression="app_id, build_id",
        )
        item = answer.get("Item")
        if not item:
            return None
        app_id = str(item.get("app_id", {}).get("S", ""))
        build_id = str(item.get("build_id", {}).get("S", ""))
        if not _ID.match(app_id) or not _ID.match(build_id):
            return None  # a value that names no build serves nothing
        return app_id, build_id

    def route_file(self, target: Target, route: str) -> str:
        """The file for an SPA route of the build ``target``: its prerendered page when the
        build's routes item lists it, the shell when the build has one but not this route,
        else ``index.html`` (a preview, an html site, a build from before prerendering; or a
        table that cannot be read: the app's page routes in the browser). A build's routes
        never change, so they are kept without expiry (at most :data:`ROUTES_MOST`)."""
        key = f"routes:{target[0]}/{target[1]}"
        if key not in self.routes:
            try:
                self.reads += 1
                answer = self.reader.get_item(
                    TableName=self.table,
                    Key={"pointer": {"S": key}},
                    ProjectionExpression="#r",
                    ExpressionAttributeNames={"#r": "routes"},
                )
            except Exception:
                return "index.html"
            item = answer.get("Item")
            names = str(item.get("routes", {}).get("S", "")) if item else None
            self.routes[key] = frozenset(names.split(" ")) if names else None
            while len(self.routes) > ROUTES_MOST:
                self.routes.popitem(last=False)
        listed = self.routes[key]
        if listed is None:
            return "index.html"
        return f"{route}/index.html" if unquote(route) in listed else SHELL


def _safe(rest: str) -> bool:
    """The viewer function already refused traversal; checked again here, on the
    percent-decoded path (so ``%2e%2e`` and ``%2f`` count like their characters)."""
    try:
        decoded = unquote(rest, errors="strict")
    except UnicodeDecodeError:
        return False
    if "\\" in decoded:
        return False
    return all(s not in _SEGMENT_BAD for s in decoded.split("/"))


def _response(status: int, description: str, cache_control: str) -> dict[str, Any]:
    return {
        "status": str(status),
        "statusDescription": description,
        "headers": {
            "content-type": [{"key": "Content-Type", "value": "text/plain"}],
            "cache-control": [{"key": "Cache-Control", "value": cache_control}],
        },
        "body": description.lower(),
    }


def not_found() -> dict[str, Any]:
    return _response(404, "Not Found", f"max-age={NEGATIVE_MAX_AGE}")


def unavailable() -> dict[str, Any]:
    return _response(503, "Service Unavailable", "no-store")


def route(request: dict[str, Any], lookup: PointerLookup) -> dict[str, Any]:
    """The origin request for ``request``: rewritten to its build, or a response."""
    uri = str(request.get("uri", ""))
    if uri.startswith(BUILDS_PREFIX):
        return request  # resolved at the viewer from the KeyValueStore (the hot set)
    m = _EDGE.match(uri)
    if not m or not _safe(m.group(3)):
        return not_found()
    kind, key, rest = m.groups()
    try:
        target = lookup.target(NAMESPACES[kind] + key)
    except StoreUnavailable:
        return unavailable()
    if target is None:
        return not_found()
    if rest.startswith(ROUTE_MARK):
        rest = lookup.route_file(target, rest.removeprefix(ROUTE_MARK))
    request["uri"] = f"{BUILDS_PREFIX}{target[0]}/{target[1]}/{rest}"
    return request


_LOOKUP: PointerLookup | None = None

# The function has 5 seconds (Lambda@Edge's origin-request limit here). botocore's defaults
# (up to 10 attempts in legacy mode, 60 s timeouts) would spend them all on one slow or
# throttled read, and the visitor would get a 503 before stale-if-error could answer: two
# attempts, each bounded to a second to connect and a second to read, leave the rest for
# the cached answer.
CLIENT_CONFIG = {
    "connect_timeout": 1,
    "read_timeout": 1,
    "retries": {"total_max_attempts": 2, "mode": "standard"},
}


def table_client(region: str, **extra: Any) -> Any:
    """The DynamoDB client of the router, its waits bounded (``CLIENT_CONFIG``)."""
    import boto3  # in the Lambda runtime; imported here so tests need no AWS
    from botocore.config import Config as ClientConfig

    return boto3.client(
        "dynamodb", region_name=region, config=ClientConfig(**CLIENT_CONFIG), **extra
    )


def _lookup() -> PointerLookup:
    """One per execution environment: built on the first request, then reused."""
    global _LOOKUP
    if _LOOKUP is None:
        config = Config.load(Path(__file__).with_name("config.json"))
        region = config.read_region(os.environ.get("AWS_REGION"))
        _LOOKUP = PointerLookup(
            table_client(region),
            config.table,
            TtlCache(config.max_entries),
            ttl_seconds=config.ttl_seconds,
            negative_ttl_seconds=config.negative_ttl_seconds,
        )
    return _LOOKUP


def handler(event: dict[str, Any], context: object) -> dict[str, Any]:
    request: dict[str, Any] = event["Records"][0]["cf"]["request"]
    return route(request, _lookup())
