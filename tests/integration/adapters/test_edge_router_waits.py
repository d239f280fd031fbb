"""The edge router's DynamoDB client waits a bounded time (issue 42, point 4): against a
table that answers slowly, or throttles, the real boto3 client gives up after two short
attempts, so a key read before is served stale (stale if error) within the function's 5
seconds, and only a key never read is a 503."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from functions.edge_router.router import (
    CLIENT_CONFIG,
    PointerLookup,
    StoreUnavailable,
    TtlCache,
    table_client,
)


class Table:
    """A stand-in DynamoDB endpoint: answers GetItem with an item, slowly, or throttles."""

    def __init__(self) -> None:
        self.mode = "ok"  # ok | slow | throttle
        self.requests = 0
        table = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                table.requests += 1
                if table.mode == "slow":
                    time.sleep(3)  # past the client's 1-s read timeout
                body: dict[str, Any]
                if table.mode == "throttle":
                    body = {
                        "__type": "com.amazonaws.dynamodb.v20120810#"
                        "ProvisionedThroughputExceededException",
                        "message": "throttled",
                    }
                    status = 400
                else:
                    item = {"app_id": {"S": "app1"}, "build_id": {"S": "b1"}}
                    body, status = {"Item": item}, 200
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/x-amz-json-1.0")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting, as it should

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def table(monkeypatch: pytest.MonkeyPatch) -> Iterator[Table]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    served = Table()
    yield served
    served.server.shutdown()


def lookup(table: Table, clock: list[float]) -> PointerLookup:
    client = table_client("us-east-1", endpoint_url=table.url)
    return PointerLookup(
        client,
        "pointers",
        TtlCache(100, clock=lambda: clock[0]),
        ttl_seconds=30,
        negative_ttl_seconds=10,
    )


def test_the_client_is_bounded_as_configured(table: Table) -> None:
    config = table_client("us-east-1", endpoint_url=table.url).meta.config
    assert (config.connect_timeout, config.read_timeout) == (1, 1)
    assert config.retries == {"total_max_attempts": 2, "mode": "standard"}
    assert CLIENT_CONFIG["retries"] == config.retries


@pytest.mark.parametrize("trouble", ["slow", "throttle"])
def test_a_slow_or_throttled_table_is_given_up_on_and_stale_answers(
    table: Table, trouble: str
) -> None:
    clock = [0.0]
    routes = lookup(table, clock)
    assert routes.target("site:key1") == ("app1", "b1")  # read once, cached
    table.mode, table.requests = trouble, 0
    clock[0] = 60.0  # the entry has expired: the table is asked again
    assert routes.target("site:key1") == ("app1", "b1")  # stale if error
    assert table.requests == 2  # two attempts, not botocore's default of ten
    with pytest.raises(StoreUnavailable):
        routes.target("site:never-read")  # nothing to stand in: a 503
    assert table.requests == 4
