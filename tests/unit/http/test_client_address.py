"""The client address the front door counts: the gateway's sourceIp where the gateway is
believed, else the socket peer; never a header the client writes."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from starlette.requests import Request

from zerocode.gateway import REQUEST_CONTEXT
from zerocode.http.deps import client_address, gateway_source_ip


def request(headers: dict[str, str], peer: str | None, *, behind_gateway: bool) -> Request:
    claims = (lambda claims, token: None) if behind_gateway else None
    platform = SimpleNamespace(gateway_claims=claims)
    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/api/users/login",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": (peer, 50000) if peer else None,
        "app": SimpleNamespace(state=SimpleNamespace(platform=platform)),
    }
    return Request(scope)


REST = json.dumps({"identity": {"sourceIp": "203.0.113.7"}, "authorizer": {"claims": {}}})
HTTP_API = json.dumps({"http": {"sourceIp": "198.51.100.4", "method": "POST"}})


def test_behind_the_gateway_the_source_ip_it_saw() -> None:
    for context, source_ip in ((REST, "203.0.113.7"), (HTTP_API, "198.51.100.4")):
        believed = request({REQUEST_CONTEXT: context}, "127.0.0.1", behind_gateway=True)
        assert client_address(believed) == source_ip


def test_elsewhere_the_header_is_ignored_and_the_peer_counts() -> None:
    forged = {REQUEST_CONTEXT: REST, "X-Forwarded-For": "192.0.2.1"}
    assert client_address(request(forged, "10.1.2.3", behind_gateway=False)) == "10.1.2.3"
    assert client_address(request({}, None, behind_gateway=False)) is None


def test_without_a_usable_context_the_peer_counts() -> None:
    unreadable = request({REQUEST_CONTEXT: "not json"}, "10.1.2.3", behind_gateway=True)
    assert client_address(unreadable) == "10.1.2.3"
    assert client_address(request({}, "10.1.2.3", behind_gateway=True)) == "10.1.2.3"


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "[]",
        '{"identity": "x"}',
        '{"identity": {"sourceIp": 7}}',
        '{"identity": {"sourceIp": ""}}',
        json.dumps({"identity": {"sourceIp": "x" * 65}}),
    ],
)
def test_malformed_contexts_have_no_source_ip(raw: str | None) -> None:
    assert gateway_source_ip(raw) is None
